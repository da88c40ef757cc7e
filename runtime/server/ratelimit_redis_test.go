//go:build integration

package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// redisLimiter is one replica's Redis limiter: its own client and connection pool, sharing only Redis.
func redisLimiter(t *testing.T, addr string) *ratelimit.Redis {
	t.Helper()
	c, err := ratelimit.NewRedisClient(ratelimit.RedisConfig{Addr: addr})
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

// Two replicas with Redis limiters share a merchant's rate: what one allowed, the other does not allow again,
// and the refusal carries the same headers as with the in-process limiter.
func TestRateLimitSharedByReplicasThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	var cfg *Config
	e := newEnv(t, func(c *envConfig) { c.server.Limiter = redisLimiter(t, srv.Addr); cfg = &c.server })
	other := *cfg
	other.Registry, other.Limiter = prometheus.NewRegistry(), redisLimiter(t, srv.Addr)
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

// redisReplicas are two servers on one store, each with its own Redis limiters on one Redis, as two replicas of
// `parley runtime --redis-address` build them.
func redisReplicas(t *testing.T, addr string, edit func(*tenant.Bundle)) (*env, [2]*Server) {
	t.Helper()
	var cfg *Config
	e := newEnv(t, func(c *envConfig) {
		l := redisLimiter(t, addr)
		c.server.Limiter, c.server.Conversations = l, l.Keyed()
		cfg = &c.server
	})
	other := *cfg
	l := redisLimiter(t, addr)
	other.Registry, other.Limiter, other.Conversations = prometheus.NewRegistry(), l, l.Keyed()
	replica, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	e.addMerchant("capped", edit)
	return e, [2]*Server{e.srv, replica}
}

// serveFrom sends a request to one replica, from a client address.
func serveFrom(s *Server, from, method, path string, headers map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = from + ":40000"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// The abuse limits hold across replicas: new conversations from one address, or by one visitor, alternating
// between two replicas sharing Redis, are allowed exactly the plan's number of times in all (each replica
// counting its own would allow twice as many), and the Redis round trips of the abuse limits are only for new
// conversations.
func TestAbuseLimitsSharedByReplicasThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	e, replicas := redisReplicas(t, srv.Addr, func(b *tenant.Bundle) {
		b.Plan.MonthlyConversations = 1000
		b.Plan.ConversationsPerAddressPerHour, b.Plan.ConversationsPerVisitorPerHour = 6, 3
	})
	chat := func(i int, from, visitor, body string) *httptest.ResponseRecorder {
		return serveFrom(replicas[i%2], from, http.MethodPost, "/api/v1/chat", map[string]string{
			"X-API-Key": e.keys["capped-pk"], "Origin": "https://capped.example", "X-Visitor-ID": visitor}, body)
	}
	tests := []struct {
		name, from string
		visitor    func(i int) string
		want       int
		retryAfter int // seconds until the next new conversation: the hour over the limit
	}{
		{"one visitor", "192.0.2.10", func(int) string { return "v1" }, 3, 1200},
		{"one address, a new visitor each time", "192.0.2.20", func(i int) string { return fmt.Sprint("v-", i) }, 6, 600},
		{"one IPv6 /64", "2001:db8:7:7::1", func(i int) string { return fmt.Sprint("w-", i) }, 6, 600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			allowed := 0
			for i := range 3 * tc.want {
				from := tc.from
				if strings.Contains(from, ":") {
					from = fmt.Sprintf("[2001:db8:7:7::%x]", i+1) // another address of the same /64
				}
				rec := chat(i, from, tc.visitor(i), `{"message": "hi"}`)
				switch rec.Code {
				case http.StatusOK:
					allowed++
				case http.StatusTooManyRequests:
					if !strings.Contains(rec.Body.String(), codeConversationRateLimited) {
						t.Fatalf("request %d: %s", i, rec.Body)
					}
					if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || s < tc.retryAfter-5 || s > tc.retryAfter {
						t.Errorf("request %d: Retry-After %q, want about %d", i, rec.Header().Get("Retry-After"), tc.retryAfter)
					}
				default:
					t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			if allowed != tc.want {
				t.Errorf("the two replicas started %d of %d new conversations; the plan allows %d in all",
					allowed, 3*tc.want, tc.want)
			}
		})
	}

	// Continuing a conversation asks Redis for the merchant's rate only: one script run, not three.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = c.Close() }()
	scripts := func() int {
		info, err := c.Info(t.Context(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for line := range strings.Lines(info) {
			for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
				if v, ok := strings.CutPrefix(line, cmd); ok {
					calls, _ := strconv.Atoi(v[:strings.IndexByte(v, ',')])
					n += calls
				}
			}
		}
		return n
	}
	rec := chat(0, "198.51.100.1", "v9", `{"message": "hi"}`)
	var started struct {
		ConversationID string `json:"conversation_id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &started); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("a new conversation: %d %s", rec.Code, rec.Body)
	}
	before := scripts()
	for i := range 4 {
		if rec := chat(i, "198.51.100.1", "v9", `{"message": "and shipping?", "conversation_id": "`+started.ConversationID+`"}`); rec.Code != http.StatusOK {
			t.Fatalf("continuing the conversation: %d %s", rec.Code, rec.Body)
		}
	}
	if n := scripts() - before; n != 4 {
		t.Errorf("4 messages of a running conversation ran %d scripts in Redis, want 4 (the merchant's rate)", n)
	}
}

// The owners' own request budget (ratelimit.Owner) is one across replicas sharing Redis: a burst of owner calls
// alternating between two replicas gets the budget's burst once, not once per replica.
func TestOwnerBudgetSharedByReplicasThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	e, replicas := redisReplicas(t, srv.Addr, func(*tenant.Bundle) {})
	owner := map[string]string{"Authorization": e.ownerOf("capped")}
	allowed := 0
	start := time.Now()
	for i := range 2 * ratelimit.OwnerBurst {
		switch rec := serveFrom(replicas[i%2], "192.0.2.1", http.MethodGet, "/api/v1/knowledge", owner, ""); rec.Code {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("owner call %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	refilled := int(time.Since(start).Seconds()*ratelimit.OwnerRequestsPerSecond) + 1
	if allowed < ratelimit.OwnerBurst || allowed > ratelimit.OwnerBurst+refilled {
		t.Errorf("the replicas allowed %d of %d owner calls; the budget is a burst of %d (and %d refilled meanwhile) in all",
			allowed, 2*ratelimit.OwnerBurst, ratelimit.OwnerBurst, refilled)
	}
}
