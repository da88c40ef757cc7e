package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// arrivalTTL is how long an arrival is remembered at most: one whose Merchant never publishes (an APIKey naming
// no Merchant) must not be kept for good.
const arrivalTTL = time.Minute

// arrivals remembers, for each Merchant not yet published, when the operator last saw it or one of its APIKeys or
// Webhooks arrive in its cache. A tenant's objects are usually applied together, one create after the other; a
// Merchant published while some are still on their way publishes its bundle and status again with each. Its
// creation time cannot say when they are all there: it has a resolution of a second, and under load the creates of
// one apply are spread over more than that. Arrivals are local times, so no clock but the operator's counts.
type arrivals struct {
	mu   sync.Mutex
	now  func() time.Time
	last map[types.NamespacedName]time.Time
	// pruned is when arrivals older than arrivalTTL were last dropped: once an arrivalTTL, not at every arrival
	// of ten thousand.
	pruned time.Time
}

func newArrivals(now func() time.Time) *arrivals {
	return &arrivals{now: now, last: map[types.NamespacedName]time.Time{}}
}

// saw records an arrival for the Merchant key now, and forgets arrivals older than arrivalTTL.
func (a *arrivals) saw(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if now.Sub(a.pruned) >= arrivalTTL {
		for k, t := range a.last {
			if now.Sub(t) >= arrivalTTL {
				delete(a.last, k)
			}
		}
		a.pruned = now
	}
	a.last[key] = now
}

// wait is how long the Merchant m waits before its first publish (firstPublishWait).
func (a *arrivals) wait(m *chatv1alpha1.Merchant) time.Duration {
	if reconciledBefore(m) {
		return 0
	}
	last, now := a.latest(client.ObjectKeyFromObject(m))
	return firstPublishWait(m, last, now)
}

// latest returns the last arrival for the Merchant key and the time now; a Merchant reconciled before its own
// arrival was recorded (the cache has it before the event handlers run) arrives now.
func (a *arrivals) latest(key types.NamespacedName) (last, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now = a.now()
	last, ok := a.last[key]
	if !ok {
		last = now
		a.last[key] = now
	}
	return last, now
}

// forget drops the Merchant key's arrivals once it has published, or is gone.
func (a *arrivals) forget(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.last, key)
}

// record returns an event handler that enqueues nothing and records, for the creation of an object, an arrival
// for each Merchant toMerchants maps it to.
func (a *arrivals) record(toMerchants handler.MapFunc) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, _ queue) {
			for _, r := range toMerchants(ctx, e.Object) {
				a.saw(r.NamespacedName)
			}
		},
	}
}
