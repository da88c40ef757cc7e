package chat_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/rowdump"
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
	return s, func(t *testing.T, merchantID string) []string { return rowdump.SQLite(t, db, merchantID) }
}
