package chat_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestTheModelIsBoundedPerConversationAndPerVisitor: a visitor holding the page's public key cannot have the model
// answer without end. Each answer of the fake provider takes 120 tokens; past the plan's answers or tokens of one
// conversation, its next message is refused with chat.ErrConversationLimit and a new conversation goes on; past
// the plan's answers or tokens of one visitor's day, with chat.ErrVisitorLimit, whichever conversation, while
// another visitor goes on.
func TestTheModelIsBoundedPerConversationAndPerVisitor(t *testing.T) {
	const perAnswer = fakellm.PromptTokens + fakellm.CompletionTokens
	for _, tc := range []struct {
		name string
		plan tenant.Plan
		// answered is how many messages of one conversation are answered before want refuses the next.
		answered int
		want     error
	}{
		{"answers per conversation", tenant.Plan{TurnsPerConversation: 3}, 3, chat.ErrConversationLimit},
		{"tokens per conversation", tenant.Plan{TokensPerConversation: 2*perAnswer + 1}, 3, chat.ErrConversationLimit},
		{"answers per visitor", tenant.Plan{TurnsPerVisitorPerDay: 4}, 4, chat.ErrVisitorLimit},
		{"tokens per visitor", tenant.Plan{TokensPerVisitorPerDay: 2 * perAnswer}, 2, chat.ErrVisitorLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			provider := fakellm.New(t, "We ship worldwide.")
			responder, err := llm.New(llm.Config{BaseURL: provider.URL(), Model: "m", Timeout: 5 * time.Second, MaxTokens: 100,
				ContextItems: 3, HistoryTokens: 500, Offline: assistant.Retrieval{}, Logger: slog.New(slog.DiscardHandler),
				Registry: prometheus.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			svc, err := chat.New(chat.Config{Store: f.store, Responder: responder, Now: func() time.Time { return f.now }})
			if err != nil {
				t.Fatal(err)
			}
			m := merchant(0)
			m.Plan = tc.plan
			ask := func(visitor, conversation string) (chat.Reply, error) {
				return svc.Answer(t.Context(), m, chat.Question{Message: "Where do you ship?", VisitorID: visitor,
					ConversationID: conversation, VisitorOnly: true})
			}
			first, err := ask("v1", "")
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < tc.answered; i++ {
				if _, err := ask("v1", first.ConversationID); err != nil {
					t.Fatalf("message %d: %v", i+1, err)
				}
			}
			if _, err := ask("v1", first.ConversationID); !errors.Is(err, tc.want) {
				t.Fatalf("the message past the bound: %v; want %v", err, tc.want)
			}
			// A new conversation of the same visitor goes on past a conversation's bound, not past the visitor's.
			perVisitor := errors.Is(tc.want, chat.ErrVisitorLimit)
			asked := tc.answered + 1 // and another visitor's
			switch _, err := ask("v1", ""); {
			case perVisitor && !errors.Is(err, chat.ErrVisitorLimit):
				t.Errorf("the visitor's new conversation after its day's bound: %v; want %v", err, chat.ErrVisitorLimit)
			case !perVisitor && err != nil:
				t.Errorf("a new conversation after the bound of one: %v", err)
			case !perVisitor:
				asked++
			}
			if _, err := ask("v2", ""); err != nil {
				t.Errorf("another visitor: %v", err)
			}
			if n := len(provider.Requests()); n != asked {
				t.Errorf("the model was asked %d times; want %d", n, asked)
			}
		})
	}
}
