package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
	"github.com/parley-dev/parley/runtime/tenant"
)

// BenchmarkChat measures POST /api/v1/chat in process, without the network: a new conversation per request
// against a 1,000-item knowledge base, logging at parley dev's level (warn). `make bench` measures it over HTTP
// with wrk; this one gives CPU and allocation profiles of the chat path:
//
//	go test ./runtime/server -run '^$' -bench 'BenchmarkChat$' -cpuprofile cpu.out -memprofile mem.out
func BenchmarkChat(b *testing.B) {
	e := newEnv(b, func(c *envConfig) {
		c.server.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	e.addMerchant("alpha", func(bd *tenant.Bundle) { bd.Plan.RequestsPerSecond, bd.Plan.Burst = 1_000_000, 1_000_000 })
	items := demo.Knowledge()
	now := time.Now().UTC()
	for i := range 1000 {
		it := items[i%len(items)]
		k := store.Knowledge{ID: fmt.Sprintf("kn_bench_%04d", i), MerchantID: "alpha", Title: fmt.Sprintf("%s (range %d)", it.Title, i),
			Content: it.Content, URL: it.URL, Tags: it.Tags, CreatedAt: now, UpdatedAt: now}
		if err := storetest.WriteKnowledge(b.Context(), e.store, k); err != nil {
			b.Fatal(err)
		}
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
