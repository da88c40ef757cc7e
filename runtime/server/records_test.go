package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/api"
	"github.com/parley-dev/parley/runtime/tenant"
)

func TestBearerTokens(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("gamma", func(b *tenant.Bundle) {
		b.Owners = []tenant.Owner{{Email: "alpha@owners.example"}, {Subject: "ops-bot"}}
	})
	wrongAudience, err := e.idp.Token("someone-else", "user-alpha", "alpha@owners.example", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := e.idp.Token(audience, "user-alpha", "alpha@owners.example", -2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		auth     string
		merchant string
		status   int
		code     string
	}{
		{"no token", "", "", 401, codeUnauthorized},
		{"not bearer", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "", 401, codeUnauthorized},
		{"garbage", "Bearer not-a-jwt", "", 401, codeUnauthorized},
		{"another audience", "Bearer " + wrongAudience, "", 401, codeUnauthorized},
		{"expired", "Bearer " + expired, "", 401, codeUnauthorized},
		{"owner of nothing", "Bearer " + e.token("stranger", "stranger@example.com"), "", 403, codeForbidden},
		{"owner of one", e.ownerOf("beta"), "", 200, ""},
		{"owner of two without naming one", e.ownerOf("alpha"), "", 400, codeInvalidRequest},
		{"owner of two naming one", e.ownerOf("alpha"), "gamma", 200, ""},
		{"naming a merchant not owned", e.ownerOf("alpha"), "beta", 403, codeForbidden},
		{"owner by subject", "Bearer " + e.token("ops-bot", ""), "", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			if tc.merchant != "" {
				h["X-Merchant-ID"] = tc.merchant
			}
			r := e.do(http.MethodGet, "/api/v1/conversations", h, "")
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != "" && r.errorCode(t) != tc.code {
				t.Errorf("code %s, want %s", r.errorCode(t), tc.code)
			}
		})
	}
	// An unverified email is not proof of ownership.
	unverified, err := e.idp.Token(audience, "user-x", "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge", map[string]string{"Authorization": "Bearer " + unverified}, ""); r.status != 403 {
		t.Errorf("a token without a verified owner email got %d", r.status)
	}
}

