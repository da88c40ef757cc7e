package chat_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/chat"
)

// TestPreviewTokensAreTheMerchants: the dashboard's live preview asks the model on the merchant's tokens, as a
// visitor's answer does: they are counted against the plan's monthlyTokens, and past it the preview answers
// offline without asking the model.
func TestPreviewTokensAreTheMerchants(t *testing.T) {
	f := newFixture(t)
	provider := fakellm.New(t, "We ship worldwide [1].")
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
	m.Plan.MonthlyTokens = fakellm.PromptTokens + fakellm.CompletionTokens // one answer's worth

	if _, err := svc.Preview(t.Context(), m, "Where do you ship?"); err != nil {
		t.Fatal(err)
	}
	used, err := f.store.TokensThisMonth(t.Context(), m.MerchantID, f.now)
	if err != nil || used != m.Plan.MonthlyTokens {
		t.Fatalf("tokens counted after a preview: %d, %v; want %d", used, err, m.Plan.MonthlyTokens)
	}
	if _, err := svc.Preview(t.Context(), m, "Where do you ship?"); err != nil {
		t.Fatal(err)
	}
	if n := len(provider.Requests()); n != 1 {
		t.Errorf("the model was asked %d times; want once, the second preview past the plan's tokens answered offline", n)
	}
}
