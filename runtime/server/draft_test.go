package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/tenant"
)

// withImpatientModel answers with a model behind provider that is waited for 300 milliseconds at most.
func withImpatientModel(t testing.TB, provider *fakellm.Provider) envOption {
	return func(c *envConfig) {
		r, err := llm.New(llm.Config{BaseURL: provider.URL(), Model: "m", Timeout: 300 * time.Millisecond, MaxTokens: 100,
			ContextItems: 3, HistoryTokens: 500, Offline: assistant.Retrieval{}, Logger: slog.New(slog.DiscardHandler),
			Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		c.chat.Responder = r
	}
}

// missVoucher asks alpha's assistant a question the model cannot answer and returns the review group's questions.
func missVoucher(t *testing.T, e *env, provider *fakellm.Provider) []string {
	t.Helper()
	provider.Set(func(p *fakellm.Provider) { p.Answer, p.Status, p.Delay = []string{"NO_ANSWER"}, http.StatusOK, 0 })
	for i, q := range []string{"Can I pay with a voucher code?", "can I pay with a voucher"} {
		res := e.startFor("alpha", "v"+string(rune('1'+i)), `{"message": "`+q+`", "conversation_id": "c`+string(rune('1'+i))+`"}`)
		if res.status != http.StatusOK || res.json(t)["answered"] != false {
			t.Fatalf("asking %q: %d %s", q, res.status, res.body)
		}
	}
	queue := e.review(map[string]string{"Authorization": e.ownerOf("alpha")})
	if len(queue) != 1 {
		t.Fatalf("the queue is %+v, want the voucher group", queue)
	}
	var qs []string
	for _, q := range queue[0].Questions {
		qs = append(qs, q.Question)
	}
	return qs
}

func (e *env) tokensThisMonth(merchant string) int64 {
	e.t.Helper()
	n, err := e.svc.Store().TokensThisMonth(e.t.Context(), merchant, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) knowledgeCount(merchant string) int {
	e.t.Helper()
	res := e.do(http.MethodGet, "/api/v1/knowledge", map[string]string{"Authorization": e.ownerOf(merchant)}, "")
	var out struct{ Data []any }
	if err := json.Unmarshal(res.body, &out); err != nil || res.status != http.StatusOK {
		e.t.Fatalf("listing knowledge: %d %s", res.status, res.body)
	}
	return len(out.Data)
}

// TestDraftAnswer: the merchant's model drafts an article for a review group from the group's questions, the
// conversations they were asked in and the merchant's items, in the merchant's language; nothing is stored until
// the merchant saves it as an item, which then answers the question; the draft's tokens count against the month;
// another merchant's owner or key finds no such group.
func TestDraftAnswer(t *testing.T) {
	provider := fakellm.New(t)
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("alpha", func(b *tenant.Bundle) { b.Widget.Locale = "de" })
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		e.addKnowledge("alpha", "Gift cards", "Gift cards come in any amount, never expire and are accepted at checkout with their voucher code.")
		e.addKnowledge("alpha", "Shipping", "Orders ship within 2 business days.")
		questions := missVoucher(t, e, provider)
		keys, _ := json.Marshal(questions)
		body := `{"questions": ` + string(keys) + `}`

		for name, headers := range map[string]map[string]string{
			"beta's owner":      {"Authorization": e.ownerOf("beta")},
			"beta's secret key": {"X-API-Key": e.keys["beta-sk"]},
		} {
			if res := e.do(http.MethodPost, "/api/v1/review/draft", headers, body); res.status != http.StatusNotFound {
				t.Errorf("%s drafting alpha's group: %d %s, want 404", name, res.status, res.body)
			}
		}
		if res := e.do(http.MethodPost, "/api/v1/review/draft", map[string]string{"X-API-Key": e.keys["alpha-pk"],
			"Origin": "https://alpha.example"}, body); res.status != http.StatusForbidden {
			t.Errorf("a publishable key drafting: %d %s, want 403", res.status, res.body)
		}

		provider.Set(func(p *fakellm.Provider) {
			p.Answer = []string{"# Mit Gutschein ", "bezahlen\n\nJa: Geben Sie den Gutscheincode an der Kasse ein. ", "Er gilt [Gültigkeit]."}
		})
		tokens, items := e.tokensThisMonth("alpha"), e.knowledgeCount("alpha")
		res := e.do(http.MethodPost, "/api/v1/review/draft", map[string]string{"X-API-Key": e.keys["alpha-sk"]}, body)
		if res.status != http.StatusOK {
			t.Fatalf("drafting: %d %s", res.status, res.body)
		}
		var draft struct {
			Title, Content string
			Questions      []string
			Sources        []struct {
				KnowledgeID string `json:"knowledge_id"`
				Title       string
			}
		}
		if err := json.Unmarshal(res.body, &draft); err != nil {
			t.Fatal(err)
		}
		if draft.Title != "Mit Gutschein bezahlen" || draft.Content != "Ja: Geben Sie den Gutscheincode an der Kasse ein. Er gilt [Gültigkeit]." ||
			len(draft.Questions) == 0 || draft.Questions[0] != "can I pay with a voucher" || len(draft.Sources) == 0 ||
			draft.Sources[0].Title != "Gift cards" {
			t.Errorf("the draft is %+v", draft)
		}
		sent := provider.Last(t).Body.Messages
		if len(sent) != 2 {
			t.Fatalf("the prompt has %d messages, want the system's and the user's", len(sent))
		}
		for _, want := range []string{"Gift cards come in any amount", "de (BCP 47)", "placeholder in square brackets"} {
			if !strings.Contains(sent[0].Content, want) {
				t.Errorf("the system prompt lacks %q:\n%s", want, sent[0].Content)
			}
		}
		for _, want := range []string{"Can I pay with a voucher code?", "can I pay with a voucher", "Conversation 2:", "Visitor: Can I pay"} {
			if !strings.Contains(sent[1].Content, want) {
				t.Errorf("the user's message lacks %q:\n%s", want, sent[1].Content)
			}
		}
		if got := e.tokensThisMonth("alpha"); got != tokens+fakellm.PromptTokens+fakellm.CompletionTokens {
			t.Errorf("tokens this month %d after the draft, want %d", got, tokens+fakellm.PromptTokens+fakellm.CompletionTokens)
		}
		if n := e.knowledgeCount("alpha"); n != items {
			t.Errorf("%d items after the draft, want %d: a draft is not stored", n, items)
		}

		// The merchant saves the draft as an item and deals with the group: the next ask is answered from it.
		item, _ := json.Marshal(map[string]any{"title": draft.Title, "content": strings.ReplaceAll(draft.Content, "[Gültigkeit]", "drei Jahre"),
			"questions": draft.Questions})
		created := e.do(http.MethodPost, "/api/v1/knowledge", owner, string(item))
		if created.status != http.StatusCreated {
			t.Fatalf("saving the draft: %d %s", created.status, created.body)
		}
		id := created.json(t)["id"].(string)
		if res := e.do(http.MethodPost, "/api/v1/review/fixes", owner, `{"questions": `+string(keys)+`, "knowledge_id": "`+id+`"}`); res.status != http.StatusOK {
			t.Fatalf("fixing: %d %s", res.status, res.body)
		}
		e.clock.Advance(time.Second)
		if res := e.do(http.MethodPost, "/api/v1/review/draft", owner, body); res.status != http.StatusNotFound {
			t.Errorf("drafting a group dealt with: %d %s, want 404", res.status, res.body)
		}
		provider.Set(func(p *fakellm.Provider) { p.Answer = []string{"Ja, an der Kasse [1]."} })
		again := e.startFor("alpha", "v9", `{"message": "Can I pay with a voucher code?"}`).json(t)
		sources, _ := again["sources"].([]any)
		if again["answered"] != true || len(sources) == 0 || sources[0].(map[string]any)["knowledge_id"] != id {
			t.Errorf("asked again after saving the draft: %v", again)
		}
		if !strings.Contains(provider.Last(t).Body.Messages[0].Content, "drei Jahre") {
			t.Errorf("the saved draft is not in the answer's context: %s", provider.Last(t).Body.Messages[0].Content)
		}
	}, withModel(t, provider))
}

// TestDraftAnswerModelFailures: a model that fails answers 502, one that does not answer in time 504, each in
// the JSON error envelope, with nothing stored and no tokens counted.
func TestDraftAnswerModelFailures(t *testing.T) {
	provider := fakellm.New(t)
	e := newEnv(t, withImpatientModel(t, provider))
	e.addKnowledge("alpha", "Gift cards", "Gift cards come in any amount and never expire.")
	keys, _ := json.Marshal(missVoucher(t, e, provider))
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	tokens, items := e.tokensThisMonth("alpha"), e.knowledgeCount("alpha")
	for _, c := range []struct {
		name   string
		set    func(p *fakellm.Provider)
		status int
		code   string
	}{
		{"server error", func(p *fakellm.Provider) { p.Status = http.StatusInternalServerError }, http.StatusBadGateway, codeModelFailed},
		{"refused", func(p *fakellm.Provider) { p.Status = http.StatusUnauthorized }, http.StatusBadGateway, codeModelFailed},
		{"garbage", func(p *fakellm.Provider) { p.Status, p.Garbage = http.StatusOK, "data: {not json\n\n" }, http.StatusBadGateway, codeModelFailed},
		{"empty", func(p *fakellm.Provider) { p.Garbage, p.Answer = "", []string{"  "} }, http.StatusBadGateway, codeModelFailed},
		{"slow", func(p *fakellm.Provider) { p.Answer, p.Delay = []string{"Title\n\nText."}, 2*time.Second }, http.StatusGatewayTimeout, codeModelTimeout},
	} {
		provider.Set(c.set)
		res := e.do(http.MethodPost, "/api/v1/review/draft", owner, `{"questions": `+string(keys)+`}`)
		var env errorBody
		if err := json.Unmarshal(res.body, &env); err != nil || res.status != c.status || env.Error.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.status, res.body, c.status, c.code)
		}
		if strings.Contains(string(res.body), provider.URL()) {
			t.Errorf("%s: the error names the provider: %s", c.name, res.body)
		}
	}
	if got, n := e.tokensThisMonth("alpha"), e.knowledgeCount("alpha"); got != tokens || n != items {
		t.Errorf("after the failures: %d tokens (want %d), %d items (want %d)", got, tokens, n, items)
	}
}

