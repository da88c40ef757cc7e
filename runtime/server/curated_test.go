package server

import (
	"net/http"
	"testing"
)

// TestCuratedAnswers: an item marked curated needs a question; a visitor who asks one of its questions gets its
// content word for word, citing it, and once the mark is taken off the same question is answered from the item's
// best sentences. Another merchant's visitors never get it, and cannot read or change the item (404).
func TestCuratedAnswers(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		owner := map[string]string{"Authorization": e.ownerOf("alpha")}
		const content = "Yes. Orders placed before noon ship the same day. Delivery to Canada takes 5 to 8 business days. Customs fees are included."
		for name, body := range map[string]string{
			"no questions":    `{"title": "Canada", "content": "x", "curated": true}`,
			"empty questions": `{"title": "Canada", "content": "x", "questions": [], "curated": true}`,
			"not a boolean":   `{"title": "Canada", "content": "x", "questions": ["a?"], "curated": "yes"}`,
		} {
			if res := e.do(http.MethodPost, "/api/v1/knowledge", owner, body); res.status/100 != 4 || res.json(t)["error"] == nil {
				t.Errorf("%s: %d %s, want a 4xx error", name, res.status, res.body)
			}
		}
		res := e.do(http.MethodPost, "/api/v1/knowledge", owner, `{"title": "Shipping to Canada", "content": "`+content+`",
			"questions": ["Do you ship to Canada?"], "curated": true}`)
		if res.status != http.StatusCreated || res.json(t)["curated"] != true {
			t.Fatalf("creating a curated item: %d %s", res.status, res.body)
		}
		id := res.json(t)["id"].(string)
		if got := e.do(http.MethodGet, "/api/v1/knowledge/"+id, owner, "").json(t); got["curated"] != true {
			t.Errorf("the item read back: %v", got)
		}

		ask := func(merchant, visitor, conversation string) map[string]any {
			t.Helper()
			res := e.startFor(merchant, visitor, `{"message": "do you ship to canada", "conversation_id": "`+conversation+`"}`)
			if res.status != http.StatusOK {
				t.Fatalf("chat: %d %s", res.status, res.body)
			}
			return res.json(t)
		}
		a := ask("alpha", "v1", "c1")
		sources, _ := a["sources"].([]any)
		if a["answer"] != content || len(sources) != 1 || sources[0].(map[string]any)["knowledge_id"] != id {
			t.Errorf("the curated answer: %v; want the content word for word, citing the item", a)
		}
		if b := ask("beta", "v1", "b1"); b["answer"] == content {
			t.Errorf("another merchant's visitor got alpha's curated answer: %v", b)
		}
		beta := map[string]string{"Authorization": e.ownerOf("beta")}
		if res := e.do(http.MethodPut, "/api/v1/knowledge/"+id, beta, `{"title": "x", "content": "y"}`); res.status != http.StatusNotFound {
			t.Errorf("another merchant updating the item: %d, want 404", res.status)
		}

		res = e.do(http.MethodPut, "/api/v1/knowledge/"+id, owner, `{"title": "Shipping to Canada", "content": "`+content+`",
			"questions": ["Do you ship to Canada?"]}`)
		if res.status != http.StatusOK || res.json(t)["curated"] != false {
			t.Fatalf("taking the mark off: %d %s", res.status, res.body)
		}
		if a := ask("alpha", "v2", "c2"); a["answer"] == content || a["answered"] != true {
			t.Errorf("without the mark: %v; want an answer of the item's best sentences", a)
		}
	})
}
