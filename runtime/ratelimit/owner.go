package ratelimit

import "github.com/parley-dev/parley/runtime/tenant"

// The merchant's own calls (the dashboard, and the API with an owner's ID token) draw from a bucket of their own,
// so that an owner at work never takes from the visitors' chat rate, and a burst of visitors never locks the
// owner out.
const (
	// OwnerRequestsPerSecond and OwnerBurst size the owners' bucket of each merchant, whatever its plan.
	OwnerRequestsPerSecond = 10
	OwnerBurst             = 40
)

// Owner returns the bucket key and the plan of a merchant's owners' calls, for a Limiter. The key cannot be a
// merchant's: merchant IDs are DNS labels, without "/".
func Owner(merchantID string) (key string, plan tenant.Plan) {
	return merchantID + "/owners", tenant.Plan{Name: "owners", RequestsPerSecond: OwnerRequestsPerSecond, Burst: OwnerBurst}
}
