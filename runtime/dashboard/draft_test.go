package dashboard_test

import (
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
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

// draftEnv is newModelEnv in which a visitor asked alpha draftQuestion, and a client signed in as alpha's owner.
func draftEnv(t *testing.T) (*fakellm.Provider, *env, *client) {
	t.Helper()
	provider := fakellm.New(t)
	e := newModelEnv(t, provider)
	e.chat(t, "alpha", draftQuestion)
	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	return provider, e, alpha
}

// The review queue offers a drafted answer when a model answers the merchant: the draft fills the add form,
// nothing is stored until the owner saves it, and a model that fails says so.
func TestDraftAnswerInDashboard(t *testing.T) {
	provider, e, alpha := draftEnv(t)
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

// Saving the answer written for a group of the review queue (a draft, or an item written or edited from the
// queue's links) takes the group out of the queue in the same request, unless the owner unticks the box; a
// tampered group saves nothing.
func TestSavingAnAnswerDealsWithItsGroup(t *testing.T) {
	provider, e, alpha := draftEnv(t)
	group := []string{"can i change my delivery address"}
	provider.Set(func(p *fakellm.Provider) { p.Answer = []string{draftText} })
	drafted := html.UnescapeString(alpha.post("/dashboard/review/draft", url.Values{"csrf": {alpha.csrf()}, "questions": group}).Body)
	if !strings.Contains(drafted, `name="review" value="`+group[0]+`"`) || !strings.Contains(drafted, `name="dealt_with" value="on" checked`) {
		t.Fatalf("the drafted form does not carry its group, to deal with when saved:\n%s", drafted)
	}
	// The queue's "Write a new item for it" link carries the group too.
	queue := html.UnescapeString(alpha.get("/dashboard/review").Body)
	if !strings.Contains(queue, "&review="+url.PathEscape(group[0])) {
		t.Fatalf("the queue's link to write an item does not carry the group:\n%s", queue)
	}
	written := html.UnescapeString(alpha.get("/dashboard/knowledge?question=" + url.QueryEscape(draftQuestion) + "&review=" + url.QueryEscape(group[0])).Body)
	if !strings.Contains(written, `name="review" value="`+group[0]+`"`) {
		t.Fatalf("the add form from the queue does not carry the group:\n%s", written)
	}

	save := func(title string, review []string, dealt bool) reply {
		t.Helper()
		form := url.Values{"csrf": {alpha.csrf()}, "title": {title}, "content": {"Write to us before your order ships."},
			"questions": {draftQuestion}, "review": review}
		if dealt {
			form.Set("dealt_with", "on")
		}
		return alpha.post("/dashboard/knowledge", form)
	}
	count := func() int {
		items, err := e.store.AllKnowledge(t.Context(), "alpha")
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	before := count()
	for name, review := range map[string][]string{"an empty question": {""}, "too many questions": slices.Repeat([]string{"a"}, 101)} {
		if res := save("Tampered", review, true); res.StatusCode != http.StatusUnprocessableEntity || count() != before {
			t.Errorf("%s: %d, %d items; want 422 and nothing saved", name, res.StatusCode, count())
		}
	}
	// Unticked: the item is saved and the question stays in the queue.
	if res := save("Kept in the queue", group, false); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/knowledge?ok=created" {
		t.Fatalf("saving with the box unticked: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if body := alpha.get("/dashboard/review").Body; !strings.Contains(body, draftQuestion) {
		t.Errorf("the question left the queue though the box was unticked:\n%s", body)
	}
	// Ticked, as the form comes: saved, and the question leaves the queue.
	res := save("Changing the delivery address", group, true)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/review?ok=answer-saved" {
		t.Fatalf("saving the answer: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if count() != before+2 {
		t.Errorf("alpha has %d items, want %d", count(), before+2)
	}
	if body := alpha.get("/dashboard/review?ok=answer-saved").Body; strings.Contains(body, draftQuestion) || !strings.Contains(body, "Nothing to review") {
		t.Errorf("the question is still in the queue:\n%s", body)
	}

	// An item edited from the queue's link deals with its group as it is saved too.
	const wrap = "Do you gift wrap?"
	e.chat(t, "alpha", wrap)
	edit := html.UnescapeString(alpha.get("/dashboard/knowledge/kn_alpha_0?review=" + url.QueryEscape("do you gift wrap")).Body)
	if !strings.Contains(edit, `name="review" value="do you gift wrap"`) || !strings.Contains(edit, `name="dealt_with" value="on" checked`) {
		t.Fatalf("the edit form from the queue does not carry the group:\n%s", edit)
	}
	res = alpha.post("/dashboard/knowledge/kn_alpha_0", url.Values{"csrf": {alpha.csrf()}, "title": {"Shipping alpha"},
		"content": {"Orders ship within 2 days. Every order can be gift wrapped for free."}, "review": {"do you gift wrap"}, "dealt_with": {"on"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/review?ok=answer-saved" {
		t.Fatalf("saving the edited item: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if body := alpha.get("/dashboard/review").Body; strings.Contains(body, wrap) {
		t.Errorf("the edited item's question is still in the queue:\n%s", body)
	}
}
