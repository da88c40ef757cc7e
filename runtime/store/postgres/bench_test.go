//go:build integration

package postgres_test

import (
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// BenchmarkRecordExchange measures the chat path's write on the package's throwaway PostgreSQL, the parallel part
// on the pool's connections:
//
//	go test ./runtime/store/postgres -run '^$' -bench RecordExchange -count 6 | benchstat -
func BenchmarkRecordExchange(b *testing.B) {
	storetest.BenchmarkRecordExchange(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(b.Context(), server.Database(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// BenchmarkConversationTail measures the read of a chat turn in a long conversation.
func BenchmarkConversationTail(b *testing.B) {
	storetest.BenchmarkConversationTail(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(b.Context(), server.Database(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
