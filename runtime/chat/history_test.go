package chat_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// TestTheModelHearsTheConversation: the second message of a conversation reaches the model with the first
// exchange before it, and the stored answer is the model's with the cited item as its source.
func TestTheModelHearsTheConversation(t *testing.T) {
	f := newFixture(t)
	provider := fakellm.New(t, "It takes 5 to 8 business days [1].")
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
	ctx, m := t.Context(), merchant(0)
	k, err := svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Shipping to Canada",
		Content: "We ship to Canada with Canada Post. Delivery takes 5 to 8 business days."})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Canada?"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Answer(ctx, m, chat.Question{Message: "and how long does it take?", ConversationID: first.ConversationID})
	if err != nil {
		t.Fatal(err)
	}
	msgs := provider.Last(t).Body.Messages
	if len(msgs) != 4 || msgs[1].Content != "Do you ship to Canada?" || msgs[2].Role != "assistant" ||
		msgs[2].Content != first.Message.Text || msgs[3].Content != "and how long does it take?" {
		t.Fatalf("messages sent %+v", msgs)
	}
	if second.Message.Text != "It takes 5 to 8 business days [1]." || len(second.Message.Sources) != 1 ||
		second.Message.Sources[0].KnowledgeID != k.ID || second.Usage.PromptTokens != fakellm.PromptTokens {
		t.Errorf("reply %+v", second)
	}
	_, stored, err := f.store.GetConversation(ctx, m.MerchantID, first.ConversationID)
	if err != nil || len(stored) != 4 || stored[3].Text != second.Message.Text {
		t.Errorf("stored %+v, %v", stored, err)
	}
}

// TestPastTheMonthlyTokensTheOfflineAssistantAnswers: the answer that crosses the plan's model tokens is given
// whole and counted; the next ones come from the offline assistant without asking the model, until the month ends.
func TestPastTheMonthlyTokensTheOfflineAssistantAnswers(t *testing.T) {
	f := newFixture(t)
	provider := fakellm.New(t, "It takes 5 to 8 business days [1].")
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
	ctx, m := t.Context(), merchant(0)
	m.Plan.MonthlyTokens = fakellm.PromptTokens // one answer crosses it
	if _, err := svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Shipping to Canada",
		Content: "We ship to Canada with Canada Post. Delivery takes 5 to 8 business days."}); err != nil {
		t.Fatal(err)
	}
	ask := func() chat.Reply {
		t.Helper()
		r, err := svc.Answer(ctx, m, chat.Question{Message: "How long does delivery to Canada take?"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ask(); r.Message.Text != "It takes 5 to 8 business days [1]." {
		t.Fatalf("first answer %q", r.Message.Text)
	}
	if used, err := f.store.TokensThisMonth(ctx, m.MerchantID, f.now); err != nil || used != fakellm.PromptTokens+fakellm.CompletionTokens {
		t.Fatalf("tokens used %d, %v", used, err)
	}
	if r := ask(); r.Message.Text == "It takes 5 to 8 business days [1]." || !strings.Contains(r.Message.Text, "5 to 8 business days") ||
		r.Usage != (assistant.Usage{}) {
		t.Errorf("past the ceiling: %+v", r)
	}
	if n := len(provider.Requests()); n != 1 {
		t.Errorf("the model was asked %d times", n)
	}
	f.now = f.now.AddDate(0, 1, 0) // a new month
	if r := ask(); r.Message.Text != "It takes 5 to 8 business days [1]." {
		t.Errorf("next month: %q", r.Message.Text)
	}
}

// TestAFollowUpHearsTheLatestQuestion: in a conversation longer than the history the assistant hears, a follow-up
// is searched with the visitor's latest question, not an early one.
func TestAFollowUpHearsTheLatestQuestion(t *testing.T) {
	f := newFixture(t)
	ctx, m := t.Context(), merchant(0)
	if _, err := f.svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Gift cards",
		Content: "Gift cards are sold in the shop and online, from 10 to 200 euros."}); err != nil {
		t.Fatal(err)
	}
	canada, err := f.svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Shipping to Canada",
		Content: "We ship to Canada with Canada Post. Delivery takes 5 to 8 business days."})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Answer(ctx, m, chat.Question{Message: "Do you sell gift cards?"})
	if err != nil {
		t.Fatal(err)
	}
	for range 15 {
		if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "Do you sell gift cards?", ConversationID: r.ConversationID}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Canada?", ConversationID: r.ConversationID}); err != nil {
		t.Fatal(err)
	}
	r, err = f.svc.Answer(ctx, m, chat.Question{Message: "and how long does it take?", ConversationID: r.ConversationID})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Message.Sources) == 0 || r.Message.Sources[0].KnowledgeID != canada.ID {
		t.Errorf("the follow-up after 17 questions cited %+v, want %s first", r.Message.Sources, canada.ID)
	}
}

// TestAConversationHoldsAtMostItsMessages: a message that would take a conversation past
// chat.MaxConversationMessages is refused with chat.ErrConversationFull and stores nothing; a new conversation
// goes on.
func TestAConversationHoldsAtMostItsMessages(t *testing.T) {
	f := newFixture(t)
	ctx, m := t.Context(), merchant(0)
	m.Plan.TurnsPerConversation = chat.MaxConversationMessages / 2 // the plan's bound at its most
	// Written straight to the store, all but the last exchange the conversation holds.
	at := f.now
	for i := range chat.MaxConversationMessages/2 - 1 {
		ex := store.Exchange{MerchantID: m.MerchantID, ConversationID: "long", NewConversation: i == 0, ConversationExists: i > 0,
			Question: store.Message{ID: fmt.Sprint("q", i), Role: store.RoleVisitor, Text: "hello", CreatedAt: at, Answered: true},
			Answer:   store.Message{ID: fmt.Sprint("a", i), Role: store.RoleAssistant, Text: "hi", CreatedAt: at}}
		if _, err := chat.RecordExchange(ctx, f.store, ex); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "one more?", ConversationID: "long"}); err != nil {
		t.Fatalf("the conversation's last exchange: %v", err)
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "and another?", ConversationID: "long"}); !errors.Is(err, chat.ErrConversationFull) {
		t.Fatalf("past the conversation's messages: %v, want chat.ErrConversationFull", err)
	}
	c, msgs, err := f.store.GetConversation(ctx, m.MerchantID, "long")
	if err != nil || c.MessageCount != chat.MaxConversationMessages || len(msgs) != chat.MaxConversationMessages {
		t.Errorf("the full conversation: %d messages, %d counted, %v; want %d", len(msgs), c.MessageCount, err, chat.MaxConversationMessages)
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "and another?"}); err != nil {
		t.Errorf("a new conversation after the full one: %v", err)
	}
}