func TestNoVerifierConfigured(t *testing.T) {
	e := newEnv(t, func(c *envConfig) { c.server.Verifier = nil })
	r := e.do(http.MethodGet, "/api/v1/knowledge", map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if r.status != 401 || !strings.Contains(string(r.body), "no identity provider") {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// TestTenantIsolation checks that merchant beta can neither read, change nor detect alpha's data.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	kid := e.addKnowledge("alpha", "Secret recipe", "Alpha's pancake recipe uses buttermilk and three eggs.")
	r := e.chat(e.keys["alpha-sk"], `{"message": "what is in the pancake recipe?"}`)
	conv := r.json(t)["conversation_id"].(string)
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	betaAsAlpha := map[string]string{"Authorization": e.ownerOf("beta"), "X-Merchant-ID": "alpha"}

	for _, c := range []struct {
		method, path, body string
		headers            map[string]string
		status             int
	}{
		{http.MethodGet, "/api/v1/conversations/" + conv, "", beta, 404},
		{http.MethodGet, "/api/v1/conversations/does-not-exist", "", beta, 404},
		{http.MethodGet, "/api/v1/knowledge/" + kid, "", beta, 404},
		{http.MethodPut, "/api/v1/knowledge/" + kid, `{"title": "x", "content": "y"}`, beta, 404},
		{http.MethodDelete, "/api/v1/knowledge/" + kid, "", beta, 404},
		{http.MethodGet, "/api/v1/knowledge", "", betaAsAlpha, 403},
	} {
		r := e.do(c.method, c.path, c.headers, c.body)
		if r.status != c.status {
			t.Errorf("%s %s as beta: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
		}
	}
	// A missing item and another merchant's item answer exactly alike.
	other := e.do(http.MethodGet, "/api/v1/knowledge/"+kid, beta, "")
	missing := e.do(http.MethodGet, "/api/v1/knowledge/kn_missing", beta, "")
	if other.json(t)["error"].(map[string]any)["message"] != missing.json(t)["error"].(map[string]any)["message"] {
		t.Error("another merchant's item can be told from a missing one")
	}
	// beta's lists and analytics hold nothing of alpha's, and beta's bot does not know alpha's recipe.
	for _, p := range []string{"/api/v1/conversations", "/api/v1/knowledge"} {
		if r := e.do(http.MethodGet, p, beta, ""); len(r.json(t)["data"].([]any)) != 0 {
			t.Errorf("%s as beta shows alpha's data: %s", p, r.body)
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/analytics/overview", beta, ""); r.json(t)["conversations"].(float64) != 0 {
		t.Errorf("beta's analytics count alpha's conversations: %s", r.body)
	}
	r = e.chat(e.keys["beta-sk"], `{"message": "what is in the pancake recipe?"}`)
	if r.json(t)["answered"] != false {
		t.Errorf("beta's bot answered from alpha's knowledge: %s", r.body)
	}
	// Nor does a reply without an answer link alpha's item, whatever the question shares with it.
	for _, q := range []string{"what is in the pancake recipe?", "secret recipe buttermilk eggs", "do pancakes need eggs"} {
		r := e.chat(e.keys["beta-sk"], fmt.Sprintf(`{"message": %q}`, q))
		if strings.Contains(string(r.body), kid) || strings.Contains(string(r.body), "Secret recipe") {
			t.Errorf("beta's bot links alpha's item for %q: %s", q, r.body)
		}
	}
	// Alpha's own declined paraphrase does link it: the check above could see the link.
	if r := e.chat(e.keys["alpha-sk"], `{"message": "do pancakes need eggs and flour and sugar and a hot pan"}`); !strings.Contains(string(r.body), kid) {
		t.Errorf("alpha's reply does not mention its own item: %s", r.body)
	}
	// Continuing alpha's conversation ID with beta's key starts beta's own conversation.
	r = e.chat(e.keys["beta-sk"], fmt.Sprintf(`{"message": "hi", "conversation_id": %q}`, conv))
	alphaConv := e.do(http.MethodGet, "/api/v1/conversations/"+conv, map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if r.status != 200 || alphaConv.json(t)["message_count"].(float64) != 2 {
		t.Errorf("beta's message reached alpha's conversation: %s", alphaConv.body)
	}
	// alpha's item is untouched.
	if r := e.do(http.MethodGet, "/api/v1/knowledge/"+kid, map[string]string{"Authorization": e.ownerOf("alpha")}, ""); r.json(t)["title"] != "Secret recipe" {
		t.Errorf("alpha's item changed: %s", r.body)
	}
}

func TestKnowledgeCRUD(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("capped", func(b *tenant.Bundle) { b.Plan.KnowledgeItems = 2 })
	owner := map[string]string{"Authorization": e.ownerOf("capped")}

	r := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": " Gift cards ", "content": "Gift cards never expire.", "tags": ["payments"]}`)
	if r.status != 201 || r.header.Get("Location") != "/api/v1/knowledge/"+r.json(t)["id"].(string) || r.json(t)["title"] != "Gift cards" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	id := r.json(t)["id"].(string)

	for _, c := range []struct{ name, body, mention string }{
		{"no title", `{"content": "x"}`, "title"},
		{"blank content", `{"title": "x", "content": "  "}`, "content"},
		{"long title", `{"title": "` + strings.Repeat("t", 201) + `", "content": "x"}`, "title"},
		{"bad url", `{"title": "x", "content": "y", "url": "javascript:alert(1)"}`, "url"},
		{"empty tag", `{"title": "x", "content": "y", "tags": [""]}`, "tag"},
		{"too many tags", `{"title": "x", "content": "y", "tags": [` + strings.TrimSuffix(strings.Repeat(`"t",`, 21), ",") + `]}`, "tags"},
	} {
		r := e.do(http.MethodPost, "/api/v1/knowledge", owner, c.body)
		if r.status != 422 || r.errorCode(t) != codeValidationFailed || !strings.Contains(string(r.body), c.mention) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if r := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": 5, "content": "y"}`); r.status != 400 {
		t.Errorf("wrong type: %d", r.status)
	}

	e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": "Second", "content": "two"}`)
	r = e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": "Third", "content": "three"}`)
	if r.status != 403 || r.errorCode(t) != codeKnowledgeLimit {
		t.Errorf("past the ceiling: %d %s", r.status, r.body)
	}

	r = e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{"title": "Gift cards", "content": "Gift cards never expire and work online.", "url": "https://capped.example/gift"}`)
	if r.status != 200 || r.json(t)["url"] != "https://capped.example/gift" || len(r.json(t)["tags"].([]any)) != 0 {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge/"+id, owner, ""); !strings.Contains(r.json(t)["content"].(string), "online") {
		t.Errorf("update not stored: %s", r.body)
	}
	if r := e.do(http.MethodDelete, "/api/v1/knowledge/"+id, owner, ""); r.status != 204 {
		t.Errorf("delete: %d", r.status)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := e.do(m, "/api/v1/knowledge/"+id, owner, ""); r.status != 404 || r.errorCode(t) != codeNotFound {
			t.Errorf("%s after delete: %d", m, r.status)
		}
	}
	if r := e.do(http.MethodPatch, "/api/v1/knowledge/"+id, owner, `{}`); r.status != 405 || r.header.Get("Allow") != "DELETE, GET, PUT" {
		t.Errorf("PATCH: %d %s", r.status, r.header.Get("Allow"))
	}
}

func TestKnowledgeChangesTheAnswers(t *testing.T) {
	e := newEnv(t)
	ask := func() map[string]any {
		return e.chat(e.keys["alpha-sk"], `{"message": "Do you offer kayak rentals?"}`).json(t)
	}
	if ask()["answered"] != false {
		t.Fatal("answered before any knowledge existed")
	}
	id := e.addKnowledge("alpha", "Kayak rentals", "We rent kayaks from May to September for 45 dollars a day, paddles included.")
	if a := ask(); a["answered"] != true || !strings.Contains(a["answer"].(string), "45 dollars") {
		t.Errorf("new knowledge not used: %v", a)
	}
	e.do(http.MethodDelete, "/api/v1/knowledge/"+id, map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if ask()["answered"] != false {
		t.Error("deleted knowledge still used")
	}
}

// TestListedQuestionsChangeTheAnswers checks the questions a merchant lists for an item through the API: they
// are stored, returned, validated, and a visitor asking one of them gets the item's answer, until they are
// taken off it again.
func TestListedQuestionsChangeTheAnswers(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	ask := func() map[string]any {
		return e.chat(e.keys["alpha-sk"], `{"message": "Can I bring my dog along?"}`).json(t)
	}
	const item = `"title": "Animals on site", "content": "Assistance animals are welcome everywhere; other animals stay in the car park area."`
	r := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{`+item+`}`)
	id := r.json(t)["id"].(string)
	if q, ok := r.json(t)["questions"].([]any); r.status != 201 || !ok || len(q) != 0 {
		t.Fatalf("created without questions: %d %s", r.status, r.body)
	}
	if a := ask(); a["answered"] != false {
		t.Fatalf("answered before the question was listed: %v", a)
	}
	r = e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`, "questions": [" Can I bring\nmy dog? "]}`)
	if q, _ := r.json(t)["questions"].([]any); r.status != 200 || len(q) != 1 || q[0] != "Can I bring my dog?" {
		t.Fatalf("questions listed: %d %s", r.status, r.body)
	}
	if a := ask(); a["answered"] != true || a["sources"].([]any)[0].(map[string]any)["knowledge_id"] != id {
		t.Errorf("a listed question not answered from its item: %v", a)
	}
	for _, c := range []struct{ name, questions, mention string }{
		{"a blank question", `["ok", " "]`, "questions[1]"},
		{"a long question", `["` + strings.Repeat("q", 201) + `"]`, "questions[0]"},
		{"too many questions", `[` + strings.TrimSuffix(strings.Repeat(`"q",`, 21), ",") + `]`, "questions"},
		{"a NUL", `["a\u0000"]`, "questions[0]"},
	} {
		r := e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`, "questions": `+c.questions+`}`)
		if r.status != 422 || r.errorCode(t) != codeValidationFailed || !strings.Contains(string(r.body), c.mention) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if r := e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`, "questions": "Can I bring my dog?"}`); r.status != 400 {
		t.Errorf("questions as one string: %d %s", r.status, r.body)
	}
	e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`}`)
	if a := ask(); a["answered"] != false {
		t.Errorf("answered after the question was taken off: %v", a)
	}
}

// A draft is kept and listed but never answered from, cited or suggested, until it is published.
func TestDraftsAreNotAnswered(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	ask := func() map[string]any {
		return e.chat(e.keys["alpha-sk"], `{"message": "Do you sell gift vouchers?"}`).json(t)
	}
	const item = `"title": "Gift vouchers", "content": "We sell gift vouchers from 10 to 200 euros, valid for three years."`
	r := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{`+item+`, "status": "draft"}`)
	id, _ := r.json(t)["id"].(string)
	if r.status != 201 || r.json(t)["status"] != "draft" {
		t.Fatalf("created as a draft: %d %s", r.status, r.body)
	}
	if a := ask(); a["answered"] != false || len(a["sources"].([]any)) != 0 {
		t.Errorf("a draft answered or suggested: %v", a)
	}
	for query, want := range map[string]int{"?status=draft": 1, "?status=published": 0, "": 1} {
		r := e.do(http.MethodGet, "/api/v1/knowledge"+query, owner, "")
		if data, _ := r.json(t)["data"].([]any); r.status != 200 || len(data) != want {
			t.Errorf("GET /api/v1/knowledge%s: %d %s; want %d items", query, r.status, r.body, want)
		}
	}
	r = e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`}`) // a PUT without a status publishes
	if r.status != 200 || r.json(t)["status"] != "published" {
		t.Fatalf("published: %d %s", r.status, r.body)
	}
	if a := ask(); a["answered"] != true || a["sources"].([]any)[0].(map[string]any)["knowledge_id"] != id {
		t.Errorf("a published item not answered from: %v", a)
	}
	e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`, "status": "draft"}`)
	if a := ask(); a["answered"] != false {
		t.Errorf("answered from an item made a draft again: %v", a)
	}
	for status, want := range map[string]int{`"Draft"`: 422, `"archived"`: 422, `"drafts"`: 422, `true`: 400, `["draft"]`: 400} {
		r := e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{`+item+`, "status": `+status+`}`)
		if r.status != want || !strings.Contains(string(r.body), "status") {
			t.Errorf("status %s: %d %s; want %d naming the field", status, r.status, r.body, want)
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge?status=archived", owner, ""); r.status != 400 || r.errorCode(t) != codeInvalidRequest {
		t.Errorf("an unknown status filter: %d %s", r.status, r.body)
	}
	if k := e.do(http.MethodGet, "/api/v1/knowledge/"+id, owner, "").json(t); k["status"] != "draft" {
		t.Errorf("after refused updates the item reads %v, want the draft it was", k)
	}
}

