package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// KeyedLimiter counts events per key rather than per merchant: new conversations per client address or visitor.
type KeyedLimiter interface {
	// Allow takes a token from the bucket of every quota if each has one left, and none otherwise: an event one
	// quota refuses spends nothing of the others. It reports the index of the first quota without a token, or
	// -1, and how long until that quota's bucket has one. now is the caller's clock; a shared limiter may use
	// its own.
	Allow(ctx context.Context, quotas []Quota, now time.Time) (refused int, wait time.Duration)
}

// Quota is one limit a KeyedLimiter applies: a bucket of N tokens for Key, refilled N per Period.
type Quota struct {
	// Key names the bucket, for example a merchant's client address.
	Key string
	// N is the bucket's size and how many tokens it gets back per Period.
	N int
	// Period is the time N tokens take to come back.
	Period time.Duration
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

// Allow implements KeyedLimiter. A change of a quota's N or Period takes effect with a new, full bucket.
func (k *Keyed) Allow(_ context.Context, quotas []Quota, now time.Time) (int, time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) >= sweepEvery || len(k.buckets) >= k.maxKeys {
		k.sweep(now)
	}
	buckets := make([]*rate.Limiter, len(quotas))
	for i, q := range quotas {
		b := k.bucket(q)
		if b == nil {
			continue // past maxKeys: uncounted
		}
		if tokens := b.TokensAt(now); tokens < 1 {
			return i, time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second))
		}
		buckets[i] = b
	}
	for _, b := range buckets {
		if b != nil {
			b.AllowN(now, 1)
		}
	}
	return -1, 0
}

// bucket is q's bucket, made full when q is new or changed, or nil when maxKeys keys are tracked already.
func (k *Keyed) bucket(q Quota) *rate.Limiter {
	limit := rate.Limit(float64(q.N) / q.Period.Seconds())
	b, ok := k.buckets[q.Key]
	if ok && b.Limit() == limit && b.Burst() == q.N {
		return b
	}
	if !ok && len(k.buckets) >= k.maxKeys {
		return nil
	}
	b = rate.NewLimiter(limit, q.N)
	k.buckets[q.Key] = b
	return b
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
