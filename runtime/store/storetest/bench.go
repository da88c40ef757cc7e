package storetest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
)

// BenchmarkRecordExchange measures the chat path's write as the runtime makes it, a new conversation with both
// messages and three citations, from one caller (serial) and from 16 per CPU at once (parallel, where a store
// can share commits or connections). open must return a new, empty store, closed when b ends.
func BenchmarkRecordExchange(b *testing.B, open func(b *testing.B) store.Store) {
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			s := open(b)
			now := time.Now().UTC().Truncate(time.Millisecond)
			var cited []store.Source
			for i := range 100 {
				k := store.Knowledge{ID: fmt.Sprintf("kn_%03d", i), MerchantID: "m1", Title: fmt.Sprintf("Item %d", i),
					Content: strings.Repeat("Orders to Canada arrive in 5 to 10 business days. ", 12), CreatedAt: now, UpdatedAt: now}
				if err := chat.CreateKnowledge(b.Context(), s, k, 0); err != nil {
					b.Fatal(err)
				}
				if i%40 == 0 {
					cited = append(cited, store.Source{KnowledgeID: k.ID, Title: k.Title, URL: "https://shop.example/help",
						Snippet: "Orders to Canada arrive in 5 to 10 business days.", Score: 7.5})
				}
			}
			var n atomic.Int64
			write := func() {
				at := now.Add(time.Duration(n.Add(1)) * time.Millisecond)
				ex := store.Exchange{MerchantID: "m1", ConversationID: ids.New("conv_"), NewConversation: true, VisitorID: "v1",
					MonthlyLimit: 1 << 30,
					Question: store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: "How long does shipping to Canada take?",
						CreatedAt: at, Answered: true},
					Answer: store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: "Orders to Canada arrive in 5 to 10 business days.",
						CreatedAt: at, Answered: true, Sources: cited}}
				if _, err := chat.RecordExchange(b.Context(), s, ex); err != nil {
					b.Error(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			if !parallel {
				for b.Loop() {
					write()
				}
				return
			}
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					write()
				}
			})
		})
	}
}
