package storetest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
)

// BenchmarkRecordExchange measures the chat path's write in the store's statements (WriteExchange): a new
// conversation with both messages and three citations, from one caller (serial) and from 16 per CPU at once
// (parallel, where a store can share commits or connections); and, from 16 per CPU at once, the next exchange
// of one of 256 conversations (continued), the commonest write of a store in use. open must return a new, empty
// store, closed when b ends.
func BenchmarkRecordExchange(b *testing.B, open func(b *testing.B) store.Store) {
	for _, run := range []string{"serial", "parallel", "continued"} {
		b.Run(run, func(b *testing.B) {
			s := open(b)
			now := time.Now().UTC().Truncate(time.Millisecond)
			var cited []store.Source
			for i := range 100 {
				k := store.Knowledge{ID: fmt.Sprintf("kn_%03d", i), MerchantID: "m1", Title: fmt.Sprintf("Item %d", i),
					Content: strings.Repeat("Orders to Canada arrive in 5 to 10 business days. ", 12), CreatedAt: now, UpdatedAt: now}
				if err := WriteKnowledge(b.Context(), s, k); err != nil {
					b.Fatal(err)
				}
				if i%40 == 0 {
					cited = append(cited, store.Source{KnowledgeID: k.ID, Title: k.Title, URL: "https://shop.example/help",
						Snippet: "Orders to Canada arrive in 5 to 10 business days.", Score: 7.5})
				}
			}
			var n atomic.Int64
			// exchange is the next exchange of a conversation, or of a new one ("").
			Exchange := func(conversationID string) store.Exchange {
				at := now.Add(time.Duration(n.Add(1)) * time.Millisecond)
				started := conversationID == ""
				if started {
					conversationID = ids.New("conv_")
				}
				return store.Exchange{MerchantID: "m1", ConversationID: conversationID, NewConversation: started, ConversationExists: !started,
					VisitorID: "v1", MonthlyLimit: 1 << 30,
					Question: store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: "How long does shipping to Canada take?",
						CreatedAt: at, Answered: true},
					Answer: store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: "Orders to Canada arrive in 5 to 10 business days.",
						CreatedAt: at, Answered: true, Sources: cited}}
			}
			write := func(ex store.Exchange) {
				if _, err := WriteExchange(b.Context(), s, ex); err != nil {
					b.Error(err)
				}
			}
			var conversations []string
			if run == "continued" {
				for range 256 {
					ex := Exchange("")
					write(ex)
					conversations = append(conversations, ex.ConversationID)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			if run == "serial" {
				for b.Loop() {
					write(Exchange(""))
				}
				return
			}
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if conversations == nil {
						write(Exchange(""))
						continue
					}
					write(Exchange(conversations[int(n.Load())%len(conversations)]))
				}
			})
		})
	}
}

// BenchmarkConversationTail measures the read a chat turn makes before answering in a conversation of 20, 1,000
// and 10,000 messages: the conversation and the latest messages the assistant hears. open must return a new,
// empty store, closed when b ends.
func BenchmarkConversationTail(b *testing.B, open func(b *testing.B) store.Store) {
	for _, size := range []int{20, 1000, 10000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			s := open(b)
			at := time.Now().UTC().Truncate(time.Millisecond)
			sources := []store.Source{{KnowledgeID: "kn_001", Title: "Shipping", URL: "https://shop.example/help",
				Snippet: "Orders to Canada arrive in 5 to 10 business days.", Score: 7.5}}
			for i := range size / 2 {
				at = at.Add(time.Second)
				ex := store.Exchange{MerchantID: "m1", ConversationID: "c1", NewConversation: i == 0, ConversationExists: i > 0,
					Question: store.Message{ID: ids.New("msg_"), Role: store.RoleVisitor, Text: "How long does shipping to Canada take?", CreatedAt: at, Answered: true},
					Answer: store.Message{ID: ids.New("msg_"), Role: store.RoleAssistant, Text: strings.Repeat("Orders to Canada arrive in 5 to 10 business days. ", 4),
						CreatedAt: at, Answered: true, Sources: sources}}
				if _, err := WriteExchange(b.Context(), s, ex); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, msgs, err := s.ConversationTail(b.Context(), "m1", "c1", 20); err != nil || len(msgs) != 20 {
					b.Fatalf("%d messages, %v", len(msgs), err)
				}
			}
		})
	}
}
