// Package ratelimit applies the plans' request rates: per merchant, across all its API keys, as a token bucket
// of the plan's requestsPerSecond and burst. Local keeps the buckets in this process; Redis keeps them in Redis
// so that every replica of a runtime draws from the same bucket. Keyed and RedisKeyed do the same for the abuse
// limits, counted per client address or visitor.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/parley-dev/parley/runtime/tenant"
)

// Limiter decides whether a merchant may make one more request.
type Limiter interface {
	// Allow takes a token for the merchant if one is left. It returns the tokens left and how long until the
	// next token. now is the caller's clock; a shared limiter may use its own.
	Allow(ctx context.Context, merchantID string, plan tenant.Plan, now time.Time) (ok bool, remaining int, retryAfter time.Duration)
}

// Local is a token bucket per merchant, in this process. A plan change takes effect on the next request.
type Local struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewLocal returns an empty in-process limiter.
func NewLocal() *Local { return &Local{buckets: map[string]*rate.Limiter{}} }

// Allow implements Limiter.
func (l *Local) Allow(_ context.Context, merchantID string, plan tenant.Plan, now time.Time) (bool, int, time.Duration) {
	limit, burst := rate.Limit(plan.RequestsPerSecond), int(plan.Burst)
	l.mu.Lock()
	b, ok := l.buckets[merchantID]
	if !ok || b.Limit() != limit || b.Burst() != burst {
		// A new plan starts with a full bucket of its own size.
		b = rate.NewLimiter(limit, burst)
		l.buckets[merchantID] = b
	}
	l.mu.Unlock()
	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	var wait time.Duration
	if tokens < 1 {
		wait = time.Duration((1 - tokens) / float64(limit) * float64(time.Second))
	}
	return allowed, int(math.Max(0, math.Floor(tokens))), wait
}
