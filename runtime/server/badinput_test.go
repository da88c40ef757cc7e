package server

import (
	"net/http"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

// Bad input is refused with the error envelope alike on both stores, before anything is stored: text PostgreSQL
// cannot hold (NUL), malformed query strings, impossible dates, and JSON bodies with duplicate or wrongly cased
// fields.
func TestBadInput(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		e.addMerchant("alpha", func(b *tenant.Bundle) { b.Plan.Webhooks = true })
		pk := map[string]string{"X-API-Key": e.keys["alpha-pk"], "Origin": "https://alpha.example"}
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		tests := []struct {
			name, method, path string
			headers            map[string]string
			body               string
			status             int
			code               string
		}{
			{"NUL in a chat message", "POST", "/api/v1/chat", pk, `{"message": "a\u0000b"}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"NUL in a lead's name", "POST", "/api/v1/leads", pk, `{"name": "a\u0000", "email": "a@b.example", "consent": true}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"NUL in a lead's message", "POST", "/api/v1/leads", pk, `{"message": "\u0000", "email": "a@b.example", "consent": true}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"NUL in a knowledge title", "POST", "/api/v1/knowledge", owner, `{"title": "a\u0000", "content": "c"}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"NUL in a knowledge content", "POST", "/api/v1/knowledge", owner, `{"title": "t", "content": "c\u0000"}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"NUL in a knowledge tag", "POST", "/api/v1/knowledge", owner, `{"title": "t", "content": "c", "tags": ["a\u0000"]}`, http.StatusUnprocessableEntity, codeValidationFailed},
			{"a duplicate field", "POST", "/api/v1/chat", pk, `{"message": "a", "message": "b"}`, http.StatusBadRequest, codeInvalidRequest},
			{"a duplicate field in a lead", "POST", "/api/v1/leads", pk, `{"email": "a@b.example", "consent": true, "consent": false}`, http.StatusBadRequest, codeInvalidRequest},
			{"a wrongly cased field", "POST", "/api/v1/chat", pk, `{"Message": "a"}`, http.StatusBadRequest, codeInvalidRequest},
			{"a wrongly cased knowledge field", "POST", "/api/v1/knowledge", owner, `{"TITLE": "t", "content": "c"}`, http.StatusBadRequest, codeInvalidRequest},
			{"an unknown field", "POST", "/api/v1/chat", pk, `{"message": "a", "mesage": "b"}`, http.StatusBadRequest, codeInvalidRequest},
			{"NUL in q", "GET", "/api/v1/conversations?q=a%00b", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a knowledge q", "GET", "/api/v1/knowledge?q=%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in tag", "GET", "/api/v1/knowledge?tag=a%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in webhook_id", "GET", "/api/v1/webhooks/deliveries?webhook_id=a%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a cursor", "GET", "/api/v1/conversations?cursor=a%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a leads cursor", "GET", "/api/v1/leads?cursor=%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a knowledge cursor", "GET", "/api/v1/knowledge?cursor=%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a deliveries cursor", "GET", "/api/v1/webhooks/deliveries?cursor=%00", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"invalid UTF-8 in a cursor", "GET", "/api/v1/conversations?cursor=%ff", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"NUL in a knowledge id", "GET", "/api/v1/knowledge/a%00b", owner, "", http.StatusNotFound, codeNotFound},
			{"NUL in a knowledge id to update", "PUT", "/api/v1/knowledge/a%00b", owner, `{"title": "t", "content": "c"}`, http.StatusNotFound, codeNotFound},
			{"NUL in a knowledge id to delete", "DELETE", "/api/v1/knowledge/a%00b", owner, "", http.StatusNotFound, codeNotFound},
			{"invalid UTF-8 in a knowledge id", "GET", "/api/v1/knowledge/%ff", owner, "", http.StatusNotFound, codeNotFound},
			{"a malformed cursor escape", "GET", "/api/v1/conversations?cursor=%%%%zz", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a malformed conversation_id escape", "GET", "/api/v1/leads?conversation_id=x%zz", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a malformed escape in knowledge", "GET", "/api/v1/knowledge?q=%zz", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a malformed escape in deliveries", "GET", "/api/v1/webhooks/deliveries?status=%g1", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a malformed escape in analytics", "GET", "/api/v1/analytics/overview?from=%", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a year-1 date", "GET", "/api/v1/analytics/overview?from=0001-01-01", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"analytics from after today, to left out", "GET", "/api/v1/analytics/overview?from=2999-01-01", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a year-1 time", "GET", "/api/v1/leads?to=0001-01-01T00:00:00Z", owner, "", http.StatusBadRequest, codeInvalidRequest},
			{"a year-9999 date", "GET", "/api/v1/conversations?to=9999-12-31", owner, "", http.StatusBadRequest, codeInvalidRequest},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.t = t
				r := e.do(tt.method, tt.path, tt.headers, tt.body)
				if r.status != tt.status {
					t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
				}
				if code := r.errorCode(t); code != tt.code {
					t.Errorf("code %s, want %s", code, tt.code)
				}
			})
		}
		e.t = t
		// Nothing of it was stored.
		for _, path := range []string{"/api/v1/conversations", "/api/v1/leads", "/api/v1/knowledge"} {
			r := e.do(http.MethodGet, path, owner, "")
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
			if data := r.json(t)["data"].([]any); len(data) != 0 {
				t.Errorf("%s holds %d items after bad input", path, len(data))
			}
		}
	})
}
