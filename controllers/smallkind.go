package controllers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// smallKindReconciler is what the reconcilers of the small kinds, APIKey and Webhook, share (one skeleton for
// small kinds, as in RabbitMQ's messaging-topology-operator): each of their objects belongs to a Merchant of its
// namespace, holds a Secret the operator generates or one brought along, and reports a Ready condition, which its
// kind's reconciler alone decides (decideFunc).
type smallKindReconciler struct {
	client.Client
	// APIReader tells a Merchant missing from the cache from one whose event has not reached it yet.
	APIReader client.Reader
	Secrets   secretReader
	Recorder  recorder.EventRecorder
	// writes holds back a reconcile while the cache is older than the reconciler's own last status patch.
	writes *ownWrites
	// created remembers the Secrets the reconciler generated until its cache has them.
	created *ownSecrets
	Now     func() time.Time
	// Namespace is the operator's namespace, where ChatRuntimes and tenant bundles live.
	Namespace string
}

// smallObject is an object of a small kind, with the deep copy its generated code gives it.
type smallObject[T any] interface {
	client.Object
	DeepCopy() T
}

// smallParts are the fields of a small kind's object the skeleton reads and writes.
type smallParts struct {
	// merchantRef names the Merchant the object belongs to.
	merchantRef chatv1alpha1.LocalObjectReference
	// observedGeneration and conditions point into the object's status.
	observedGeneration *int64
	conditions         *[]metav1.Condition
	// status is the whole status, compared with the loaded one before it is written.
	status any
}

// decideFunc is a small kind's own part of its reconcile: it fills the rest of obj's status and returns its Ready
// condition, with when to look again. m is obj's Merchant, or nil with merchantErr, a MerchantNotFound problem or a
// failure to read it, for the step that needs the Merchant to return. before is obj as it was loaded.
type decideFunc[T any] func(ctx context.Context, obj, before T, m *chatv1alpha1.Merchant, merchantErr error) (metav1.Condition, ctrl.Result, error)

// reconcileSmallKind is a small kind's reconcile: it loads obj, waits while the cache is behind the reconciler's
// own last write or the Merchant's event, lets decide decide the Ready condition, and reports it; parts shows it
// obj's fields. A deleted object has nothing to reconcile: its Secret is garbage-collected, and the Merchant drops
// it from the tenant bundle.
func reconcileSmallKind[T smallObject[T]](ctx context.Context, r *smallKindReconciler, req ctrl.Request, obj T,
	parts func(T) smallParts, decide decideFunc[T]) (ctrl.Result, error) {
	if done, err := load(ctx, r.Client, req, obj); done {
		return ctrl.Result{}, err
	}
	if r.writes.heldBack(obj) {
		return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	// Its Merchant is usually created a moment before it, and its event may reach the cache later: then it waits
	// for that event, which brings it back, before it writes anything (its Secret, created now, could otherwise
	// be missing from the cache next time, and be created again).
	m, retry, merchantErr := merchantOfReferrer(ctx, r.Client, r.APIReader, obj.GetNamespace(), parts(obj).merchantRef,
		obj.GetCreationTimestamp().Time, r.Now())
	if errors.Is(merchantErr, errCacheBehind) {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	before := obj.DeepCopy()
	cond, res, err := decide(ctx, obj, before, m, merchantErr)
	if err != nil {
		return ctrl.Result{}, err
	}
	written := parts(obj)
	*written.observedGeneration = obj.GetGeneration()
	news := putReady(written.conditions, cond, quietFirstReady)
	statusOf := func(o T) any { return parts(o).status }
	return reportStatus(ctx, r.Client, r.writes, r.Recorder, before, obj, statusOf, news, res)
}

// secretStep is the check step that makes sure owner's generated Secret exists (provideSecret; g is nil for one
// brought along). It leaves in secrets, which starts as r.Secrets, a reader that knows the Secret when the cache
// does not have it yet, for the steps that read it.
func (r *smallKindReconciler) secretStep(ctx context.Context, owner client.Object, conds []metav1.Condition,
	g *generatedSecret, secrets *secretReader) func() error {
	return func() error {
		known, err := provideSecret(ctx, r.Client, r.Secrets, r.created, r.Recorder, owner, conds, g)
		*secrets = secrets.withKnown(known)
		return err
	}
}

// controllerFor starts the controller of a small kind (obj, whose list is list, named kind), with the watches all
// small kinds have: its objects but for their status alone, its own writes, and its Secrets with the label
// secretLabel, found by secretIndex. The caller adds the watches of what its condition follows.
func (r *smallKindReconciler) controllerFor(mgr ctrl.Manager, obj client.Object, list client.ObjectList, kind,
	secretLabel, secretIndex string) *builder.Builder {
	r.writes = newOwnWrites()
	r.created = newOwnSecrets(r.Now)
	return ctrl.NewControllerManagedBy(mgr).
		// Its own status patch must not wake it: the generated Secret may not be cached yet, and would be read
		// from the API server again.
		For(obj, notStatusOnly()).
		Watches(obj.DeepCopyObject().(client.Object), r.writes.forget()).
		Watches(&corev1.Secret{}, r.created.forget(), builder.WithPredicates(secretLabelled(secretLabel))).
		Watches(&corev1.Secret{}, enqueueReferrers(r.Client, list, secretIndex),
			builder.WithPredicates(secretLabelled(secretLabel), notGeneratedCreate(kind)))
}
