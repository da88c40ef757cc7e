// Package rowdump reads a store's rows past the store, each row as one line "table|value|value|…|", for the tests
// that look for what is left of something in any table, a table added later included.
package rowdump

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SQLite returns, sorted, every row of every table of db, or, for a merchantID, the merchant's rows of the tables
// with a merchant_id column.
func SQLite(t testing.TB, db *sql.DB, merchantID string) []string {
	t.Helper()
	tables, where, args := SQLiteTables(t, db), "", []any(nil)
	if merchantID != "" {
		tables, where, args = SQLiteMerchantTables(t, db), ` WHERE merchant_id = ?`, []any{merchantID}
	}
	var out []string
	for _, table := range tables {
		//nolint:gosec // the table names are the database's own, read from its catalogue
		rows, err := db.QueryContext(t.Context(), `SELECT * FROM "`+table+`"`+where, args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, line(table, vals, nil))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		_ = rows.Close()
	}
	slices.Sort(out)
	return out
}

// SQLiteTables returns the names of db's tables, sorted.
func SQLiteTables(t testing.TB, db *sql.DB) []string {
	t.Helper()
	return sqliteNames(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
}

// SQLiteMerchantTables returns the names of db's tables with a merchant_id column, sorted.
func SQLiteMerchantTables(t testing.TB, db *sql.DB) []string {
	t.Helper()
	return sqliteNames(t, db, `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' AND c.name = 'merchant_id' ORDER BY m.name`)
}

// sqliteNames runs a query of one text column and returns its rows.
func sqliteNames(t testing.TB, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// Postgres returns, sorted, the merchant's rows of the tables of the current schema with a merchant_id column.
// Times are written in UTC, whatever the session's time zone.
func Postgres(t testing.TB, conn *pgx.Conn, merchantID string) []string {
	t.Helper()
	var out []string
	for _, table := range PostgresMerchantTables(t, conn) {
		rows, err := conn.Query(t.Context(), `SELECT * FROM `+pgx.Identifier{table}.Sanitize()+` WHERE merchant_id = $1`, merchantID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, line(table, vals, func(v any) any {
				if x, ok := v.(time.Time); ok {
					return x.UTC().Format(time.RFC3339Nano)
				}
				return v
			}))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// PostgresMerchantTables returns the names of the tables of the current schema with a merchant_id column, sorted.
func PostgresMerchantTables(t testing.TB, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT table_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name = 'merchant_id' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

// line writes a row of table as "table|value|value|…|", with bytes as text and each value through format first,
// when given.
func line(table string, vals []any, format func(any) any) string {
	var b strings.Builder
	b.WriteString(table + "|")
	for _, v := range vals {
		if bs, ok := v.([]byte); ok {
			v = string(bs)
		} else if format != nil {
			v = format(v)
		}
		fmt.Fprintf(&b, "%v|", v)
	}
	return b.String()
}
