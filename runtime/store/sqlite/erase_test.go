package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func TestDeletion(t *testing.T) {
	storetest.RunDeletion(t, func(t *testing.T) (store.Store, storetest.Dump) {
		path := filepath.Join(t.TempDir(), "parley.db")
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		db := openReadOnly(t, path)
		return s, func(t *testing.T, merchantID string) []string { return dump(t, db, merchantID) }
	})
}

// dump returns every row the merchant has in every table with a merchant_id column, as storetest.Dump says.
func dump(t *testing.T, db *sql.DB, merchantID string) []string {
	t.Helper()
	ctx := t.Context()
	tables, err := queryStrings(db, `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' AND c.name = 'merchant_id' ORDER BY m.name`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE merchant_id = ?`, merchantID)
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
			var b strings.Builder
			b.WriteString(table + "|")
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			out = append(out, b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		_ = rows.Close()
	}
	slices.Sort(out)
	return out
}

func queryStrings(db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
