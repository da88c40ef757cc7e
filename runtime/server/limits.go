package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/parley-dev/parley/runtime/tenant"
)

// RateLimiter decides whether a merchant may make one more request. The in-process implementation shares one
// token bucket per merchant across all its keys; a shared one (Redis) can replace it when replicas must share.
type RateLimiter interface {
	// Allow takes a token for the merchant if one is left. It returns the tokens left and how long until the
	// next token.
	Allow(merchantID string, plan tenant.Plan, now time.Time) (ok bool, remaining int, retryAfter time.Duration)
}

// localLimiter is a token bucket per merchant, in this process. A plan change takes effect on the next request.
type localLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newLocalLimiter() *localLimiter { return &localLimiter{buckets: map[string]*rate.Limiter{}} }

func (l *localLimiter) Allow(merchantID string, plan tenant.Plan, now time.Time) (bool, int, time.Duration) {
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

// limit applies the merchant's request rate and sets the RateLimit headers (draft-ietf-httpapi-ratelimit-headers)
// on every answer; past the limit it answers 429 with Retry-After.
func (s *Server) limit(w http.ResponseWriter, m *tenant.Bundle) error {
	ok, remaining, wait := s.limiter.Allow(m.MerchantID, m.Plan, s.now())
	h := w.Header()
	h.Set(headerRateLimitPolicy, fmt.Sprintf(`"merchant";q=%d;w=1`, m.Plan.RequestsPerSecond))
	h.Set(headerRateLimit, fmt.Sprintf(`"merchant";r=%d;t=%d`, remaining, ceilSeconds(wait)))
	if !ok {
		h.Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(wait))))
		return newError(http.StatusTooManyRequests, codeRateLimited,
			"more than %d requests per second for this merchant; retry after the Retry-After delay", m.Plan.RequestsPerSecond)
	}
	return nil
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
