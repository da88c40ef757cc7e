package sqlite_test

import (
	"context"
	"fmt"
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

// BenchmarkStaleCheckRead measures the embedder's read of one merchant's stored vectors at start, 100 items of
// 512 dimensions: the vectors whole, and the stamps alone that the check needs:
//
//	go test ./runtime/store/sqlite -run '^$' -bench StaleCheckRead -benchmem -count 6 | benchstat -
func BenchmarkStaleCheckRead(b *testing.B) {
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	ctx := b.Context()
	for i := range 100 {
		id := fmt.Sprintf("k%03d", i)
		if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: id, MerchantID: "m1", Title: "Item " + id, Content: "Text.",
			CreatedAt: at, UpdatedAt: at}); err != nil {
			b.Fatal(err)
		}
		v := store.KnowledgeVector{KnowledgeID: id, Model: "m@512", TextHash: id, Vector: make([]float32, 512)}
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.ReplaceKnowledgeVectors(ctx, "m1", id, []store.KnowledgeVector{v}) }); err != nil {
			b.Fatal(err)
		}
	}
	for name, read := range map[string]func(context.Context, string) ([]store.KnowledgeVector, error){
		"vectors": s.KnowledgeVectors, "stamps": s.KnowledgeVectorStamps} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if vs, err := read(ctx, "m1"); err != nil || len(vs) != 100 {
					b.Fatalf("%d vectors (%v)", len(vs), err)
				}
			}
		})
	}
}
