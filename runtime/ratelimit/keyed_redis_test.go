//go:build integration

package ratelimit

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/parley-dev/parley/internal/testutil/redistest"
)

// Two replicas sharing one Redis allow a key its n per period in all, not n per replica, whichever replica is
// asked and whatever its clock says; another key has a bucket of its own.
func TestRedisKeyedSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := replica(t, srv.Addr, "", RedisOptions{}).Keyed(), replica(t, srv.Addr, "", RedisOptions{}).Keyed()
	const key = "shop\x00a\x00192.0.2.1"
	allowed := 0
	var wait time.Duration
	for i := range 20 {
		l := []*RedisKeyed{a, b}[i%2]
		ok, w := allowOne(t.Context(), l, key, 5, time.Hour, time.Now())
		if ok {
			allowed++
		} else {
			wait = w
		}
	}
	if allowed != 5 {
		t.Errorf("two replicas allowed %d of 20 new conversations; the limit is 5 an hour in all", allowed)
	}
	// A token comes back every 12 minutes.
	if wait < 11*time.Minute || wait > 12*time.Minute {
		t.Errorf("retry after %s, want just under 12 minutes", wait)
	}
	// The decision is Redis's clock: a replica whose clock is two hours ahead gets nothing more.
	if ok, _ := allowOne(t.Context(), a, key, 5, time.Hour, time.Now().Add(2*time.Hour)); ok {
		t.Error("a replica's clock refilled the shared bucket")
	}
	if ok, _ := allowOne(t.Context(), b, "shop\x00a\x00192.0.2.2", 5, time.Hour, time.Now()); !ok {
		t.Error("another address shares the first one's bucket")
	}
	if fb := testutil.ToFloat64(a.shared.fallbacks) + testutil.ToFloat64(b.shared.fallbacks); fb != 0 {
		t.Errorf("%v decisions fell back to the replica while Redis was up", fb)
	}
}

// The abuse limits of a new conversation are one call to Redis, all or nothing, as in Keyed.
func TestRedisKeyedAllOrNothing(t *testing.T) {
	srv := redistest.Start(t)
	l := replica(t, srv.Addr, "", RedisOptions{}).Keyed()
	testAllOrNothing(t, l, time.Now())
	if fb := testutil.ToFloat64(l.shared.fallbacks); fb != 0 {
		t.Errorf("%v decisions fell back to the replica while Redis was up", fb)
	}
}

// Redis keys name neither the merchant, the address nor the visitor, and expire once their bucket is full again:
// an idle address costs Redis nothing after its period.
func TestRedisKeyedKeys(t *testing.T) {
	srv := redistest.Start(t)
	l := replica(t, srv.Addr, "", RedisOptions{KeyPrefix: "p:"}).Keyed()
	keys := []string{"acme\x00a\x00192.0.2.7", "acme\x00v\x00visitor-4f1c", "acme\x00a\x002001:db8:1:2::/64"}
	for _, k := range keys {
		if ok, _ := allowOne(t.Context(), l, k, 20, time.Hour, time.Now()); !ok {
			t.Fatalf("%q: the first new conversation was refused", k)
		}
	}
	if ok, _ := allowOne(t.Context(), l, "acme\x00a\x00192.0.2.8", 2, time.Second, time.Now()); !ok {
		t.Fatal("the first new conversation of the short period was refused")
	}

	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = c.Close() }()
	stored, err := c.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(keys)+1 {
		t.Errorf("Redis holds %d keys, want %d: %q", len(stored), len(keys)+1, stored)
	}
	for _, k := range stored {
		for _, plain := range []string{"acme", "192.0.2", "visitor-4f1c", "2001:db8"} {
			if strings.Contains(k, plain) {
				t.Errorf("Redis key %q contains %q", k, plain)
			}
		}
		if !strings.HasPrefix(k, "p:conversations:") {
			t.Errorf("Redis key %q is not under the key prefix", k)
		}
	}
	// The same address of another merchant is another key.
	if l.Key("acme\x00a\x00192.0.2.7") == l.Key("other\x00a\x00192.0.2.7") {
		t.Error("two merchants' buckets of one address share a key")
	}
	// One of 20 taken: the token is back, and the key gone, in 3 minutes (plus a second).
	ttl, err := c.PTTL(t.Context(), l.Key(keys[0])).Result()
	if err != nil || ttl < 3*time.Minute || ttl > 3*time.Minute+time.Second {
		t.Errorf("TTL %s (%v), want 3 minutes and up to a second", ttl, err)
	}
	short := l.Key("acme\x00a\x00192.0.2.8")
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.Exists(t.Context(), short).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key of a bucket full again did not expire")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// When Redis stalls (it takes connections but answers nothing), a decision waits no longer than the limiter's
// timeout, then both the abuse limits and the merchants' rates are decided per replica, the abuse limits by a
// Keyed limiter of the same n per period, until Redis answers again; then the count shared in Redis goes on.
func TestRedisKeyedStall(t *testing.T) {
	srv := redistest.Start(t)
	shared := replica(t, srv.Addr, "", RedisOptions{Timeout: 200 * time.Millisecond, Backoff: 500 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	l := shared.Keyed()
	const key = "shop\x00v\x00visitor"
	for range 2 {
		if ok, _ := allowOne(t.Context(), l, key, 3, time.Hour, time.Now()); !ok {
			t.Fatal("refused within the limit with Redis up")
		}
	}

	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = c.Close() }()
	const stall = 1500 * time.Millisecond
	if err := c.Do(t.Context(), "CLIENT", "PAUSE", stall.Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	stalled := time.Now()
	now := time.Now()
	var allowed int
	for range 5 {
		if ok, _ := allowOne(t.Context(), l, key, 3, time.Hour, now); ok {
			allowed++
		}
	}
	if took := time.Since(stalled); took > 400*time.Millisecond {
		t.Errorf("5 decisions with Redis stalled took %s; one timeout of 200ms, then none during the backoff", took)
	}
	if allowed != 3 {
		t.Errorf("with Redis stalled, %d of 5 new conversations allowed, want the replica's own 3", allowed)
	}
	if up := testutil.ToFloat64(shared.up); up != 0 {
		t.Errorf("redis_up %v while Redis stalls", up)
	}
	if fb := testutil.ToFloat64(shared.fallbacks); fb != 5 {
		t.Errorf("%v fallback decisions, want 5", fb)
	}
	// The merchants' rates know Redis stalls too: no second timeout.
	start := time.Now()
	if ok, _, _ := shared.Allow(t.Context(), "shop", plan(10, 10), time.Now()); !ok || time.Since(start) > 50*time.Millisecond {
		t.Errorf("the merchant's rate with Redis known to stall: allowed %t after %s", ok, time.Since(start))
	}

	// Once Redis answers, it decides again: one of the 3 shared tokens is left.
	time.Sleep(time.Until(stalled.Add(stall + 100*time.Millisecond)))
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(shared.up) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the limiter did not go back to Redis after the stall")
		}
		time.Sleep(100 * time.Millisecond)
		allowOne(t.Context(), l, "shop\x00v\x00someone-else", 3, time.Hour, time.Now())
	}
	if ok, _ := allowOne(t.Context(), l, key, 3, time.Hour, time.Now()); !ok {
		t.Error("the third shared token was refused after the stall")
	}
	if ok, _ := allowOne(t.Context(), l, key, 3, time.Hour, time.Now()); ok {
		t.Error("a fourth new conversation was allowed after the stall")
	}
}