func TestListingsPaginateAndFilter(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	for i := range 5 {
		e.addKnowledge("alpha", fmt.Sprintf("Item %d", i), fmt.Sprintf("Content number %d.", i))
		e.clock.Advance(time.Minute)
	}
	for i := range 5 {
		e.chat(e.keys["alpha-sk"], fmt.Sprintf(`{"message": "question %d about tents"}`, i))
		e.clock.Advance(24 * time.Hour)
	}
	for _, p := range []string{"/api/v1/knowledge", "/api/v1/conversations"} {
		seen := map[string]bool{}
		next := ""
		pages := 0
		for {
			q := "?limit=2"
			if next != "" {
				q += "&cursor=" + url.QueryEscape(next)
			}
			r := e.do(http.MethodGet, p+q, owner, "")
			if r.status != 200 {
				t.Fatalf("%s: %d %s", p, r.status, r.body)
			}
			for _, it := range r.json(t)["data"].([]any) {
				id := it.(map[string]any)["id"].(string)
				if seen[id] {
					t.Errorf("%s: %s listed twice", p, id)
				}
				seen[id] = true
			}
			pages++
			n, _ := r.json(t)["next_cursor"].(string)
			if n == "" {
				break
			}
			next = n
		}
		if len(seen) != 5 || pages != 3 {
			t.Errorf("%s: %d items over %d pages, want 5 over 3", p, len(seen), pages)
		}
	}
	first := e.do(http.MethodGet, "/api/v1/conversations?limit=1", owner, "").json(t)["data"].([]any)[0].(map[string]any)
	if first["first_message"] != "question 4 about tents" {
		t.Errorf("not newest first: %v", first)
	}
	filters := map[string]int{
		"?q=QUESTION+3":                  1,
		"?from=2026-11-12":               3,
		"?from=2026-11-11&to=2026-11-13": 2,
		"?has_lead=true":                 0,
		"?has_lead=false":                5,
	}
	for q, want := range filters {
		if r := e.do(http.MethodGet, "/api/v1/conversations"+q, owner, ""); len(r.json(t)["data"].([]any)) != want {
			t.Errorf("conversations%s: %d, want %d", q, len(r.json(t)["data"].([]any)), want)
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/knowledge?q=number+2", owner, ""); len(r.json(t)["data"].([]any)) != 1 {
		t.Errorf("knowledge q filter: %s", r.body)
	}
	bad := map[string]string{
		"/api/v1/conversations?limit=0":                            codeInvalidRequest,
		"/api/v1/conversations?limit=101":                          codeInvalidRequest,
		"/api/v1/conversations?limit=ten":                          codeInvalidRequest,
		"/api/v1/conversations?cursor=garbage":                     codeInvalidCursor,
		"/api/v1/knowledge?cursor=bm90LWEtY3Vyc29y":                codeInvalidCursor,
		"/api/v1/conversations?from=yesterday":                     codeInvalidRequest,
		"/api/v1/conversations?from=2026-11-13&to=2026-11-12":      codeInvalidRequest,
		"/api/v1/conversations?has_lead=maybe":                     codeInvalidRequest,
		"/api/v1/analytics/overview?to=2026-13-45":                 codeInvalidRequest,
		"/api/v1/conversations?q=" + strings.Repeat("x", 201):      codeInvalidRequest,
		"/api/v1/knowledge?tag=" + strings.Repeat("x", 201):        codeInvalidRequest,
		"/api/v1/analytics/overview?from=2026-11-13&to=2026-11-13": codeInvalidRequest,
	}
	for p, code := range bad {
		if r := e.do(http.MethodGet, p, owner, ""); r.status != 400 || r.errorCode(t) != code {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	// A cursor of one listing is refused by the other.
	r := e.do(http.MethodGet, "/api/v1/knowledge?limit=1", owner, "")
	kc := r.json(t)["next_cursor"].(string)
	if r := e.do(http.MethodGet, "/api/v1/conversations?cursor="+url.QueryEscape(kc), owner, ""); r.status != 400 {
		t.Errorf("a knowledge cursor was accepted by conversations: %d", r.status)
	}
}

func TestAnalyticsOverview(t *testing.T) {
	e := newEnv(t)
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
	ask := func(msg, visitor string) {
		r := e.chat(e.keys["alpha-sk"], fmt.Sprintf(`{"message": %q}`, msg), "X-Visitor-ID", visitor)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	ask("How do returns work?", "v1")
	ask("how do returns work", "v2")
	ask("Do you sell tractors?", "v2")
	e.clock.Advance(24 * time.Hour)
	ask("Do you sell TRACTORS?!", "v3")
	r := e.do(http.MethodGet, "/api/v1/analytics/overview?from=2026-11-01", map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	o := r.json(t)
	want := map[string]float64{"conversations": 4, "messages": 8, "visitors": 3, "answered_rate": 0.5, "unanswered_rate": 0.5,
		"avg_messages_per_conversation": 2, "leads": 0}
	for k, v := range want {
		if o[k] != v {
			t.Errorf("%s = %v, want %v", k, o[k], v)
		}
	}
	unanswered := o["unanswered_questions"].([]any)
	if len(unanswered) != 1 || unanswered[0].(map[string]any)["question"] != "do you sell tractors" || unanswered[0].(map[string]any)["count"] != 2.0 {
		t.Errorf("unanswered questions: %v", unanswered)
	}
	if top := o["top_questions"].([]any); len(top) != 2 {
		t.Errorf("top questions: %v", top)
	}
	if daily := o["daily"].([]any); len(daily) != 2 || daily[0].(map[string]any)["date"] != "2026-11-10" {
		t.Errorf("daily: %v", daily)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	e := newEnv(t)
	if r := e.do(http.MethodGet, "/healthz", nil, ""); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	if r := e.do(http.MethodGet, "/readyz", nil, ""); r.status != 200 || r.json(t)["tenants"] != 2.0 {
		t.Errorf("readyz: %d %s", r.status, r.body)
	}
	r := e.do(http.MethodGet, "/api/v1/openapi.json", nil, "")
	want, _ := api.OpenAPIJSON()
	if r.status != 200 || string(r.body) != string(want) {
		t.Errorf("openapi.json: %d", r.status)
	}
	if r := e.do(http.MethodGet, "/api/v1/nope", nil, ""); r.status != 404 || r.errorCode(t) != codeNotFound {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
	if m := e.scrape(); !strings.Contains(m, `parley_runtime_http_requests_total{code="404",route="unmatched"}`) {
		t.Errorf("metrics lack request counts: %s", m)
	}
	// A caller's request ID is kept; a bad one is replaced.
	if r := e.do(http.MethodGet, "/healthz", map[string]string{"X-Request-ID": "trace-abc-123"}, ""); r.header.Get("X-Request-ID") != "trace-abc-123" {
		t.Errorf("request ID not kept: %q", r.header.Get("X-Request-ID"))
	}
	if r := e.do(http.MethodGet, "/healthz", map[string]string{"X-Request-ID": "bad id with spaces"}, ""); strings.Contains(r.header.Get("X-Request-ID"), "bad") {
		t.Error("a bad request ID was echoed")
	}
}

func TestNotReadyUntilTenantsLoad(t *testing.T) {
	e := newEnv(t)
	fresh, err := tenant.NewRegistry(e.srv.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.tenants = fresh
	if r := e.do(http.MethodGet, "/readyz", nil, ""); r.status != 503 || r.errorCode(t) != codeUnavailable {
		t.Errorf("readyz before sync: %d %s", r.status, r.body)
	}
}

// The plan's knowledge characters bound what one merchant's index holds: an item that would pass them is refused
// with nothing written, alike on both stores, and an update counts the item's new size instead of its old one.
func TestKnowledgeCharactersLimit(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.KnowledgeCharacters = 100 })
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		item := func(n int) string {
			return `{"title": "t", "content": "` + strings.Repeat("x", n-1) + `"}`
		}
		r := e.do(http.MethodPost, "/api/v1/knowledge", owner, item(60))
		if r.status != http.StatusCreated {
			t.Fatalf("60 of 100 characters: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		if r := e.do(http.MethodPost, "/api/v1/knowledge", owner, item(41)); r.status != http.StatusForbidden || r.errorCode(t) != codeKnowledgeLimit {
			t.Fatalf("101 of 100 characters: %d %s", r.status, r.body)
		}
		if r := e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, item(20)); r.status != http.StatusOK {
			t.Fatalf("shrinking an item: %d %s", r.status, r.body)
		}
		if r := e.do(http.MethodPost, "/api/v1/knowledge", owner, item(80)); r.status != http.StatusCreated {
			t.Fatalf("100 of 100 characters: %d %s", r.status, r.body)
		}
		if r := e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, item(21)); r.status != http.StatusForbidden || r.errorCode(t) != codeKnowledgeLimit {
			t.Fatalf("growing an item past the limit: %d %s", r.status, r.body)
		}
		if data := e.do(http.MethodGet, "/api/v1/knowledge", owner, "").json(t)["data"].([]any); len(data) != 2 {
			t.Errorf("%d items, want 2", len(data))
		}
	})
}
