package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/tenant"
)

func (e *env) addKnowledge(merchant, title, content string) string {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/v1/knowledge", map[string]string{"Authorization": e.ownerOf(merchant)},
		fmt.Sprintf(`{"title": %q, "content": %q, "url": "https://%s.example/help", "tags": ["help"]}`, title, content, merchant))
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating knowledge: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

func TestChatAnswersFromKnowledgeAndKeepsTheConversation(t *testing.T) {
	e := newEnv(t)
	id := e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund. Bring the receipt. Sale items are final.")
	e.addKnowledge("alpha", "Store hours", "Our Denver store is open from 9 am to 7 pm every day except holidays.")

	r := e.chat(e.keys["alpha-sk"], `{"message": "How many days do I have to return something?"}`)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	body := r.json(t)
	conv := body["conversation_id"].(string)
	if !strings.Contains(body["answer"].(string), "60 days") || body["answered"] != true {
		t.Errorf("answer: %s", r.body)
	}
	sources := body["sources"].([]any)
	if len(sources) == 0 || sources[0].(map[string]any)["knowledge_id"] != id {
		t.Errorf("the answer does not cite the returns item: %s", r.body)
	}
	for _, h := range []string{"RateLimit", "RateLimit-Policy", "X-Request-ID"} {
		if r.header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}

	// Continuing the conversation, then reading it back as the owner.
	r = e.chat(e.keys["alpha-sk"], fmt.Sprintf(`{"message": "When is the store open?", "conversation_id": %q}`, conv))
	if r.status != http.StatusOK || r.json(t)["conversation_id"] != conv {
		t.Fatalf("continuing: %d %s", r.status, r.body)
	}
	r = e.do(http.MethodGet, "/api/v1/conversations/"+conv, map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	detail := r.json(t)
	msgs := detail["messages"].([]any)
	if len(msgs) != 4 || detail["message_count"].(float64) != 4 || detail["first_message"] != "How many days do I have to return something?" {
		t.Errorf("conversation detail: %s", r.body)
	}
	if msgs[0].(map[string]any)["role"] != "visitor" || msgs[1].(map[string]any)["role"] != "assistant" {
		t.Errorf("roles out of order: %s", r.body)
	}
}

func TestCallerNamedConversation(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"alpha", "beta"} {
		r := e.chat(e.keys[m+"-sk"], `{"message": "hello", "conversation_id": "order-1234"}`)
		if r.status != http.StatusOK || r.json(t)["conversation_id"] != "order-1234" {
			t.Fatalf("%s: %d %s", m, r.status, r.body)
		}
	}
	// The same identifier names two separate conversations.
	for _, m := range []string{"alpha", "beta"} {
		r := e.do(http.MethodGet, "/api/v1/conversations/order-1234", map[string]string{"Authorization": e.ownerOf(m)}, "")
		if r.status != http.StatusOK || r.json(t)["message_count"].(float64) != 2 {
			t.Errorf("%s: %d %s", m, r.status, r.body)
		}
	}
}

