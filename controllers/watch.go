package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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

// secretLabelled passes only Secrets that carry Parley's label with the given value.
func secretLabelled(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[chatv1alpha1.SecretLabel] == value
	})
}

func controllerOptions(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: max(workers, 1)}
}
