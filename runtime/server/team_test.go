package server

import (
	"net/http"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// TestTeamHandoff walks a conversation through every status over the REST interface, on each store: a visitor
// asks for a person, the team answers, releases and closes, with the refused moves and the tries to cross from
// one merchant or visitor to another.
func TestTeamHandoff(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("acme", func(b *tenant.Bundle) { b.DisplayName = "Acme" })
		e.addMerchant("beta", func(b *tenant.Bundle) {})
		visitor := func(body string) response {
			return e.chat(e.keys["acme-pk"], body, "Origin", "https://acme.example", "X-Visitor-ID", "visitor-1")
		}
		owner := map[string]string{"Authorization": e.ownerOf("acme")}
		other := map[string]string{"Authorization": e.ownerOf("beta")}
		secret := map[string]string{"X-API-Key": e.keys["acme-sk"]}

		r := visitor(`{"message": "Do you ship to Norway?"}`)
		if r.status != http.StatusOK || r.json(t)["status"] != "bot" {
			t.Fatalf("first message: %d %s", r.status, r.body)
		}
		id := r.json(t)["conversation_id"].(string)
		conv := "/api/v1/conversations/" + id

		// Another merchant, another visitor and a publishable key reach nothing of it.
		for _, tc := range []struct {
			name    string
			headers map[string]string
			path    string
			status  int
			code    string
		}{
			{"another merchant's message", other, conv + "/messages", 404, codeNotFound},
			{"another merchant's take-over", other, conv + "/handoff", 404, codeNotFound},
			{"another merchant's release", other, conv + "/release", 404, codeNotFound},
			{"another merchant's close", other, conv + "/close", 404, codeNotFound},
			{"a publishable key's message", map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example"},
				conv + "/messages", 403, codeForbidden},
			{"another merchant's secret key", map[string]string{"X-API-Key": e.keys["beta-sk"]}, conv + "/close", 404, codeNotFound},
			{"no credentials", map[string]string{}, conv + "/close", 401, codeUnauthorized},
		} {
			if r := e.do(http.MethodPost, tc.path, tc.headers, `{"text": "hi"}`); r.status != tc.status || r.errorCode(t) != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
			}
		}
		pk := map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example"}
		if r := e.do(http.MethodGet, "/api/v1/conversations?status=waiting", pk, ""); r.status != 403 || r.errorCode(t) != codeForbidden {
			t.Errorf("a publishable key reading the team's queue: %d %s, want 403", r.status, r.body)
		}
		r = e.chat(e.keys["acme-pk"], `{"conversation_id": "`+id+`", "handoff": true}`, "Origin", "https://acme.example", "X-Visitor-ID", "visitor-2")
		if r.status != 404 || r.errorCode(t) != codeNotFound {
			t.Errorf("another visitor asking for a person in the conversation: %d %s, want 404", r.status, r.body)
		}

		// Nobody of the team is there yet: the visitor is told so, and the conversation waits.
		r = visitor(`{"conversation_id": "` + id + `", "message": "Can I talk to a human?"}`)
		if j := r.json(t); r.status != 200 || j["status"] != "waiting" || j["agents_available"] != false || j["answer"] == "" {
			t.Fatalf("asking for a person: %d %s", r.status, r.body)
		}
		r = e.do(http.MethodGet, "/api/v1/conversations?status=waiting", owner, "")
		page := r.json(t)["data"].([]any)
		if r.status != 200 || len(page) != 1 || page[0].(map[string]any)["id"] != id || page[0].(map[string]any)["waiting_since"] == nil {
			t.Fatalf("the queue: %d %s", r.status, r.body)
		}
		if r := e.do(http.MethodGet, "/api/v1/conversations?status=nobody", owner, ""); r.status != 400 || r.errorCode(t) != codeInvalidRequest {
			t.Errorf("an unknown status: %d %s", r.status, r.body)
		}
		// The team has looked at its queue: the next visitor who asks is told someone is there.
		r2 := e.chat(e.keys["acme-pk"], `{"message": "Mitarbeiter bitte"}`, "Origin", "https://acme.example", "X-Visitor-ID", "visitor-3")
		if j := r2.json(t); j["status"] != "waiting" || j["agents_available"] != true {
			t.Errorf("asking with the team there: %s", r2.body)
		}

		// Waiting, the bot is silent.
		r = visitor(`{"conversation_id": "` + id + `", "message": "Hello? Do you ship to Norway?"}`)
		if j := r.json(t); r.status != 200 || j["status"] != "waiting" || j["answer"] != "" || j["answered"] != false {
			t.Errorf("a message while waiting: %d %s; want no answer", r.status, r.body)
		}

		for _, bad := range []string{`{}`, `{"text": "   "}`, `{"text": 5}`, `{"text": "hi", "extra": 1}`, `not json`} {
			if r := e.do(http.MethodPost, conv+"/messages", owner, bad); r.status < 400 || r.status >= 500 {
				t.Errorf("team message %s: %d %s, want a 4xx", bad, r.status, r.body)
			}
		}
		if r := e.do(http.MethodPost, "/api/v1/conversations/nope/messages", owner, `{"text": "hi"}`); r.status != 404 {
			t.Errorf("a message into no conversation: %d %s", r.status, r.body)
		}

		// The team answers, from its helpdesk with the secret key.
		r = e.do(http.MethodPost, conv+"/messages", secret, `{"text": "Hi, Anna here: yes, in 5 days.", "author": "Anna"}`)
		if r.status != 201 {
			t.Fatalf("the team's message: %d %s", r.status, r.body)
		}
		if j := r.json(t); j["conversation"].(map[string]any)["status"] != "agent" || j["message"].(map[string]any)["author"] != "Anna" {
			t.Errorf("the team's message: %s", r.body)
		}
		r = visitor(`{"conversation_id": "` + id + `", "message": "Thanks!"}`)
		if j := r.json(t); j["status"] != "agent" || j["answer"] != "" {
			t.Errorf("a message to the team: %s; want no bot answer", r.body)
		}
		r = e.do(http.MethodGet, conv, owner, "")
		msgs := r.json(t)["messages"].([]any)
		if r.json(t)["status"] != "agent" || len(msgs) != 7 || msgs[5].(map[string]any)["role"] != "agent" {
			t.Errorf("the conversation: %s", r.body)
		}

		// Released, the bot answers again; taken over, it is silent again.
		if r := e.do(http.MethodPost, conv+"/release", owner, ""); r.status != 200 || r.json(t)["status"] != "bot" {
			t.Fatalf("release: %d %s", r.status, r.body)
		}
		if r := visitor(`{"conversation_id": "` + id + `", "message": "Do you ship to Sweden?"}`); r.json(t)["status"] != "bot" || r.json(t)["answer"] == "" {
			t.Errorf("after the release: %s; want the bot's answer", r.body)
		}
		if r := e.do(http.MethodPost, conv+"/handoff", owner, ""); r.status != 200 || r.json(t)["status"] != "agent" {
			t.Fatalf("take over: %d %s", r.status, r.body)
		}
		if r := e.do(http.MethodPost, conv+"/close", owner, ""); r.status != 200 || r.json(t)["status"] != "closed" {
			t.Fatalf("close: %d %s", r.status, r.body)
		}

		// Closed, nothing goes in and nothing moves it.
		if r := visitor(`{"conversation_id": "` + id + `", "message": "Hello?"}`); r.status != 409 || r.errorCode(t) != codeConversationClosed {
			t.Errorf("a visitor's message into the closed conversation: %d %s", r.status, r.body)
		}
		if r := visitor(`{"conversation_id": "` + id + `", "handoff": true}`); r.status != 409 || r.errorCode(t) != codeConversationClosed {
			t.Errorf("asking for a person in the closed conversation: %d %s", r.status, r.body)
		}
		for _, op := range []string{"/messages", "/handoff", "/release"} {
			if r := e.do(http.MethodPost, conv+op, owner, `{"text": "hi"}`); r.status != 409 || r.errorCode(t) != codeConversationClosed {
				t.Errorf("%s of the closed conversation: %d %s", op, r.status, r.body)
			}
		}
		if r := e.do(http.MethodPost, conv+"/close", owner, ""); r.status != 200 {
			t.Errorf("closing again: %d %s", r.status, r.body)
		}

		r = e.do(http.MethodGet, "/api/v1/analytics/overview", owner, "")
		if j := r.json(t); j["handoffs"] != float64(2) || j["human_replies"] != float64(1) {
			t.Errorf("analytics: %s", r.body)
		}
	})
}
