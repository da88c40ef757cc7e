package chat_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

func TestFlowsSQLite(t *testing.T) {
	runFlows(t, func(t *testing.T) store.Store {
		s, _ := openSQLite(t)
		return s
	})
}

func TestDeletionSQLite(t *testing.T) { runDeletion(t, openSQLite) }

func TestSubjectSQLite(t *testing.T) { runSubject(t, openSQLite) }

func TestRetentionSQLite(t *testing.T) { runRetention(t, openSQLite) }

// BenchmarkSweepUnderChatSQLite measures chat's p99 while the retention sweep deletes 1,000,000 old messages:
//
//	go test ./runtime/chat -run '^$' -bench SweepUnderChatSQLite -benchtime 1x -timeout 30m
func BenchmarkSweepUnderChatSQLite(b *testing.B) {
	sweepUnderChat(b, func(b *testing.B) store.Store {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// openSQLite opens a new, empty SQLite store and the dump of its rows, read past the store.
func openSQLite(t *testing.T) (store.Store, dump) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return s, func(t *testing.T, merchantID string) []string { return dumpSQLite(t, db, merchantID) }
}

// dumpSQLite returns every row the merchant has in every table with a merchant_id column, as dump says.
func dumpSQLite(t *testing.T, db *sql.DB, merchantID string) []string {
	t.Helper()
	ctx := t.Context()
	rows, err := db.QueryContext(ctx, `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' AND c.name = 'merchant_id' ORDER BY m.name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, table)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	_ = rows.Close()
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