// TestDraftAnswerRefusals: without a model, past the month's tokens, or for a bad request, a draft is refused
// with the JSON error envelope and its status.
func TestDraftAnswerRefusals(t *testing.T) {
	noModel := newEnv(t)
	noModel.addKnowledge("alpha", "Gift cards", "Gift cards come in any amount and never expire.")
	res := noModel.startFor("alpha", "v1", `{"message": "Can I pay with a voucher code?"}`)
	if res.status != http.StatusOK {
		t.Fatal(res.status)
	}
	owner := map[string]string{"Authorization": noModel.ownerOf("alpha")}
	queue := noModel.review(owner)
	if len(queue) != 1 {
		t.Fatalf("queue %+v", queue)
	}
	body := `{"questions": ["` + queue[0].Questions[0].Question + `"]}`
	if res := noModel.do(http.MethodPost, "/api/v1/review/draft", owner, body); res.status != http.StatusConflict ||
		res.json(t)["error"].(map[string]any)["code"] != codeModelNotConfigured {
		t.Errorf("without a model: %d %s, want 409 %s", res.status, res.body, codeModelNotConfigured)
	}

	provider := fakellm.New(t)
	e := newEnv(t, withModel(t, provider))
	e.addKnowledge("alpha", "Gift cards", "Gift cards come in any amount and never expire.")
	keys, _ := json.Marshal(missVoucher(t, e, provider))
	owner = map[string]string{"Authorization": e.ownerOf("alpha")}
	// A plan naming a provider this runtime does not declare has no model either.
	e.addMerchant("alpha", func(b *tenant.Bundle) { b.Assistant.Provider = "elsewhere" })
	if res := e.do(http.MethodPost, "/api/v1/review/draft", owner, `{"questions": `+string(keys)+`}`); res.status != http.StatusConflict {
		t.Errorf("with an undeclared provider: %d %s, want 409", res.status, res.body)
	}
	e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.MonthlyTokens = 1 })
	if res := e.do(http.MethodPost, "/api/v1/review/draft", owner, `{"questions": `+string(keys)+`}`); res.status != http.StatusTooManyRequests ||
		res.json(t)["error"].(map[string]any)["code"] != codeTokenQuota {
		t.Errorf("past the month's tokens: %d %s, want 429 %s", res.status, res.body, codeTokenQuota)
	}
	e.addMerchant("alpha", func(b *tenant.Bundle) {})
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"questions": []}`, http.StatusUnprocessableEntity},
		{`{"questions": [""]}`, http.StatusUnprocessableEntity},
		{`{}`, http.StatusUnprocessableEntity},
		{`{"questions": "voucher"}`, http.StatusBadRequest},
		{`{"questions": ["voucher"], "extra": 1}`, http.StatusBadRequest},
		{`{"questions": [`, http.StatusBadRequest},
		{`{"questions": ["nobody asked this"]}`, http.StatusNotFound},
	} {
		if res := e.do(http.MethodPost, "/api/v1/review/draft", owner, c.body); res.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.body, res.status, res.body, c.status)
		}
	}
}
