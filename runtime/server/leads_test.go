package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// chatFrom sends a chat message with alpha's publishable key from alpha's site, as the widget does.
func (e *env) chatFrom(merchant, visitor, body string) response {
	e.t.Helper()
	return e.chat(e.keys[merchant+"-pk"], body, "Origin", "https://"+merchant+".example", "X-Visitor-ID", visitor)
}

// startFor starts the conversation the body names for a visitor, as the merchant's server does with the secret
// key: a browser continues its visitor's conversations but names no new one.
func (e *env) startFor(merchant, visitor, body string) response {
	e.t.Helper()
	return e.chat(e.keys[merchant+"-sk"], body, "X-Visitor-ID", visitor)
}

func (e *env) leadForm(merchant, visitor, body string) response {
	e.t.Helper()
	return e.do(http.MethodPost, "/api/v1/leads", map[string]string{"X-API-Key": e.keys[merchant+"-pk"],
		"Origin": "https://" + merchant + ".example", "X-Visitor-ID": visitor}, body)
}

func TestChatCapturesLead(t *testing.T) {
	e := newEnv(t)
	res := e.startFor("alpha", "v1", `{"message": "Do you ship to Norway? Mail me at ana@example.com", "conversation_id": "c1"}`)
	if res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	res = e.chatFrom("alpha", "v1", `{"message": "or call me on +47 912 34 567", "conversation_id": "c1"}`)
	if res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	conv := e.do(http.MethodGet, "/api/v1/conversations/c1", owner, "").json(t)
	leads, _ := conv["leads"].([]any)
	if conv["has_lead"] != true || len(leads) != 1 {
		t.Fatalf("conversation: has_lead %v, leads %v", conv["has_lead"], conv["leads"])
	}
	lead := leads[0].(map[string]any)
	if lead["email"] != "ana@example.com" || lead["phone"] != "+47 912 34 567" || lead["source"] != "chat" ||
		lead["visitor_id"] != "v1" || lead["consent"] != false {
		t.Errorf("lead %v", lead)
	}
	list := e.do(http.MethodGet, "/api/v1/leads", owner, "").json(t)
	if data := list["data"].([]any); len(data) != 1 {
		t.Errorf("%d leads, want one updated rather than two", len(data))
	}
	withLead := e.do(http.MethodGet, "/api/v1/conversations?has_lead=true", owner, "").json(t)
	if data := withLead["data"].([]any); len(data) != 1 {
		t.Errorf("%d conversations with a lead, want 1", len(data))
	}
	if o := e.do(http.MethodGet, "/api/v1/analytics/overview", owner, "").json(t); o["leads"] != 1.0 {
		t.Errorf("analytics leads = %v, want 1", o["leads"])
	}
	// The order number is no phone number.
	e.startFor("alpha", "v2", `{"message": "where is order 20261122?", "conversation_id": "c2"}`)
	if conv := e.do(http.MethodGet, "/api/v1/conversations/c2", owner, "").json(t); conv["has_lead"] != false {
		t.Errorf("an order number was taken for a lead: %v", conv["leads"])
	}
}

func TestLeadForm(t *testing.T) {
	e := newEnv(t)
	e.startFor("alpha", "v1", `{"message": "do you sell kayaks?", "conversation_id": "c1"}`)
	res := e.leadForm("alpha", "v1", `{"name": "Ana", "email": "ana@example.com", "message": "Call me", "consent": true, "conversation_id": "c1"}`)
	if res.status != http.StatusCreated {
		t.Fatalf("form: %d %s", res.status, res.body)
	}
	created := res.json(t)
	if created["source"] != "form" || created["conversation_id"] != "c1" || created["consent"] != true {
		t.Errorf("lead %v", created)
	}
	res = e.leadForm("alpha", "v1", `{"phone": "+1 555 010 0199", "consent": true, "conversation_id": "c1"}`)
	if res.status != http.StatusOK {
		t.Fatalf("second form: %d %s", res.status, res.body)
	}
	if l := res.json(t); l["id"] != created["id"] || l["email"] != "ana@example.com" || l["phone"] != "+1 555 010 0199" {
		t.Errorf("completed lead %v, want %v with the phone", l, created["id"])
	}
	// A conversation that does not exist yet (the form before the first message) leaves the lead on its own.
	res = e.leadForm("alpha", "v9", `{"email": "bo@example.com", "consent": true, "conversation_id": "not-yet"}`)
	if res.status != http.StatusCreated || res.json(t)["conversation_id"] != nil {
		t.Errorf("form naming an unknown conversation: %d %s", res.status, res.body)
	}
	// Blank fields count as not given.
	res = e.leadForm("alpha", "v8", `{"email": "   ", "phone": "+1 555 010 0100", "consent": true}`)
	if res.status != http.StatusCreated || res.json(t)["email"] != "" {
		t.Errorf("form with a blank email and a phone: %d %s", res.status, res.body)
	}
	// A secret key from a server works too.
	res = e.do(http.MethodPost, "/api/v1/leads", map[string]string{"X-API-Key": e.keys["alpha-sk"]},
		`{"email": "crm@example.com", "consent": true}`)
	if res.status != http.StatusCreated {
		t.Errorf("form with the secret key: %d %s", res.status, res.body)
	}
}

func TestLeadFormErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"no consent", `{"email": "ana@example.com"}`, 422, codeValidationFailed},
		{"consent refused", `{"email": "ana@example.com", "consent": false}`, 422, codeValidationFailed},
		{"no way to reach", `{"name": "Ana", "consent": true}`, 422, codeValidationFailed},
		{"bad email", `{"email": "ana(at)example.com", "consent": true}`, 422, codeValidationFailed},
		{"mailto parameters in the email", `{"email": "x?cc=evil%40attacker.example&body=hi@shop.example", "consent": true}`, 422, codeValidationFailed},
		{"bad phone", `{"phone": "call me maybe", "consent": true}`, 422, codeValidationFailed},
		{"long name", `{"email": "a@example.com", "consent": true, "name": "` + strings.Repeat("x", 201) + `"}`, 422, codeValidationFailed},
		{"bad conversation id", `{"email": "a@example.com", "consent": true, "conversation_id": "../x"}`, 422, codeValidationFailed},
		{"unknown field", `{"email": "a@example.com", "consent": true, "company": "x"}`, 400, codeInvalidRequest},
		{"wrong type", `{"email": "a@example.com", "consent": "yes"}`, 400, codeInvalidRequest},
		{"malformed", `{"email": `, 400, codeInvalidRequest},
		{"too large", `{"message": "` + strings.Repeat("x", 17<<10) + `", "email": "a@example.com", "consent": true}`, 413, codePayloadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.leadForm("alpha", "v1", tc.body)
			if res.status != tc.status || res.errorCode(t) != tc.code {
				t.Errorf("%d %s, want %d %s", res.status, res.body, tc.status, tc.code)
			}
		})
	}
	h := map[string]string{"X-API-Key": e.keys["alpha-pk"], "Origin": "https://evil.example"}
	if res := e.do(http.MethodPost, "/api/v1/leads", h, `{"email": "a@example.com", "consent": true}`); res.status != 403 ||
		res.errorCode(t) != codeOriginNotAllowed {
		t.Errorf("from another origin: %d %s", res.status, res.body)
	}
	if res := e.do(http.MethodPost, "/api/v1/leads", nil, `{"email": "a@example.com", "consent": true}`); res.status != 401 {
		t.Errorf("without a key: %d %s", res.status, res.body)
	}
	if res := e.do(http.MethodGet, "/api/v1/leads", map[string]string{"Authorization": e.ownerOf("alpha")}, ""); len(res.json(t)["data"].([]any)) != 0 {
		t.Errorf("a refused form was stored: %s", res.body)
	}
}

// TestLeadsIsolation: beta's key and token never reach alpha's leads.
func TestLeadsIsolation(t *testing.T) {
	e := newEnv(t)
	e.startFor("alpha", "v1", `{"message": "I am ana@example.com", "conversation_id": "shared"}`)
	// Beta's form naming alpha's conversation ID finds no such conversation of beta's.
	res := e.leadForm("beta", "v1", `{"email": "eve@example.com", "consent": true, "conversation_id": "shared"}`)
	if res.status != http.StatusCreated || res.json(t)["conversation_id"] != nil {
		t.Fatalf("beta's form: %d %s", res.status, res.body)
	}
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	for _, path := range []string{"/api/v1/leads", "/api/v1/leads?conversation_id=shared"} {
		for _, l := range e.do(http.MethodGet, path, beta, "").json(t)["data"].([]any) {
			if l.(map[string]any)["email"] != "eve@example.com" {
				t.Errorf("beta sees %v at %s", l, path)
			}
		}
	}
	alpha := e.do(http.MethodGet, "/api/v1/conversations/shared", map[string]string{"Authorization": e.ownerOf("alpha")}, "").json(t)
	if leads := alpha["leads"].([]any); len(leads) != 1 || leads[0].(map[string]any)["email"] != "ana@example.com" {
		t.Errorf("alpha's conversation leads %v", alpha["leads"])
	}
}

