package server

import (
	"net/http"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

func TestUsage(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("capped", func(b *tenant.Bundle) { b.Plan.MonthlyConversations = 3; b.Plan.KnowledgeItems = 10 })
	get := func(merchant string) map[string]any {
		t.Helper()
		r := e.do(http.MethodGet, "/api/v1/usage", map[string]string{"Authorization": e.ownerOf(merchant)}, "")
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return r.json(t)
	}
	counter := func(u map[string]any, name string) (used, limit any) {
		c := u[name].(map[string]any)
		return c["used"], c["limit"]
	}
	if used, limit := counter(get("capped"), "conversations"); used != 0.0 || limit != 3.0 {
		t.Errorf("before any conversation: %v of %v", used, limit)
	}
	e.addKnowledge("capped", "Returns", "You can return unworn items within 60 days for a full refund.")
	if r := e.chat(e.keys["capped-sk"], `{"message": "How do returns work?"}`); r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	u := get("capped")
	if used, limit := counter(u, "conversations"); used != 1.0 || limit != 3.0 {
		t.Errorf("after a conversation: %v of %v", used, limit)
	}
	if used, limit := counter(u, "knowledge_items"); used != 1.0 || limit != 10.0 {
		t.Errorf("knowledge: %v of %v", used, limit)
	}
	// Another merchant's usage is its own, and a plan without ceilings says null.
	if used, limit := counter(get("alpha"), "conversations"); used != 0.0 || limit != nil {
		t.Errorf("alpha: %v of %v", used, limit)
	}
}