// TestReservedConversationIDs: the words of the literal paths beside /api/v1/conversations/{id} ("events",
// "export") would name a conversation GET /api/v1/conversations/{id} can never read, so a caller may not name one
// so: 400 conversation_id_reserved, and nothing stored. Another case of the word is another identifier.
func TestReservedConversationIDs(t *testing.T) {
	e := newEnv(t)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	for _, id := range []string{"events", "export"} {
		r := e.chat(e.keys["alpha-sk"], `{"message": "hello", "conversation_id": "`+id+`"}`)
		if r.status != http.StatusBadRequest || r.errorCode(t) != codeConversationIDReserved || !strings.Contains(r.json(t)["error"].(map[string]any)["message"].(string), id) {
			t.Errorf("naming a conversation %q: %d %s", id, r.status, r.body)
		}
		r = e.chat(e.keys["alpha-sk"], `{"handoff": true, "conversation_id": "`+id+`"}`)
		if r.status != http.StatusBadRequest || r.errorCode(t) != codeConversationIDReserved {
			t.Errorf("handing over a conversation %q: %d %s", id, r.status, r.body)
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/conversations", owner, ""); len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("a refused name stored a conversation: %s", r.body)
	}
	r := e.chat(e.keys["alpha-sk"], `{"message": "hello", "conversation_id": "Events"}`)
	if r.status != http.StatusOK {
		t.Fatalf("naming a conversation Events: %d %s", r.status, r.body)
	}
	if r := e.do(http.MethodGet, "/api/v1/conversations/Events", owner, ""); r.status != http.StatusOK || r.json(t)["id"] != "Events" {
		t.Errorf("reading conversation Events: %d %s", r.status, r.body)
	}
}

func TestUnansweredQuestionFallsBack(t *testing.T) {
	e := newEnv(t)
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
	r := e.chat(e.keys["alpha-sk"], `{"message": "Do you sell second-hand tractors?"}`)
	body := r.json(t)
	if r.status != http.StatusOK || body["answered"] != false || !strings.Contains(body["answer"].(string), "alpha does not know") {
		t.Errorf("want the merchant's fallback: %s", r.body)
	}
}

func TestChatKeyRules(t *testing.T) {
	e := newEnv(t)
	expired := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	e.addMerchant("gamma", func(b *tenant.Bundle) { b.APIKeys[1].ExpiresAt = &expired })
	e.addMerchant("frozen", func(b *tenant.Bundle) { b.Suspended = true })
	e.addMerchant("nofree", func(b *tenant.Bundle) { b.Plan.APIAccess = false })
	msg := `{"message": "hi"}`
	cases := []struct {
		name   string
		key    string
		origin string
		status int
		code   string
	}{
		{"no key", "", "", 401, codeUnauthorized},
		{"unknown key", "sk_aaaaaaaa_" + strings.Repeat("x", 43), "", 401, codeUnauthorized},
		{"expired key", e.keys["gamma-sk"], "", 401, codeUnauthorized},
		{"publishable key without origin", e.keys["alpha-pk"], "", 403, codeOriginNotAllowed},
		{"publishable key from another origin", e.keys["alpha-pk"], "https://evil.example", 403, codeOriginNotAllowed},
		{"publishable key from another merchant's origin", e.keys["alpha-pk"], "https://beta.example", 403, codeOriginNotAllowed},
		{"secret key from a browser", e.keys["alpha-sk"], "https://alpha.example", 403, codeSecretKeyInBrowser},
		{"suspended merchant", e.keys["frozen-sk"], "", 403, codeMerchantSuspended},
		{"secret key without API access", e.keys["nofree-sk"], "", 403, codeAPIAccessNotInPlan},
		{"publishable key without API access is fine", e.keys["nofree-pk"], "https://nofree.example", 200, ""},
		{"publishable key from its origin", e.keys["alpha-pk"], "https://alpha.example", 200, ""},
		{"secret key from a server", e.keys["alpha-sk"], "", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := []string{}
			if tc.origin != "" {
				h = []string{"Origin", tc.origin}
			}
			r := e.chat(tc.key, msg, h...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != "" && r.errorCode(t) != tc.code {
				t.Errorf("code %s, want %s", r.errorCode(t), tc.code)
			}
			if tc.origin != "" && r.header.Get("Access-Control-Allow-Origin") != tc.origin {
				t.Errorf("a browser could not read this answer: Access-Control-Allow-Origin %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

func TestChatPreflight(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodOptions, "/api/v1/chat", map[string]string{
		"Origin": "https://alpha.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-api-key,content-type",
	}, "")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://alpha.example" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
}

// The offline assistant's own words are in the visitor's language when the widget says it, whatever the
// merchant's locale; a language it has no words in gets the merchant's.
func TestChatAnswersInTheVisitorsLanguage(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ language, want string }{
		{"fr-CA", "Bonjour"}, {"pl", "Dzień dobry"}, {"nl", "Hallo! Waarmee"}, {"ja", "Hello!"}, {"", "Hello!"},
	} {
		body := `{"message": "hello"}`
		if tc.language != "" {
			body = fmt.Sprintf(`{"message": "hello", "language": %q}`, tc.language)
		}
		r := e.chat(e.keys["alpha-sk"], body)
		if r.status != http.StatusOK || !strings.HasPrefix(r.json(t)["answer"].(string), tc.want) {
			t.Errorf("language %q: %d %s, want an answer starting %q", tc.language, r.status, r.body, tc.want)
		}
	}
}

func TestChatRejectsBadInput(t *testing.T) {
	e := newEnv(t)
	key := e.keys["alpha-sk"]
	cases := []struct {
		name        string
		body        string
		contentType string
		status      int
		code        string
		mention     string
	}{
		{"malformed JSON", `{"message": "hi"`, "", 400, codeInvalidRequest, "cut short"},
		{"syntax error", `{"message" "hi"}`, "", 400, codeInvalidRequest, "not valid JSON"},
		{"not an object", `["hi"]`, "", 400, codeInvalidRequest, ""},
		{"unknown field", `{"message": "hi", "mesage": "typo"}`, "", 400, codeInvalidRequest, `"mesage"`},
		{"wrong type", `{"message": 42}`, "", 400, codeInvalidRequest, `field "message" must be a string, not number`},
		{"two documents", `{"message": "hi"} {"message": "again"}`, "", 400, codeInvalidRequest, "exactly one"},
		{"duplicate field", `{"message": "hi", "message": "again"}`, "", 400, codeInvalidRequest, `"message" appears twice`},
		{"wrongly cased field", `{"Message": "hi"}`, "", 400, codeInvalidRequest, `"Message"`},
		{"invalid UTF-8", "{\"message\": \"\xff\"}", "", 400, codeInvalidRequest, "not valid JSON"},
		{"empty body", ``, "", 400, codeInvalidRequest, ""},
		{"missing message", `{}`, "", 422, codeValidationFailed, "required"},
		{"empty message", `{"message": ""}`, "", 422, codeValidationFailed, "empty"},
		{"blank message", `{"message": "   \n\t "}`, "", 422, codeValidationFailed, "empty"},
		{"long message", `{"message": "` + strings.Repeat("é", 4001) + `"}`, "", 422, codeValidationFailed, "4001"},
		{"bad conversation id", `{"message": "hi", "conversation_id": "../../etc"}`, "", 422, codeValidationFailed, "conversation_id"},
		{"bad language", `{"message": "hi", "language": "fr; DROP"}`, "", 422, codeValidationFailed, "language"},
		{"long language", `{"message": "hi", "language": "` + strings.Repeat("a", 40) + `"}`, "", 422, codeValidationFailed, "language"},
		{"language not a string", `{"message": "hi", "language": ["fr"]}`, "", 400, codeInvalidRequest, `"language"`},
		{"huge body", `{"message": "` + strings.Repeat("a", 70<<10) + `"}`, "", 413, codePayloadTooLarge, ""},
		{"form post", `message=hi`, "application/x-www-form-urlencoded", 415, codeUnsupportedMedia, "application/json"},
		{"another charset", `{"message": "hi"}`, "application/json; charset=latin1", 415, codeUnsupportedMedia, "UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"X-API-Key": key}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			body := tc.body
			r := e.doRaw(http.MethodPost, "/api/v1/chat", h, body)
			if r.status != tc.status || r.errorCode(t) != tc.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if !strings.Contains(r.json(t)["error"].(map[string]any)["message"].(string), tc.mention) {
				t.Errorf("message does not mention %q: %s", tc.mention, r.body)
			}
		})
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"message": "hi"}`))
	_ = zw.Close()
	if r := e.doRaw(http.MethodPost, "/api/v1/chat", map[string]string{"X-API-Key": key, "Content-Encoding": "gzip"}, gz.String()); r.status != http.StatusUnsupportedMediaType ||
		r.errorCode(t) != codeUnsupportedMedia || !strings.Contains(string(r.body), "Content-Encoding") {
		t.Errorf("a gzipped body: %d %s, want 415 naming Content-Encoding", r.status, r.body)
	}
	r := e.do(http.MethodGet, "/api/v1/chat", map[string]string{"X-API-Key": key}, "")
	if r.status != http.StatusMethodNotAllowed || r.errorCode(t) != codeMethodNotAllowed || r.header.Get("Allow") != "OPTIONS, POST" {
		t.Errorf("GET /chat: %d %v %s", r.status, r.header.Get("Allow"), r.body)
	}
	// Nothing was stored by any of them.
	list := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if n := len(list.json(t)["data"].([]any)); n != 0 {
		t.Errorf("%d conversations were stored by refused requests", n)
	}
	if r := e.doRaw(http.MethodPost, "/api/v1/chat", map[string]string{"X-API-Key": key, "Content-Type": "Application/JSON; charset=UTF-8",
		"Content-Encoding": "identity"}, `{"message": "hi"}`); r.status != http.StatusOK {
		t.Errorf("JSON said to be UTF-8 and not coded: %d %s", r.status, r.body)
	}
}

// doRaw is do with the Content-Type left to the caller (and sent even with an empty body).
func (e *env) doRaw(method, path string, headers map[string]string, body string) response {
	e.t.Helper()
	if _, ok := headers["Content-Type"]; !ok {
		headers["Content-Type"] = "application/json"
	}
	if body == "" {
		body = " " // an all-space body reaches the decoder as empty
	}
	return e.do(method, path, headers, body)
}

func TestRateLimitPerMerchantAcrossKeys(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("slow", func(b *tenant.Bundle) { b.Plan.RequestsPerSecond, b.Plan.Burst = 2, 2 })
	pk, sk := e.keys["slow-pk"], e.keys["slow-sk"]
	for i, key := range []string{pk, sk} {
		h := []string{}
		if key == pk {
			h = []string{"Origin", "https://slow.example"}
		}
		if r := e.chat(key, `{"message": "hi"}`, h...); r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := e.chat(sk, `{"message": "hi"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeRateLimited {
		t.Fatalf("third request in the same instant: %d %s", r.status, r.body)
	}
	if r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit-Policy") != `"merchant";q=2;w=1` ||
		!strings.HasPrefix(r.header.Get("RateLimit"), `"merchant";r=0;`) {
		t.Errorf("rate limit headers: %v", r.header)
	}
	// Another merchant is not affected; the limited one recovers as time passes.
	if r := e.chat(e.keys["alpha-sk"], `{"message": "hi"}`); r.status != 200 {
		t.Errorf("another merchant was limited: %d", r.status)
	}
	e.clock.Advance(time.Second)
	if r := e.chat(sk, `{"message": "hi"}`); r.status != 200 {
		t.Errorf("after a second: %d %s", r.status, r.body)
	}
	// A plan change takes effect without a restart.
	b := e.bundles["slow"]
	b.Plan.RequestsPerSecond, b.Plan.Burst = 50, 50
	e.publish(b)
	e.clock.Advance(time.Second)
	for i := range 10 {
		if r := e.chat(sk, `{"message": "hi"}`); r.status != 200 {
			t.Fatalf("request %d after raising the limit: %d", i, r.status)
		}
	}
}

func TestMonthlyConversationQuota(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("small", func(b *tenant.Bundle) { b.Plan.MonthlyConversations = 2 })
	key := e.keys["small-sk"]
	var first string
	for i := range 2 {
		r := e.chat(key, `{"message": "hi"}`)
		if r.status != 200 {
			t.Fatalf("conversation %d: %d %s", i, r.status, r.body)
		}
		first = r.json(t)["conversation_id"].(string)
	}
	r := e.chat(key, `{"message": "hi"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeConversationQuota || r.header.Get("Retry-After") == "" {
		t.Fatalf("third new conversation: %d %v %s", r.status, r.header, r.body)
	}
	r = e.chat(key, `{"message": "hi", "conversation_id": "brand-new"}`)
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("a new caller-named conversation past the ceiling: %d", r.status)
	}
	if r := e.chat(key, fmt.Sprintf(`{"message": "still there?", "conversation_id": %q}`, first)); r.status != 200 {
		t.Errorf("a running conversation was refused: %d %s", r.status, r.body)
	}
	e.clock.Advance(30 * 24 * time.Hour) // into December
	if r := e.chat(key, `{"message": "hi"}`); r.status != 200 {
		t.Errorf("a new month did not reset the ceiling: %d %s", r.status, r.body)
	}
}

func TestRevokedKeyIsRefusedAtOnce(t *testing.T) {
	e := newEnv(t)
	key := e.keys["alpha-sk"]
	if r := e.chat(key, `{"message": "hi"}`); r.status != 200 {
		t.Fatal(r.status)
	}
	b := e.bundles["alpha"]
	b.APIKeys = b.APIKeys[:1] // the operator dropped the secret key
	e.publish(b)
	if r := e.chat(key, `{"message": "hi"}`); r.status != 401 {
		t.Errorf("a revoked key still works: %d", r.status)
	}
	e.tenants.Delete("secret/alpha")
	if r := e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, "Origin", "https://alpha.example"); r.status != 401 {
		t.Errorf("a deleted merchant's key still works: %d", r.status)
	}
}

func TestKeysNeverReachTheLogs(t *testing.T) {
	e := newEnv(t)
	e.chat(e.keys["alpha-sk"], `{"message": "hi"}`)
	e.chat(e.keys["alpha-pk"], `{"message": "hi"}`, "Origin", "https://evil.example")
	e.chat("sk_wrongkey_"+strings.Repeat("z", 43), `{"message": "hi"}`)
	tok := e.ownerOf("alpha")
	e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": tok}, "")
	e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Bearer not-a-jwt"}, "")
	logs := e.logs.String()
	if !strings.Contains(logs, `"route":"chat"`) {
		t.Fatal("no request was logged; the check would prove nothing")
	}
	for name, secret := range map[string]string{"secret key": e.keys["alpha-sk"], "publishable key": e.keys["alpha-pk"],
		"wrong key": "sk_wrongkey_", "token": strings.TrimPrefix(tok, "Bearer ")} {
		if strings.Contains(logs, secret) {
			t.Errorf("the %s appears in the logs", name)
		}
	}
	if m := e.scrape(); strings.Contains(m, e.keys["alpha-sk"]) || !strings.Contains(m, `parley_runtime_chat_replies_total{answered="true",merchant="alpha"}`) {
		t.Errorf("metrics: %s", m)
	}
}

type panicky struct{}

func (panicky) Respond(context.Context, assistant.Request) (assistant.Reply, error) { panic("boom") }

func TestPanicIsAnInternalError(t *testing.T) {
	e := newEnv(t, func(c *envConfig) { c.chat.Responder = panicky{} })
	r := e.chat(e.keys["alpha-sk"], `{"message": "hi"}`)
	if r.status != http.StatusInternalServerError || r.errorCode(t) != codeInternal || strings.Contains(string(r.body), "boom") {
		t.Errorf("%d %s", r.status, r.body)
	}
	list := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if n := len(list.json(t)["data"].([]any)); n != 0 {
		t.Errorf("a failed chat stored %d conversations", n)
	}
}

// A visitor who leaves mid-request is not a server error: no 500, no error log, nothing half-written.
func TestClientGoneIsNotAServerError(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/chat", strings.NewReader(`{"message": "hello", "conversation_id": "gone"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", e.keys["alpha-sk"])
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	if rec.Code != statusClientClosed {
		t.Errorf("status %d, want %d", rec.Code, statusClientClosed)
	}
	if strings.Contains(e.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a client going away was logged as an error:\n%s", e.logs)
	}
	r := e.do(http.MethodGet, "/api/v1/conversations/gone", map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if r.status != http.StatusNotFound {
		t.Errorf("the abandoned conversation was stored: %d %s", r.status, r.body)
	}
}

// TestTheModelsBoundsPerConversationAndVisitorAreTooManyRequests: a visitor with the page's public key past the
// plan's answers of one conversation, then past its answers of a day, is told so in the error envelope with 429
// and the code the widget reads, and the plan's numbers; the merchant's server with its secret key is not.
func TestTheModelsBoundsPerConversationAndVisitorAreTooManyRequests(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.TurnsPerConversation, b.Plan.TurnsPerVisitorPerDay = 2, 3 })
	visitor := func(body string) response {
		return e.chat(e.keys["alpha-pk"], body, "Origin", "https://alpha.example", headerVisitorID, "visitor-1")
	}
	first := visitor(`{"message": "hello"}`)
	if first.status != http.StatusOK {
		t.Fatalf("the first message: %d %s", first.status, first.body)
	}
	conv, _ := first.json(t)["conversation_id"].(string)
	if r := visitor(`{"message": "and?", "conversation_id": "` + conv + `"}`); r.status != http.StatusOK {
		t.Fatalf("the second message: %d %s", r.status, r.body)
	}
	r := visitor(`{"message": "and then?", "conversation_id": "` + conv + `"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeConversationLimit || !bytes.Contains(r.body, []byte("allows 2 answers")) {
		t.Fatalf("past the conversation's answers: %d %s", r.status, r.body)
	}
	if r := visitor(`{"message": "hello again"}`); r.status != http.StatusOK {
		t.Fatalf("a new conversation: %d %s", r.status, r.body)
	}
	r = visitor(`{"message": "once more"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeVisitorLimit || !bytes.Contains(r.body, []byte("a visitor 3 answers")) {
		t.Fatalf("past the visitor's answers: %d %s", r.status, r.body)
	}
	other := e.chat(e.keys["alpha-pk"], `{"message": "hello"}`, "Origin", "https://alpha.example", headerVisitorID, "visitor-2")
	if other.status != http.StatusOK {
		t.Errorf("another visitor: %d %s", other.status, other.body)
	}
	// The merchant's own server, whose secret key no visitor holds, is bounded by the plan's monthly tokens alone.
	for i := range 4 {
		r := e.chat(e.keys["alpha-sk"], `{"message": "hello", "conversation_id": "server-1"}`, headerVisitorID, "visitor-1")
		if r.status != http.StatusOK {
			t.Fatalf("the server's message %d: %d %s", i+1, r.status, r.body)
		}
	}
}
