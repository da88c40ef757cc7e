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

// BenchmarkSweepUnderChat measures chat's p99 while the retention sweep deletes 1,000,000 old messages, as the
// SQLite store's benchmark of the same name does:
//
//	go test -tags integration ./runtime/store/postgres -run '^$' -bench SweepUnderChat -benchtime 1x -timeout 30m
func BenchmarkSweepUnderChat(b *testing.B) {
	storetest.BenchmarkSweepUnderChat(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(b.Context(), server.Database(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
