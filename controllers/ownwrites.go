package controllers

import (
	"context"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// cacheBehindRetry is how soon a reconcile held back by ownWrites runs again: an object's own write usually
// reaches the cache within a fraction of a second, and its status patch's event does not wake it.
const cacheBehindRetry = 200 * time.Millisecond

// retryConflict is a reconcile's outcome for err: a conflict, an update made from a cached copy older than the
// stored object, runs the reconcile again in cacheBehindRetry without an error, as the cache catching up is no
// failure to log as a "Reconciler error" and back off from; any other error is returned as it is.
func retryConflict(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	return reconcile.Result{}, err
}

// reportStatus is the end of a reconcile of the kinds written once a merchant (Merchant, APIKey, Webhook): it
// writes obj's status when it changed from before, then records the Ready condition's news and the write's
// resourceVersions in w, so that the next reconcile waits for the cache to show the write, and returns res. A
// conflict, a write from a copy older than the stored object, runs the reconcile again soon, with nothing recorded.
func reportStatus[T client.Object](ctx context.Context, c client.Client, w *ownWrites, rec recorder.EventRecorder,
	before, obj T, statusOf func(T) any, news readyNews, res reconcile.Result) (reconcile.Result, error) {
	if err := updateStatus(ctx, c, before, obj, statusOf); err != nil {
		return retryConflict(err)
	}
	news.record(rec, obj)
	w.wrote(client.ObjectKeyFromObject(obj), before.GetResourceVersion(), obj.GetResourceVersion())
	return res, nil
}

// heldBack says whether a reconcile of the cached obj must wait: the cache is still at a version one of the
// reconciler's own writes replaced, and the reconcile runs again in cacheBehindRetry.
func (w *ownWrites) heldBack(obj client.Object) bool {
	return w.behind(client.ObjectKeyFromObject(obj), obj.GetResourceVersion())
}

// ownWrites remembers, for each object a reconciler wrote, the resourceVersions its writes replaced, until its
// cache shows another. A reconcile that finds the cache still at one of them works on a copy older than its own
// write: writing from it would repeat that write (a status patch, a first Ready Event) or fail on a conflict.
// Under load an object's next event often comes before the cache has its own last write.
type ownWrites struct {
	mu       sync.Mutex
	replaced map[types.NamespacedName][]string
}

func newOwnWrites() *ownWrites {
	return &ownWrites{replaced: map[types.NamespacedName][]string{}}
}

// wrote records that a write of the object key moved it from resourceVersion before to after; nothing when they
// are the same (the write changed nothing).
func (w *ownWrites) wrote(key types.NamespacedName, before, after string) {
	if before == after || before == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.replaced[key] = append(w.replaced[key], before)
}

// behind says whether resourceVersion rv of key, as cached, is one an own write has replaced. Any other version
// is newer than them all, and they are forgotten.
func (w *ownWrites) behind(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	rvs, ok := w.replaced[key]
	if !ok {
		return false
	}
	if slices.Contains(rvs, rv) {
		return true
	}
	delete(w.replaced, key)
	return false
}

// forget returns an event handler for the reconciler's own kind that enqueues nothing and forgets the replaced
// versions of an object once the cache shows a newer one or the object is gone, so that none is kept for an
// object that is not reconciled again.
func (w *ownWrites) forget() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ queue) {
			w.behind(client.ObjectKeyFromObject(e.ObjectNew), e.ObjectNew.GetResourceVersion())
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ queue) {
			w.mu.Lock()
			defer w.mu.Unlock()
			delete(w.replaced, client.ObjectKeyFromObject(e.Object))
		},
	}
}
