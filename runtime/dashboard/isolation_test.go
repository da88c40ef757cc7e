package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/store"
)

// An owner of alpha never sees or changes beta's conversations, knowledge or deliveries, whatever they ask for.
func TestOwnerCannotCrossToAnotherMerchant(t *testing.T) {
	e := newEnv(t)
	_, betaConv := e.chat(t, "beta", "Do you ship to Canada? beta-secret-question")
	betaDelivery := e.delivery(t, "beta")
	received := e.received()

	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	token := alpha.csrf()

	if body := alpha.get("/dashboard/conversations").Body; strings.Contains(body, "beta-secret-question") {
		t.Error("alpha's conversation list shows beta's conversation")
	}
	if body := alpha.get("/dashboard/conversations?q=beta-secret-question").Body; strings.Contains(body, betaConv) {
		t.Error("alpha's search finds beta's conversation")
	}
	for _, path := range []string{"/dashboard/conversations/" + betaConv, "/dashboard/knowledge/kn_beta_0"} {
		res := alpha.get(path)
		if res.StatusCode != http.StatusNotFound || strings.Contains(res.Body, "Shipping beta") {
			t.Errorf("GET %s as alpha: %d", path, res.StatusCode)
		}
	}
	if body := alpha.get("/dashboard/knowledge?q=Shipping").Body; strings.Contains(body, "Shipping beta") {
		t.Error("alpha's knowledge search shows beta's item")
	}
	if body := alpha.get("/dashboard/knowledge/export/json").Body; strings.Contains(body, "beta") {
		t.Error("alpha's export holds beta's items")
	}
	if body := alpha.get("/dashboard/webhooks").Body; strings.Contains(body, betaDelivery.ID) {
		t.Error("alpha's delivery log shows beta's delivery")
	}

	betaKey := store.APIKey{MerchantID: "beta", ID: "betakey", Type: "secret", SHA256: strings.Repeat("be", 32), CreatedAt: time.Now()}
	if err := e.store.Write(t.Context(), func(tx store.Tx) error { return tx.InsertAPIKey(t.Context(), betaKey) }); err != nil {
		t.Fatal(err)
	}
	if body := alpha.get("/dashboard/settings").Body; strings.Contains(body, "betakey") {
		t.Error("alpha's settings list beta's key")
	}

	// Changes aimed at beta's data: each is refused and changes nothing.
	for path, form := range map[string]url.Values{
		"/dashboard/knowledge/kn_beta_0":                     {"csrf": {token}, "title": {"hijacked"}, "content": {"hijacked"}},
		"/dashboard/knowledge/kn_beta_0/delete":              {"csrf": {token}},
		"/dashboard/webhooks/" + betaDelivery.ID + "/replay": {"csrf": {token}},
		"/dashboard/merchants":                               {"csrf": {token}, "merchant": {"beta"}},
		"/dashboard/keys/betakey/revoke":                     {"csrf": {token}},
	} {
		if res := alpha.post(path, form); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s as alpha: %d", path, res.StatusCode)
		}
	}
	k, err := e.store.GetKnowledge(t.Context(), "beta", "kn_beta_0")
	if err != nil || k.Title != "Shipping beta" {
		t.Errorf("beta's item after alpha's attempts: %+v %v", k, err)
	}
	d, _, err := e.store.GetDelivery(t.Context(), "beta", betaDelivery.ID)
	if err != nil || d.Status != store.DeliverySucceeded || d.Attempts != betaDelivery.Attempts || e.received() != received {
		t.Errorf("beta's delivery after alpha's replay: %+v %v", d, err)
	}
	if k, err := e.store.APIKeyByHash(t.Context(), betaKey.SHA256); err != nil || k.ID != "betakey" {
		t.Errorf("beta's key after alpha's attempt: %+v %v", k, err)
	}
	// Still alpha's dashboard after asking for beta.
	if body := alpha.get("/dashboard/settings").Body; !strings.Contains(body, "alpha") || strings.Contains(body, "Shop beta") {
		t.Error("alpha's session moved to beta")
	}
}

