package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// BenchmarkRecordExchange measures the chat path's write on a new database file, the parallel part sharing
// commits:
//
//	go test ./runtime/store/sqlite -run '^$' -bench RecordExchange -count 6 | benchstat -
func BenchmarkRecordExchange(b *testing.B) {
	storetest.BenchmarkRecordExchange(b, func(b *testing.B) store.Store {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// BenchmarkConversationTail measures the read of a chat turn in a long conversation:
//
//	go test ./runtime/store/sqlite -run '^$' -bench ConversationTail -count 6 | benchstat -
func BenchmarkConversationTail(b *testing.B) {
	storetest.BenchmarkConversationTail(b, func(b *testing.B) store.Store {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
