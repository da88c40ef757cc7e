package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// KeyedLimiter counts events per key rather than per merchant: new conversations per client address or visitor.
type KeyedLimiter interface {
	// Allow takes a token from key's bucket of n tokens refilled n per period. When none is left it reports
	// false and how long until one is. now is the caller's clock; a shared limiter may use its own.
	Allow(ctx context.Context, key string, n int, period time.Duration, now time.Time) (bool, time.Duration)
}

// DefaultMaxKeys bounds the client addresses and visitors whose new conversations a Keyed limiter counts at once.
const DefaultMaxKeys = 200_000

// Keyed is a token bucket per key, in this process, for limits counted per client rather than per merchant (new
// conversations per client address or visitor). A bucket holds n tokens and refills n per period. Its memory is
// bounded: a bucket full again is forgotten, as if it never existed, and once maxKeys keys are active, new keys
// are let through uncounted (logged by the caller as it sees fit) rather than refused, so that a flood of
// addresses cannot lock real visitors out; the merchant's monthly ceiling still bounds the damage.
type Keyed struct {
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	maxKeys   int
	lastSweep time.Time
}

// NewKeyed returns an empty Keyed limiter that tracks at most maxKeys keys at once.
func NewKeyed(maxKeys int) *Keyed {
	return &Keyed{buckets: map[string]*rate.Limiter{}, maxKeys: maxKeys}
}

// sweepEvery is how often Allow forgets the buckets full again.
const sweepEvery = time.Minute

// Allow implements KeyedLimiter. A change of n or period takes effect with a new, full bucket.
func (k *Keyed) Allow(_ context.Context, key string, n int, period time.Duration, now time.Time) (bool, time.Duration) {
	limit := rate.Limit(float64(n) / period.Seconds())
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) >= sweepEvery || len(k.buckets) >= k.maxKeys {
		k.sweep(now)
	}
	b, ok := k.buckets[key]
	if !ok || b.Limit() != limit || b.Burst() != n {
		if !ok && len(k.buckets) >= k.maxKeys {
			return true, 0
		}
		b = rate.NewLimiter(limit, n)
		k.buckets[key] = b
	}
	if b.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.TokensAt(now)
	return false, time.Duration(missing / float64(limit) * float64(time.Second))
}

// sweep forgets the buckets that are full again: a new bucket would be the same.
func (k *Keyed) sweep(now time.Time) {
	k.lastSweep = now
	for key, b := range k.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(k.buckets, key)
		}
	}
}