// An owner of both merchants picks one, and sees only that one's data.
func TestOwnerOfSeveralMerchantsPicksOne(t *testing.T) {
	e := newEnv(t)
	both := newClient(t, e.url)
	both.signIn("both@owners.example")
	res := both.get("/dashboard/leads?lead=yes")
	if res.StatusCode != http.StatusSeeOther || both.resolve(res) != e.url+"/dashboard/merchants?next=%2Fdashboard%2Fleads%3Flead%3Dyes" {
		t.Fatalf("an owner of two merchants: %d to %s", res.StatusCode, res.Header.Get("Location"))
	}
	page := both.getURL(both.resolve(res)).Body
	if !strings.Contains(page, "Shop alpha") || !strings.Contains(page, "Shop beta") {
		t.Fatalf("the merchants page: %s", page)
	}
	token := csrfField.FindStringSubmatch(page)[1]
	if !strings.Contains(page, `name="next" value="/dashboard/leads?lead=yes"`) {
		t.Errorf("the merchants page does not carry the page asked for")
	}
	// The page asked for before choosing is where the choice leads.
	if res := both.post("/dashboard/merchants", url.Values{"csrf": {token}, "merchant": {"beta"}, "next": {"/dashboard/leads?lead=yes"}}); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/dashboard/leads?lead=yes" {
		t.Fatalf("choosing beta: %d to %s", res.StatusCode, res.Header.Get("Location"))
	}
	body := both.get("/dashboard/knowledge").Body
	if !strings.Contains(body, "Shipping beta") || strings.Contains(body, "Shipping alpha") {
		t.Error("after choosing beta, the knowledge page is not beta's")
	}
	// A form shown for beta, sent after the owner chose alpha in another tab, is refused: it would otherwise
	// write into alpha, which the owner did not see it for.
	betaForm := csrfField.FindStringSubmatch(body)[1]
	if res := both.post("/dashboard/merchants", url.Values{"csrf": {betaForm}, "merchant": {"alpha"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("choosing alpha: %d", res.StatusCode)
	}
	before := e.knowledgeCount(t, "alpha")
	if res := both.post("/dashboard/knowledge", url.Values{"csrf": {betaForm}, "title": {"Meant for beta"}, "content": {"x"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("beta's form after choosing alpha: %d, want 403", res.StatusCode)
	}
	if n := e.knowledgeCount(t, "alpha"); n != before {
		t.Errorf("alpha has %d items after beta's form, want %d", n, before)
	}
	if res := both.post("/dashboard/knowledge", url.Values{"csrf": {both.csrf()}, "title": {"Meant for alpha"}, "content": {"x"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("alpha's own form: %d", res.StatusCode)
	}

	nobody := newClient(t, e.url)
	nobody.signIn("stranger@elsewhere.example")
	if res := nobody.get("/dashboard/"); res.StatusCode != http.StatusForbidden {
		t.Errorf("someone who owns nothing: %d", res.StatusCode)
	}
}

// A change without the session's CSRF token, or sent from another site, is refused and changes nothing.
func TestForgedAndCrossSiteChangesAreRefused(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	token := c.csrf()
	create := func(form url.Values, h http.Header) int {
		return c.do(http.MethodPost, e.url+"/dashboard/knowledge", form, h).StatusCode
	}
	item := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "title": {"Forged"}, "content": {"Forged content"}}
	}
	sameOrigin := http.Header{"Origin": {e.url}, "Sec-Fetch-Site": {"same-origin"}}
	for name, status := range map[string]int{
		"no token":               create(url.Values{"title": {"Forged"}, "content": {"Forged content"}}, sameOrigin),
		"a wrong token":          create(item("WRONG"+token[5:]), sameOrigin),
		"cross-site with token":  create(item(token), http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}),
		"foreign Origin, no SFS": create(item(token), http.Header{"Origin": {"https://evil.example"}}),
		"logout cross-site":      c.do(http.MethodPost, e.url+"/dashboard/logout", url.Values{"csrf": {token}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}).StatusCode,
	} {
		if status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, status)
		}
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Errorf("alpha has %d items after forged requests, want 2", n)
	}
	// The same request, from the dashboard itself, works: the refusals were the checks, not a broken form.
	if status := create(item(token), sameOrigin); status != http.StatusSeeOther || e.knowledgeCount(t, "alpha") != 3 {
		t.Errorf("a genuine change: %d", status)
	}
	// Signing out ends the session, also for a copy of its cookie kept elsewhere; the old token is no use either.
	kept := newClient(t, e.url)
	base, _ := url.Parse(e.url + "/dashboard/")
	kept.http.Jar.SetCookies(base, c.http.Jar.Cookies(base))
	if res := kept.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Fatalf("the copied cookie before signing out: %d", res.StatusCode)
	}
	if res := c.post("/dashboard/logout", url.Values{"csrf": {token}}); res.StatusCode != http.StatusOK {
		t.Errorf("signing out: %d", res.StatusCode)
	}
	for name, client := range map[string]*client{"the browser": c, "a copy of its cookie": kept} {
		if res := client.get("/dashboard/"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("%s after signing out: %d, want a redirect to sign in", name, res.StatusCode)
		}
		if res := client.post("/dashboard/knowledge", item(token)); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s changing after signing out: %d", name, res.StatusCode)
		}
	}
	// Signing in again works.
	c.signIn("alpha@owners.example")
	if res := c.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Errorf("signed in again: %d", res.StatusCode)
	}
}

