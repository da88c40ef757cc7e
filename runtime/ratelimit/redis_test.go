//go:build integration

package ratelimit

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/runtime/tenant"
)

// replica is one runtime replica's limiter: its own client, connection pool and fallback, sharing only Redis.
func replica(t *testing.T, addr, password string, o RedisOptions) *Redis {
	t.Helper()
	c, err := NewRedisClient(RedisConfig{Addr: addr, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	l, err := NewRedis(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func plan(rps, burst int32) tenant.Plan {
	return tenant.Plan{Name: "p", RequestsPerSecond: rps, Burst: burst}
}

// hammer asks every limiter for a token for the merchant, in turn and without pause, for d, and returns how
// many were allowed and how long the run took from the first request to the last.
func hammer(ctx context.Context, limiters []Limiter, merchantID string, p tenant.Plan, d time.Duration) (int, time.Duration) {
	var mu sync.Mutex
	allowed := 0
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range limiters {
		wg.Go(func() {
			for time.Since(start) < d {
				if ok, _, _ := l.Allow(ctx, merchantID, p, time.Now()); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	return allowed, time.Since(start)
}

// Two replicas sharing one Redis give a merchant its plan's rate in all, not per replica; another merchant has a
// bucket of its own.
func TestRedisSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, "", RedisOptions{}), replica(t, srv.Addr, "", RedisOptions{})
	both := []Limiter{a, b}
	p := plan(10, 10)

	var wg sync.WaitGroup
	var gotA, gotB int
	var tookA, tookB time.Duration
	wg.Go(func() { gotA, tookA = hammer(t.Context(), both, "shop-a", p, 2500*time.Millisecond) })
	wg.Go(func() { gotB, tookB = hammer(t.Context(), both, "shop-b", p, 2500*time.Millisecond) })
	wg.Wait()

	for _, m := range []struct {
		name string
		got  int
		took time.Duration
	}{{"shop-a", gotA, tookA}, {"shop-b", gotB, tookB}} {
		want := 10 + 10*m.took.Seconds() // a full bucket, then the rate
		if math.Abs(float64(m.got)-want) > 0.1*want {
			t.Errorf("%s: %d requests allowed across both replicas in %s, want %.0f ± 10%% (one bucket per replica would allow about %.0f)",
				m.name, m.got, m.took.Round(time.Millisecond), want, 2*want)
		}
	}
	if testutil.ToFloat64(a.fallbacks)+testutil.ToFloat64(b.fallbacks) != 0 {
		t.Error("decisions fell back to the local limiter while Redis was up")
	}
}

// The remaining tokens and the delay to the next token are what the RateLimit and Retry-After headers need, as
// the local limiter gives them.
func TestRedisRemainingAndRetryAfter(t *testing.T) {
	srv := redistest.Start(t)
	l := replica(t, srv.Addr, "", RedisOptions{})
	p := plan(1, 3)
	type result struct {
		ok        bool
		remaining int
		wait      time.Duration
	}
	var got []result
	for range 4 {
		ok, remaining, wait := l.Allow(t.Context(), "shop", p, time.Now())
		got = append(got, result{ok, remaining, wait})
	}
	want := []struct {
		ok        bool
		remaining int
		waitMin   time.Duration
	}{{true, 2, 0}, {true, 1, 0}, {true, 0, 900 * time.Millisecond}, {false, 0, 800 * time.Millisecond}}
	for i, w := range want {
		g := got[i]
		if g.ok != w.ok || g.remaining != w.remaining || g.wait < w.waitMin || g.wait > time.Second {
			t.Errorf("request %d: allowed %t, remaining %d, retry after %s; want %t, %d, between %s and 1s",
				i+1, g.ok, g.remaining, g.wait, w.ok, w.remaining, w.waitMin)
		}
	}
	if got[0].wait != 0 || got[1].wait != 0 {
		t.Errorf("a token is left, yet retry after %s and %s", got[0].wait, got[1].wait)
	}

	// The decision is Redis's clock, never the replica's: a replica whose clock is an hour ahead gets no tokens.
	if ok, _, _ := l.Allow(t.Context(), "shop", p, time.Now().Add(time.Hour)); ok {
		t.Error("a replica's clock refilled the shared bucket")
	}

	// Idle buckets expire, so merchants that stopped calling cost Redis no memory.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = c.Close() }()
	ttl, err := c.PTTL(t.Context(), l.Key("shop")).Result()
	if err != nil || ttl <= 0 || ttl > 5*time.Second {
		t.Errorf("bucket TTL %s (%v), want a few seconds", ttl, err)
	}
}

// A plan change takes effect on the next request, on every replica, without handing out a fresh burst.
func TestRedisPlanChange(t *testing.T) {
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, "", RedisOptions{}), replica(t, srv.Addr, "", RedisOptions{})
	for range 10 {
		if ok, _, _ := a.Allow(t.Context(), "shop", plan(10, 10), time.Now()); !ok {
			t.Fatal("the first ten requests of a 10/10 plan must pass")
		}
	}
	// Downgraded to 2 per second: about 2 per second from now on, whichever replica asks.
	got, took := hammer(t.Context(), []Limiter{a, b}, "shop", plan(2, 2), 1500*time.Millisecond)
	if want := 2 * took.Seconds(); math.Abs(float64(got)-want) > 1.5 {
		t.Errorf("after the downgrade to 2/s: %d allowed in %s, want about %.0f", got, took.Round(time.Millisecond), want)
	}
	if _, remaining, _ := b.Allow(t.Context(), "shop", plan(2, 2), time.Now()); remaining > 1 {
		t.Errorf("%d tokens left on a plan with a burst of 2", remaining)
	}
	// Upgraded to 100 per second: the new rate refills the bucket at once.
	got, took = hammer(t.Context(), []Limiter{a, b}, "shop", plan(100, 100), time.Second)
	if want := 100 * took.Seconds(); math.Abs(float64(got)-want) > 0.2*want {
		t.Errorf("after the upgrade to 100/s: %d allowed in %s, want about %.0f", got, took.Round(time.Millisecond), want)
	}
}

// When Redis stops answering, decisions fail open to a per-replica bucket of the same plan: still limited, never
// an error, no Redis round trip per request during the backoff, a warning in the log without the password; when
// Redis answers again, it decides again.
func TestRedisDown(t *testing.T) {
	const password = "redis-secret-password"
	srv := redistest.Start(t, redistest.Options{Password: password})
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&syncWriter{mu: &logMu, w: &logs}, nil))
	l := replica(t, srv.Addr, password, RedisOptions{Logger: log, Backoff: 300 * time.Millisecond})
	p := plan(1, 5)
	if ok, _, _ := l.Allow(t.Context(), "shop", p, time.Now()); !ok || testutil.ToFloat64(l.up) != 1 {
		t.Fatal("the first request with Redis up must pass through Redis")
	}

	srv.Stop()
	now := time.Now()
	var allowed int
	start := time.Now()
	for i := range 8 {
		ok, remaining, wait := l.Allow(t.Context(), "shop", p, now)
		if ok {
			allowed++
		}
		if !ok && (remaining != 0 || wait <= 0) {
			t.Errorf("request %d refused locally without a retry delay: %d, %s", i, remaining, wait)
		}
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("8 decisions with Redis down took %s; the backoff must spare requests the Redis round trip", took)
	}
	if allowed != 5 {
		t.Errorf("with Redis down, %d of 8 requests in one instant were allowed, want the local burst of 5", allowed)
	}
	if up, errs := testutil.ToFloat64(l.up), testutil.ToFloat64(l.errs); up != 0 || errs != 1 {
		t.Errorf("redis_up %v, redis errors %v; want 0 and exactly 1 (Redis is not asked during the backoff)", up, errs)
	}
	if fb := testutil.ToFloat64(l.fallbacks); fb != 8 {
		t.Errorf("%v fallback decisions, want 8", fb)
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if strings.Count(text, "redis does not answer") != 1 || !strings.Contains(text, "level=WARN") {
		t.Errorf("want exactly one warning, got:\n%s", text)
	}
	if strings.Contains(text, password) {
		t.Errorf("the Redis password is in the log:\n%s", text)
	}

	srv.Restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(l.up) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the limiter did not go back to Redis after it came back")
		}
		time.Sleep(100 * time.Millisecond)
		l.Allow(t.Context(), "other", p, time.Now())
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: password})
	defer func() { _ = c.Close() }()
	if n, err := c.Exists(t.Context(), l.Key("other")).Result(); err != nil || n != 1 {
		t.Errorf("the bucket is not in the restarted Redis: %d, %v", n, err)
	}
}

// A wrong password is a Redis failure like any other: requests are limited locally, the password never logged.
func TestRedisWrongPassword(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: "right-one"})
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&syncWriter{mu: &logMu, w: &logs}, nil))
	l := replica(t, srv.Addr, "wrong-one", RedisOptions{Logger: log})
	if ok, _, _ := l.Allow(t.Context(), "shop", plan(1, 1), time.Now()); !ok {
		t.Error("the fallback refused the first request of a fresh bucket")
	}
	if testutil.ToFloat64(l.up) != 0 {
		t.Error("redis_up is 1 with a wrong password")
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), "wrong-one") || !strings.Contains(logs.String(), "redis does not answer") {
		t.Errorf("log:\n%s", logs.String())
	}
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
