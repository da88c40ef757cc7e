package dashboard_test

import (
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// newModelEnv is newEnv with the merchants answered by a model behind provider, which first answers nothing.
func newModelEnv(t *testing.T, provider *fakellm.Provider) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r, err := llm.New(llm.Config{BaseURL: provider.URL(), Model: "m", Timeout: 5 * time.Second, MaxTokens: 200,
		ContextItems: 3, HistoryTokens: 500, Offline: assistant.Retrieval{}, Logger: slog.New(slog.DiscardHandler),
		Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	provider.Set(func(p *fakellm.Provider) { p.Answer = []string{"NO_ANSWER"} })
	return newEnvAnswering(t, st, r)
}

// draftQuestion is the question the model drafts an answer for, and draftText the model's draft.
const (
	draftQuestion = "Can I change my delivery address?"
	draftText     = "Changing the delivery address\n\nWrite to us before your order ships, within [hours], and we change the address."
)

// The review queue offers a drafted answer when a model answers the merchant: the draft fills the add form,
// nothing is stored until the owner saves it, and a model that fails says so.
func TestDraftAnswerInDashboard(t *testing.T) {
	provider := fakellm.New(t)
	e := newModelEnv(t, provider)
	e.chat(t, "alpha", draftQuestion)
	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	if body := alpha.get("/dashboard/review").Body; !strings.Contains(body, `action="/dashboard/review/draft"`) {
		t.Fatalf("no draft button with a model:\n%s", body)
	}
	form := url.Values{"csrf": {alpha.csrf()}, "questions": {"can i change my delivery address"}}

	provider.Set(func(p *fakellm.Provider) { p.Answer = []string{draftText} })
	res := alpha.post("/dashboard/review/draft", form)
	body := html.UnescapeString(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `value="Changing the delivery address"`) ||
		!strings.Contains(body, "Write to us before your order ships, within [hours], and we change the address.</textarea>") ||
		!strings.Contains(body, ">"+draftQuestion+"</textarea>") || strings.Count(body, `id="k-title"`) != 1 {
		t.Fatalf("the drafted form: %d\n%s", res.StatusCode, body)
	}
	if items, err := e.store.AllKnowledge(t.Context(), "alpha"); err != nil || len(items) != 2 {
		t.Errorf("after the draft alpha has %d items (%v), want its 2: a draft is not stored", len(items), err)
	}
	// Beta's owner finds no such question in its own queue.
	beta := newClient(t, e.url)
	beta.signIn("beta@owners.example")
	if res := beta.post("/dashboard/review/draft", url.Values{"csrf": {beta.csrf()}, "questions": form["questions"]}); res.StatusCode != http.StatusNotFound {
		t.Errorf("beta drafting alpha's question: %d", res.StatusCode)
	}
	provider.Set(func(p *fakellm.Provider) { p.Status = http.StatusServiceUnavailable })
	if res := alpha.post("/dashboard/review/draft", form); res.StatusCode != http.StatusBadGateway ||
		!strings.Contains(res.Body, "Your model could not draft an answer. Try again.") {
		t.Errorf("a failing model: %d\n%s", res.StatusCode, res.Body)
	}

	// Without a model there is no button, and a draft asked anyway says why.
	plain := newEnv(t)
	plain.chat(t, "alpha", draftQuestion)
	owner := newClient(t, plain.url)
	owner.signIn("alpha@owners.example")
	if body := owner.get("/dashboard/review").Body; !strings.Contains(body, draftQuestion) || strings.Contains(body, "/dashboard/review/draft") {
		t.Errorf("the queue without a model:\n%s", body)
	}
	if res := owner.post("/dashboard/review/draft", url.Values{"csrf": {owner.csrf()}, "questions": form["questions"]}); res.StatusCode != http.StatusConflict {
		t.Errorf("drafting without a model: %d", res.StatusCode)
	}
}
