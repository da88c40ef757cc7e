package server

import (
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/tenant"
)

// FuzzChatBody sends arbitrary bodies to the chat endpoint: the answer is always a documented 200 or 4xx,
// never a 500 or a panic (every answer is also validated against the OpenAPI document).
func FuzzChatBody(f *testing.F) {
	e := newEnv(f)
	e.addMerchant("fuzz", func(b *tenant.Bundle) { b.Plan.RequestsPerSecond, b.Plan.Burst = 100000, 100000 })
	for _, seed := range []string{
		`{"message": "How long does shipping take?"}`,
		`{"message": "hi", "conversation_id": "c-1"}`,
		`{"message": ""}`, `{"message": null}`, `{"message": ["x"]}`, `{}`, `[]`, `null`, `"x"`, `{"message": "\u0000"}`,
		`{"message": "a", "conversation_id": 7}`, `{"message": "a"}{}`, `{"message": "` + "\xff" + `"}`,
	} {
		f.Add(seed)
	}
	key := e.keys["fuzz-sk"]
	f.Fuzz(func(t *testing.T, body string) {
		e.t = t
		r := e.chat(key, body)
		if r.status >= 500 {
			t.Fatalf("body %q: %d %s", body, r.status, r.body)
		}
		if r.status != http.StatusOK {
			if code := r.errorCode(t); code == "" {
				t.Fatalf("no error code for %q", body)
			}
			return
		}
		if !utf8.Valid(r.body) {
			t.Fatalf("the answer is not UTF-8")
		}
	})
}
