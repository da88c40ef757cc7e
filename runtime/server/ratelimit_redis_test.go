package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Two replicas with Redis limiters share a merchant's rate: what one allowed, the other does not allow again,
// and the refusal carries the same headers as with the in-process limiter.
func TestRateLimitSharedByReplicasThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	limiter := func() RateLimiter {
		c, err := ratelimit.NewRedisClient(ratelimit.RedisConfig{Addr: srv.Addr})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		l, err := ratelimit.NewRedis(c, ratelimit.RedisOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	var cfg *Config
	e := newEnv(t, func(c *envConfig) { c.server.Limiter = limiter(); cfg = &c.server })
	other := *cfg
	other.Registry, other.Limiter = prometheus.NewRegistry(), limiter()
	replica, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	e.addMerchant("slow", func(b *tenant.Bundle) { b.Plan.RequestsPerSecond, b.Plan.Burst = 2, 2 })
	onReplica := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/chat", strings.NewReader(`{"message": "hi"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", e.keys["slow-sk"])
		rec := httptest.NewRecorder()
		replica.ServeHTTP(rec, req)
		return rec
	}

	if r := e.chat(e.keys["slow-sk"], `{"message": "hi"}`); r.status != http.StatusOK {
		t.Fatalf("first request: %d %s", r.status, r.body)
	}
	if rec := onReplica(); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("RateLimit"), `"merchant";r=0;`) {
		t.Fatalf("second request, on the other replica: %d, RateLimit %q", rec.Code, rec.Header().Get("RateLimit"))
	}
	r := e.chat(e.keys["slow-sk"], `{"message": "hi"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != codeRateLimited {
		t.Fatalf("third request: the first replica did not count the other's request: %d %s", r.status, r.body)
	}
	if r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit-Policy") != `"merchant";q=2;w=1` ||
		!strings.HasPrefix(r.header.Get("RateLimit"), `"merchant";r=0;`) {
		t.Errorf("rate limit headers: %v", r.header)
	}
	if rec := onReplica(); rec.Code != http.StatusTooManyRequests {
		t.Errorf("fourth request, on the other replica: %d", rec.Code)
	}
	if r := e.chat(e.keys["alpha-sk"], `{"message": "hi"}`); r.status != http.StatusOK {
		t.Errorf("another merchant was limited: %d", r.status)
	}
}