// A session cookie signed by one runtime is refused by a runtime with another key.
func TestSessionCookieOfAnotherRuntimeIsRefused(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	if res := c.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
	svc, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(e.runtime(t, svc, prometheus.NewRegistry(), []byte("another runtime's session key, also 32 bytes long")))
	defer other.Close()
	req := httptest.NewRequest(http.MethodGet, "/dashboard/", nil)
	for _, ck := range c.http.Jar.Cookies(mustURL(t, e.url+"/dashboard/")) {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	other.Config.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "/dashboard/login") {
		t.Errorf("another runtime took the session: %d %s", rec.Code, rec.Header().Get("Location"))
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The dashboard draws from the owners' budget, shared with the API's owner calls, never from the visitors'.
func TestDashboardHasTheOwnersRateBudget(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	refused := false
	for range 3 * ratelimit.OwnerBurst {
		res := c.get("/dashboard/leads")
		if res.StatusCode == http.StatusTooManyRequests {
			refused = res.Header.Get("Retry-After") != "" && strings.Contains(res.Body, "Too many requests")
			break
		}
	}
	if !refused {
		t.Fatal("the owners' budget never ran out")
	}
	if answer, _ := e.chat(t, "alpha", "How long does delivery to Canada take?"); !strings.Contains(answer, "5 to 8") {
		t.Errorf("a visitor after the owner's burst: %q", answer)
	}
}

// A test event goes to the signed-in merchant's endpoint only, and only with the session's CSRF token.
func TestSendTestEvent(t *testing.T) {
	e := newEnv(t)
	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	tests := func(merchant string) int {
		list, _, err := e.store.ListDeliveries(t.Context(), merchant, store.DeliveryFilter{EventType: "webhook.test"})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if res := alpha.post("/dashboard/webhooks/endpoints/crm/test", url.Values{"csrf": {"forged"}}); res.StatusCode != http.StatusForbidden || tests("alpha") != 0 {
		t.Errorf("without the CSRF token: %d, %d test deliveries", res.StatusCode, tests("alpha"))
	}
	if res := alpha.post("/dashboard/webhooks/endpoints/nope/test", url.Values{"csrf": {alpha.csrf()}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown endpoint: %d", res.StatusCode)
	}
	if res := alpha.post("/dashboard/webhooks/endpoints/crm/test", url.Values{"csrf": {alpha.csrf()}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sending a test event: %d %s", res.StatusCode, res.Body)
	}
	if a, b := tests("alpha"), tests("beta"); a != 1 || b != 0 {
		t.Errorf("test deliveries: alpha %d, beta %d", a, b)
	}
	e.hooks.WaitFor(t, 1, 10*time.Second)
}

// The widget's preview endpoints answer only the session's own merchant, with its CSRF token, from the same
// origin, and store nothing.
func TestPreviewNeedsTheSessionAndStoresNothing(t *testing.T) {
	e := newEnv(t)
	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	token := alpha.csrf()
	call := func(method, path, csrf, origin, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Origin", origin)
		res, err := alpha.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %v", method, path, res.StatusCode, err)
		}
		return res.StatusCode, out
	}
	before, err := e.store.ConversationsThisMonth(t.Context(), "alpha", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ask := `{"message": "How long does delivery to Canada take?"}`
	for _, tc := range []struct {
		name, csrf, origin, body string
		status                   int
	}{
		{"no token", "", e.url, ask, http.StatusForbidden},
		{"a wrong token", "forged", e.url, ask, http.StatusForbidden},
		{"from another site", token, "https://evil.example", ask, http.StatusForbidden},
		{"an empty message", token, e.url, `{"message": " "}`, http.StatusUnprocessableEntity},
		{"not JSON", token, e.url, `{`, http.StatusBadRequest},
	} {
		if status, out := call(http.MethodPost, "/dashboard/preview/chat", tc.csrf, tc.origin, tc.body); status != tc.status || out["error"] == nil {
			t.Errorf("%s: %d %v", tc.name, status, out)
		}
	}
	status, out := call(http.MethodPost, "/dashboard/preview/chat", token, e.url, ask)
	if status != http.StatusOK || !strings.Contains(out["answer"].(string), "5 to 8") || out["conversation_id"] != "preview" {
		t.Fatalf("the preview's answer: %d %v", status, out)
	}
	if sources := fmt.Sprint(out["sources"]); !strings.Contains(sources, "Shipping alpha") || strings.Contains(sources, "beta") {
		t.Errorf("the preview's sources: %s", sources)
	}
	if status, out := call(http.MethodGet, "/dashboard/preview/widget", token, e.url, ""); status != http.StatusOK || out["title"] != "Ask alpha" {
		t.Errorf("the preview's settings: %d %v", status, out)
	}
	if after, err := e.store.ConversationsThisMonth(t.Context(), "alpha", time.Now()); err != nil || after != before {
		t.Errorf("conversations after the preview: %d, before %d (%v)", after, before, err)
	}
}

// The preview is called by the widget's script, which reads the API's error envelope: an address that breaks the
// input rules, and every other refusal, is answered in JSON with the right status and the request's ID, never
// with the HTML error page.
func TestPreviewRefusesInTheAPIEnvelope(t *testing.T) {
	e := newEnv(t)
	alpha := newClient(t, e.url)
	alpha.signIn("alpha@owners.example")
	token := alpha.csrf()
	for _, tc := range []struct {
		method, path, csrf string
		status             int
		code               string
	}{
		{http.MethodGet, "/dashboard/preview/widget?lang=%00", token, http.StatusBadRequest, "invalid_request"},
		{http.MethodGet, "/dashboard/preview/widget?x=%ff", token, http.StatusBadRequest, "invalid_request"},
		{http.MethodPost, "/dashboard/preview/chat?q=%zz", token, http.StatusBadRequest, "invalid_request"},
		{http.MethodPost, "/dashboard/preview/chat%00", token, http.StatusBadRequest, "invalid_request"},
		{http.MethodPost, "/dashboard/preview/chat", "forged", http.StatusForbidden, "forbidden"},
		{http.MethodGet, "/dashboard/preview/nothing", token, http.StatusNotFound, "not_found"},
		{http.MethodGet, "/dashboard/preview/chat", token, http.StatusMethodNotAllowed, "method_not_allowed"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), tc.method, e.url+tc.path, strings.NewReader(`{"message": "hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", tc.csrf)
		req.Header.Set("Origin", e.url)
		res, err := alpha.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Error struct {
				Code      string `json:"code"`
				Message   string `json:"message"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		decodeErr := json.NewDecoder(res.Body).Decode(&out)
		_ = res.Body.Close()
		if ct := res.Header.Get("Content-Type"); decodeErr != nil || !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: %d %s, not the JSON envelope: %v", tc.method, tc.path, res.StatusCode, ct, decodeErr)
			continue
		}
		if res.StatusCode != tc.status || out.Error.Code != tc.code || out.Error.Message == "" ||
			out.Error.RequestID == "" || out.Error.RequestID != res.Header.Get("X-Request-Id") {
			t.Errorf("%s %s: %d %+v, want %d %s with the request's ID", tc.method, tc.path, res.StatusCode, out.Error, tc.status, tc.code)
		}
	}
}

// The dashboard's script and style sheet are served; the directory holding them is not listed.
func TestStaticFilesAreNotListed(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	for path, want := range map[string]int{
		"/dashboard/static/app.css": http.StatusOK, "/dashboard/static/app.js": http.StatusOK,
		"/dashboard/static/": http.StatusNotFound, "/dashboard/static/nope.js": http.StatusNotFound,
	} {
		if res := c.get(path); res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
}
