package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/ratelimit"
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

// The owners' calls have a budget of their own: visitors who used up the merchant's rate do not lock the owner
// out, and an owner at work takes nothing from the visitors.
func TestOwnersHaveTheirOwnRateBudget(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("busy", func(b *tenant.Bundle) { b.Plan.RequestsPerSecond, b.Plan.Burst = 1, 2 })
	e.addKnowledge("busy", "Returns", "You can return unworn items within 60 days for a full refund.")
	owner := map[string]string{"Authorization": e.ownerOf("busy")}
	for range ratelimit.OwnerBurst - 1 { // adding the item was the first

		if r := e.do(http.MethodGet, "/api/v1/usage", owner, ""); r.status != http.StatusOK ||
			!strings.HasPrefix(r.header.Get("RateLimit-Policy"), `"owners";`) {
			t.Fatalf("an owner's call: %d %s %s", r.status, r.header.Get("RateLimit-Policy"), r.body)
		}
	}
	// The owners spent their whole burst; the visitors' bucket is untouched.
	for i := range 2 {
		if r := e.chat(e.keys["busy-sk"], `{"message": "How do returns work?"}`); r.status != http.StatusOK {
			t.Fatalf("visitor %d after the owner's calls: %d %s", i, r.status, r.body)
		}
	}
	if r := e.chat(e.keys["busy-sk"], `{"message": "How do returns work?"}`); r.status != http.StatusTooManyRequests {
		t.Fatalf("a third visitor within the second: %d", r.status)
	}
	// The visitors spent theirs; the owner past their own burst is refused by their own budget.
	if r := e.do(http.MethodGet, "/api/v1/usage", owner, ""); r.status != http.StatusTooManyRequests ||
		!strings.HasPrefix(r.header.Get("RateLimit"), `"owners";r=0`) {
		t.Fatalf("an owner past their burst: %d %s", r.status, r.header.Get("RateLimit"))
	}
	e.clock.Advance(time.Second)
	if r := e.do(http.MethodGet, "/api/v1/usage", owner, ""); r.status != http.StatusOK {
		t.Errorf("an owner a second later, with the visitors' bucket empty: %d", r.status)
	}
}

// The operator's usage report is on the metrics listener with every merchant's conversations this month, and not
// on the public port.
func TestUsageReportForTheOperator(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("capped", func(b *tenant.Bundle) { b.Plan.MonthlyConversations = 3 })
	if r := e.chat(e.keys["capped-sk"], `{"message": "Hello"}`); r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rec := httptest.NewRecorder()
	MetricsHandler(e.metrics, e.tenants, e.svc).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, contract.UsagePath, nil))
	var report contract.UsageReport
	if err := json.Unmarshal(rec.Body.Bytes(), &report); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("%d %v %s", rec.Code, err, rec.Body)
	}
	want := map[string]contract.MerchantUsage{"capped": {Conversations: 1, ConversationLimit: 3}, "alpha": {}, "beta": {}}
	if !reflect.DeepEqual(report.Merchants, want) || report.MonthStart.Day() != 1 || report.ObservedAt.IsZero() {
		t.Errorf("report %+v, want merchants %+v", report, want)
	}
	if r := e.do(http.MethodGet, contract.UsagePath, nil, ""); r.status != http.StatusNotFound {
		t.Errorf("the report on the public port: %d", r.status)
	}
}
