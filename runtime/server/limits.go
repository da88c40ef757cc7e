package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// RateLimiter decides whether a merchant may make one more request: ratelimit.Local shares one token bucket per
// merchant across all its keys in this process (the default); ratelimit.Redis shares it across replicas too.
type RateLimiter = ratelimit.Limiter

// limit applies the merchant's request rate and sets the RateLimit headers (draft-ietf-httpapi-ratelimit-headers)
// on every answer; past the limit it answers 429 with Retry-After.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	ok, remaining, wait := s.limiter.Allow(r.Context(), m.MerchantID, m.Plan, s.now())
	h := w.Header()
	h.Set(headerRateLimitPolicy, `"merchant";q=`+strconv.Itoa(int(m.Plan.RequestsPerSecond))+`;w=1`)
	h.Set(headerRateLimit, `"merchant";r=`+strconv.Itoa(remaining)+`;t=`+strconv.Itoa(ceilSeconds(wait)))
	if !ok {
		h.Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(wait))))
		return newError(http.StatusTooManyRequests, codeRateLimited,
			"more than %d requests per second for this merchant; retry after the Retry-After delay", m.Plan.RequestsPerSecond)
	}
	return nil
}

// limitOwner applies the merchant's owners' own request rate (ratelimit.Owner), never the visitors', and sets
// the RateLimit headers under the policy "owners".
func (s *Server) limitOwner(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	key, plan := ratelimit.Owner(m.MerchantID)
	ok, remaining, wait := s.limiter.Allow(r.Context(), key, plan, s.now())
	h := w.Header()
	h.Set(headerRateLimitPolicy, fmt.Sprintf(`"owners";q=%d;w=1`, plan.RequestsPerSecond))
	h.Set(headerRateLimit, fmt.Sprintf(`"owners";r=%d;t=%d`, remaining, ceilSeconds(wait)))
	if !ok {
		h.Set(headerRetryAfter, strconv.Itoa(max(1, ceilSeconds(wait))))
		return newError(http.StatusTooManyRequests, codeRateLimited,
			"more than %d requests per second by this merchant's owners; retry after the Retry-After delay", plan.RequestsPerSecond)
	}
	return nil
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
