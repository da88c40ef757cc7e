package chat_test

import (
	"fmt"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// BenchmarkAnswerContinuedByVisitor measures a browser's turn in a conversation of its own, on a merchant with a
// day of 2,000 other visitors' conversations, at the plan's default bounds: each visitor has its 200 answers of a
// day in conversations of 50, so the reads of the bounds per conversation and per visitor sum up to 100 and 200
// messages, their most.
//
//	go test ./runtime/chat/ -run '^$' -bench BenchmarkAnswerContinuedByVisitor -benchtime 2000x
func BenchmarkAnswerContinuedByVisitor(b *testing.B) {
	f := newFixture(b)
	m := merchant(0)
	for i := range 2000 {
		ex := store.Exchange{MerchantID: m.MerchantID, ConversationID: fmt.Sprint("other-", i), NewConversation: true,
			VisitorID: fmt.Sprint("v-", i),
			Question:  store.Message{ID: fmt.Sprint("q", i), Role: store.RoleVisitor, Text: "hello", CreatedAt: f.now, Answered: true},
			Answer:    store.Message{ID: fmt.Sprint("a", i), Role: store.RoleAssistant, Text: "hi", CreatedAt: f.now}}
		if _, err := chat.RecordExchange(b.Context(), f.store, ex); err != nil {
			b.Fatal(err)
		}
	}
	var conversation string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		visitor := fmt.Sprint("me-", i/tenant.DefaultTurnsPerVisitorPerDay)
		if i%tenant.DefaultTurnsPerConversation == 0 {
			conversation = ""
		}
		r, err := f.svc.Answer(b.Context(), m, chat.Question{Message: "Do you ship to Norway?", VisitorID: visitor,
			VisitorOnly: true, ConversationID: conversation})
		if err != nil {
			b.Fatal(err)
		}
		conversation = r.ConversationID
	}
}
