package chat_test

import (
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
