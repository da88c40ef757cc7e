package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// rate sends a visitor's rating of an answer with the merchant's publishable key from its site, as the widget does.
func (e *env) rate(merchant, visitor, body string) response {
	e.t.Helper()
	return e.do(http.MethodPost, "/api/v1/chat/feedback", map[string]string{"X-API-Key": e.keys[merchant+"-pk"],
		"Origin": "https://" + merchant + ".example", "X-Visitor-ID": visitor}, body)
}

func (e *env) rateConversation(merchant, visitor, body string) response {
	e.t.Helper()
	return e.do(http.MethodPost, "/api/v1/chat/satisfaction", map[string]string{"X-API-Key": e.keys[merchant+"-pk"],
		"Origin": "https://" + merchant + ".example", "X-Visitor-ID": visitor}, body)
}

// answerID starts a conversation of the visitor and returns its ID and its answer's.
func (e *env) answerID(merchant, visitor, conversation string) (string, string) {
	e.t.Helper()
	res := e.startFor(merchant, visitor, `{"message": "Do you ship to Norway?", "conversation_id": "`+conversation+`"}`)
	if res.status != http.StatusOK {
		e.t.Fatalf("chat: %d %s", res.status, res.body)
	}
	body := res.json(e.t)
	return body["conversation_id"].(string), body["message_id"].(string)
}

func TestRateAnswer(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("alpha", func(b *tenant.Bundle) {
			b.Plan.Webhooks = true
			b.Webhooks = []tenant.Webhook{{ID: "crm", URL: "https://crm.example/hooks", SigningSecrets: []string{"whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0"},
				Events: []tenant.Event{tenant.EventFeedbackCreated}}}
		})
		conv, msg := e.answerID("alpha", "v1", "c1")
		_, otherMsg := e.answerID("alpha", "v2", "c2")
		_, betaMsg := e.answerID("beta", "v1", "c1")
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}

		// Isolation first: another visitor's answer, another merchant's, a message that is no answer.
		for name, res := range map[string]response{
			"another visitor's answer":  e.rate("alpha", "v1", `{"message_id": "`+otherMsg+`", "rating": "down"}`),
			"another merchant's answer": e.rate("alpha", "v1", `{"message_id": "`+betaMsg+`", "rating": "down"}`),
			"the answer, as another":    e.rate("alpha", "v2", `{"message_id": "`+msg+`", "rating": "down"}`),
			"no such message":           e.rate("alpha", "v1", `{"message_id": "msg_nothing", "rating": "down"}`),
		} {
			if res.status != http.StatusNotFound || res.errorCode(t) != "not_found" {
				t.Errorf("%s: %d %s, want 404 not_found", name, res.status, res.body)
			}
		}
		if res := e.do(http.MethodGet, "/api/v1/conversations/c2", owner, ""); strings.Contains(string(res.body), `"feedback"`) {
			t.Errorf("another visitor's conversation holds a rating: %s", res.body)
		}

		for i, body := range []string{
			`{"message_id": "` + msg + `", "rating": "up"}`,
			`{"message_id": "` + msg + `", "rating": "up"}`,
			`{"message_id": "` + msg + `", "rating": "down", "comment": "  It took two weeks, not two days.  "}`,
		} {
			if res := e.rate("alpha", "v1", body); res.status != http.StatusOK {
				t.Fatalf("rating %d: %d %s", i, res.status, res.body)
			}
		}
		detail := e.do(http.MethodGet, "/api/v1/conversations/"+conv, owner, "").json(t)
		answer := detail["messages"].([]any)[1].(map[string]any)
		fb, _ := answer["feedback"].(map[string]any)
		if fb["rating"] != "down" || fb["comment"] != "It took two weeks, not two days." {
			t.Errorf("the answer's feedback in the detail = %v, want the last rating, trimmed", answer["feedback"])
		}
		// One event for the first rating, none for its repetition, one for the change.
		deliveries := e.do(http.MethodGet, "/api/v1/webhooks/deliveries?event_type=feedback.created", owner, "").json(t)
		if n := len(deliveries["data"].([]any)); n != 2 {
			t.Errorf("%d feedback.created deliveries, want 2", n)
		}

		if res := e.rateConversation("alpha", "v2", `{"conversation_id": "c1", "score": 1}`); res.status != http.StatusNotFound {
			t.Errorf("rating another visitor's conversation: %d %s, want 404", res.status, res.body)
		}
		if res := e.rateConversation("alpha", "v1", `{"conversation_id": "c1", "score": 4, "comment": "fine"}`); res.status != http.StatusOK {
			t.Fatalf("rating the conversation: %d %s", res.status, res.body)
		}
		detail = e.do(http.MethodGet, "/api/v1/conversations/c1", owner, "").json(t)
		if sat, _ := detail["satisfaction"].(map[string]any); sat["score"] != 4.0 || sat["comment"] != "fine" {
			t.Errorf("satisfaction in the detail = %v", detail["satisfaction"])
		}
	})
}

func TestRateAnswerBadInput(t *testing.T) {
	e := newEnv(t)
	_, msg := e.answerID("alpha", "v1", "c1")
	long := strings.Repeat("x", 501)
	for name, c := range map[string]struct {
		visitor, body string
		status        int
	}{
		"no visitor":         {"", `{"message_id": "` + msg + `", "rating": "up"}`, http.StatusBadRequest},
		"no message":         {"v1", `{"rating": "up"}`, http.StatusUnprocessableEntity},
		"empty message":      {"v1", `{"message_id": "", "rating": "up"}`, http.StatusUnprocessableEntity},
		"no rating":          {"v1", `{"message_id": "` + msg + `"}`, http.StatusUnprocessableEntity},
		"not a rating":       {"v1", `{"message_id": "` + msg + `", "rating": "meh"}`, http.StatusUnprocessableEntity},
		"comment too long":   {"v1", `{"message_id": "` + msg + `", "rating": "down", "comment": "` + long + `"}`, http.StatusUnprocessableEntity},
		"unknown field":      {"v1", `{"message_id": "` + msg + `", "rating": "up", "stars": 5}`, http.StatusBadRequest},
		"not JSON":           {"v1", `{"message_id":`, http.StatusBadRequest},
		"odd message ID":     {"v1", `{"message_id": "../../x", "rating": "up"}`, http.StatusNotFound},
		"rating is a number": {"v1", `{"message_id": "` + msg + `", "rating": 1}`, http.StatusBadRequest},
	} {
		res := e.rate("alpha", c.visitor, c.body)
		if res.status != c.status {
			t.Errorf("%s: %d %s, want %d", name, res.status, res.body, c.status)
		}
	}
	for name, body := range map[string]string{
		"score 0":         `{"conversation_id": "c1", "score": 0}`,
		"score 6":         `{"conversation_id": "c1", "score": 6}`,
		"no score":        `{"conversation_id": "c1"}`,
		"no conversation": `{"score": 3}`,
	} {
		if res := e.rateConversation("alpha", "v1", body); res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, res.status, res.body)
		}
	}
}
