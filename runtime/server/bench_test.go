package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/runtime/tenant"
)

// BenchmarkChat measures POST /api/v1/chat in process, without the network: a new conversation per request
// against a 1,000-item knowledge base. `make bench` measures it over HTTP with wrk.
func BenchmarkChat(b *testing.B) {
	e := newEnv(b)
	e.addMerchant("alpha", func(bd *tenant.Bundle) { bd.Plan.RequestsPerSecond, bd.Plan.Burst = 1_000_000, 1_000_000 })
	items := demo.Knowledge()
	for i := range 1000 {
		it := items[i%len(items)]
		e.addKnowledge("alpha", fmt.Sprintf("%s (range %d)", it.Title, i), it.Content)
	}
	e.validate = false
	key := e.keys["alpha-sk"]
	b.ReportAllocs()
	b.SetParallelism(16) // like a load generator's many connections
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/chat", strings.NewReader(`{"message": "How long does shipping to Canada take?"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", key)
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Errorf("%d %s", rec.Code, rec.Body)
				return
			}
		}
	})
}
