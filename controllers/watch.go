package controllers

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// requestsFor lists the objects whose indexed field equals value and turns them into reconcile requests.
// An empty namespace searches all namespaces.
func requestsFor(ctx context.Context, c client.Reader, list client.ObjectList, namespace, field, value string) []reconcile.Request {
	opts := []client.ListOption{client.MatchingFields{field: value}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "listing objects to enqueue", "field", field)
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		return nil
	})
	return reqs
}

// enqueueReferrers maps an object to the objects of list's kind, in its namespace, whose indexed field names it:
// a Secret or a Merchant to the APIKeys or Webhooks that refer to it.
func enqueueReferrers(c client.Reader, list client.ObjectList, field string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return requestsFor(ctx, c, list.DeepCopyObject().(client.ObjectList), o.GetNamespace(), field, o.GetName())
	})
}

// load reads the object of a request. done is true when there is nothing to reconcile: the object is gone, or
// it is being deleted and what it owns is garbage-collected; err is a failure to read it.
func load(ctx context.Context, c client.Reader, req reconcile.Request, obj client.Object) (done bool, err error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return true, client.IgnoreNotFound(err)
	}
	return !obj.GetDeletionTimestamp().IsZero(), nil
}

// secretLabelled passes only Secrets that carry Parley's label with the given value.
func secretLabelled(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[chatv1alpha1.SecretLabel] == value
	})
}

// specChanges passes the creation and deletion of an object and changes of its spec (its generation), not of its
// status or metadata alone.
func specChanges() builder.Predicates {
	return builder.WithPredicates(predicate.GenerationChangedPredicate{})
}

// notGeneratedCreate passes every event of a Secret but its creation by the operator for an object of kind (its
// controller): the reconcile that generated it has used it already (secretReader.withKnown), and its event,
// arriving before that reconcile's own status write reached the cache, brought the object back to patch the
// same status a second time. A generated Secret's update or deletion, and a Secret brought along, still pass.
func notGeneratedCreate(kind string) predicate.Predicate {
	return predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool {
		owner := metav1.GetControllerOf(e.Object)
		return owner == nil || owner.Kind != kind || !strings.HasPrefix(owner.APIVersion, chatv1alpha1.GroupVersion.Group+"/")
	}}
}

// notStatusOnly passes every event but an update that changed an object's status alone (and the resourceVersion
// and managedFields every write moves). A controller that writes an object's status must not be woken by its own
// write: a Plan's or ChatRuntime's count, patched, woke its reconcile at once, which counted anew and patched
// again while merchants were being created, about once a second instead of once every few seconds.
func notStatusOnly() builder.Predicates {
	return builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !statusOnly(e.ObjectOld, e.ObjectNew)
	}})
}

// notOwnFinalizer is notStatusOnly that also stops an update which only added finalizer (finalizerAddedOnly):
// the reconciler's own write, made by a reconcile that went on to do the rest of its work. Woken by it, the next
// reconcile found that work's writes not cached yet (a bundle just created), and wrote them again in vain.
func notOwnFinalizer(finalizer string) builder.Predicates {
	return builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !statusOnly(e.ObjectOld, e.ObjectNew) && !finalizerAddedOnly(e.ObjectOld, e.ObjectNew, finalizer)
	}})
}

// statusOnly decides whether an update from old to updated changed nothing a reconcile reads but the status: its
// generation (which the spec and the start of a deletion move), labels, annotations and finalizers are the same.
func statusOnly(old, updated client.Object) bool {
	return sameButFinalizers(old, updated) && slices.Equal(old.GetFinalizers(), updated.GetFinalizers())
}

// finalizerAddedOnly decides whether an update from old to updated changed nothing a reconcile reads but the
// status and the addition of finalizer at the end of the finalizers.
func finalizerAddedOnly(old, updated client.Object, finalizer string) bool {
	return sameButFinalizers(old, updated) && !slices.Contains(old.GetFinalizers(), finalizer) &&
		slices.Equal(append(slices.Clone(old.GetFinalizers()), finalizer), updated.GetFinalizers())
}

// sameButFinalizers says whether old and updated have the same generation (which the spec and the start of a
// deletion move), labels and annotations.
func sameButFinalizers(old, updated client.Object) bool {
	return old.GetGeneration() == updated.GetGeneration() &&
		maps.Equal(old.GetLabels(), updated.GetLabels()) &&
		maps.Equal(old.GetAnnotations(), updated.GetAnnotations())
}

// enqueueAfter enqueues the request of an object after delay; for an update, those of the old and the new
// object. The workqueue keeps one request a key, at the earliest time asked for, so every event within delay of
// the first is served by one reconcile: for counts (a Plan's merchants, a runtime's tenants) that would otherwise
// be written once for every object added.
func enqueueAfter(delay time.Duration, request func(client.Object) reconcile.Request) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { q.AddAfter(request(e.Object), delay) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			q.AddAfter(request(e.ObjectOld), delay)
			q.AddAfter(request(e.ObjectNew), delay)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { q.AddAfter(request(e.Object), delay) },
	}
}

// controllerOptions lets a controller reconcile workers objects at once.
func controllerOptions(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: max(workers, 1)}
}

// onlyDeletes passes only the events of objects deleted: for watches where an object's going makes room for others.
func onlyDeletes() builder.Predicates {
	return builder.WithPredicates(predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}