func TestLeadsListing(t *testing.T) {
	e := newEnv(t)
	for range 5 {
		e.leadForm("alpha", "", `{"email": "a@example.com", "consent": true}`)
		e.clock.Advance(time.Hour)
	}
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	page := e.do(http.MethodGet, "/api/v1/leads?limit=2", owner, "").json(t)
	if len(page["data"].([]any)) != 2 || page["next_cursor"] == nil {
		t.Fatalf("first page %v", page)
	}
	next := e.do(http.MethodGet, "/api/v1/leads?limit=2&cursor="+page["next_cursor"].(string), owner, "").json(t)
	if len(next["data"].([]any)) != 2 {
		t.Errorf("second page %v", next)
	}
	ranged := e.do(http.MethodGet, "/api/v1/leads?from=2026-11-10T13:00:00Z&to=2026-11-10T15:00:00Z", owner, "").json(t)
	if n := len(ranged["data"].([]any)); n != 2 {
		t.Errorf("%d leads in two hours, want 2", n)
	}
	for _, q := range []string{"?cursor=bogus", "?limit=0", "?from=yesterday", "?conversation_id=../x"} {
		if res := e.do(http.MethodGet, "/api/v1/leads"+q, owner, ""); res.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, res.status, res.body)
		}
	}
	// A cursor of alpha's is no cursor for beta.
	betaOwner := map[string]string{"Authorization": e.ownerOf("beta")}
	if res := e.do(http.MethodGet, "/api/v1/leads?cursor="+page["next_cursor"].(string), betaOwner, ""); res.status != http.StatusBadRequest ||
		res.errorCode(t) != codeInvalidCursor {
		t.Errorf("alpha's cursor for beta: %d %s", res.status, res.body)
	}
	if res := e.do(http.MethodGet, "/api/v1/leads", nil, ""); res.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", res.status)
	}
}

// The contact form completes, and answers, the lead of a conversation only for the visitor who started it:
// another holder of the publishable key naming the conversation, with another visitor ID or none, gets a lead
// of its own, learns nothing of the visitor's and changes nothing of it.
func TestLeadFormOnlyForTheConversationsVisitor(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.startFor("alpha", "v1", `{"message": "I am ana@example.com", "conversation_id": "c1"}`)
		// A conversation started without a visitor ID belongs to nobody who could name it.
		if r := e.chat(e.keys["alpha-sk"], `{"message": "I am bo@example.com", "conversation_id": "c2"}`); r.status != http.StatusOK {
			t.Fatalf("chat without a visitor ID: %d %s", r.status, r.body)
		}
		for _, tt := range []struct{ name, visitor, conversation string }{
			{"another visitor", "v2", "c1"},
			{"no visitor ID", "", "c1"},
			{"no visitor ID on an anonymous conversation", "", "c2"},
			{"a visitor on an anonymous conversation", "v1", "c2"},
		} {
			res := e.leadForm("alpha", tt.visitor, `{"email": "eve@example.com", "consent": true, "conversation_id": "`+tt.conversation+`"}`)
			if res.status != http.StatusCreated {
				t.Fatalf("%s: %d %s", tt.name, res.status, res.body)
			}
			if l := res.json(t); l["conversation_id"] != nil || l["email"] != "eve@example.com" {
				t.Errorf("%s: the form answered %v", tt.name, l)
			}
		}
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		for id, email := range map[string]string{"c1": "ana@example.com", "c2": "bo@example.com"} {
			c := e.do(http.MethodGet, "/api/v1/conversations/"+id, owner, "").json(t)
			if leads := c["leads"].([]any); len(leads) != 1 || leads[0].(map[string]any)["email"] != email {
				t.Errorf("conversation %s has leads %v, want only %s's", id, c["leads"], email)
			}
		}
		// The visitor who started it still completes it.
		res := e.leadForm("alpha", "v1", `{"phone": "+1 555 010 0199", "consent": true, "conversation_id": "c1"}`)
		if l := res.json(t); res.status != http.StatusOK || l["conversation_id"] != "c1" || l["email"] != "ana@example.com" {
			t.Errorf("the conversation's visitor: %d %v", res.status, l)
		}
	})
}
