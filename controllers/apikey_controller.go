package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/render"
)

// APIKeyReconciler generates each APIKey's key once (or reads the one brought along) and reports whether it is
// usable. The Merchant reconciler puts usable keys' hashes into the tenant bundle.
type APIKeyReconciler struct {
	client.Client
	Secrets  secretReader
	Recorder recorder.EventRecorder
	Now      func() time.Time
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=apikeys,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=apikeys/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile loads an APIKey, makes sure its key exists, decides its Ready condition and reports it.
func (r *APIKeyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var key chatv1alpha1.APIKey
	if err := r.Get(ctx, req.NamespacedName, &key); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !key.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the owned Secret is garbage-collected; the Merchant drops the hash
	}
	before := key.DeepCopy()
	ref := key.KeySecretRef()
	key.Status.SecretRef = &ref

	var p *problem
	if key.Spec.ExistingSecretRef == nil {
		prefix := credentials.PublishablePrefix
		if key.Spec.Type == chatv1alpha1.APIKeySecret {
			prefix = credentials.SecretPrefix
		}
		created, err := ensureGenerated(ctx, r.Client, r.Secrets, &key, ref, chatv1alpha1.SecretLabelAPIKey,
			func() (string, error) { return credentials.NewAPIKey(prefix) })
		if p, err = asProblem(err); err != nil {
			return ctrl.Result{}, err
		}
		if created {
			r.Recorder.Eventf(&key, nil, corev1.EventTypeNormal, chatv1alpha1.EventReasonKeyGenerated, "Generate",
				"generated a %s key into Secret %s", key.Spec.Type, ref.Name)
		}
	}

	var requeue time.Duration
	if p == nil {
		_, described, err := resolveKey(ctx, r.Secrets, &key)
		if p, err = asProblem(err); err != nil {
			return ctrl.Result{}, err
		}
		if p == nil {
			key.Status.KeyID, key.Status.Prefix = described.ID, described.Prefix
			p, requeue, err = r.usable(ctx, &key)
			if err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	key.Status.ObservedGeneration = key.Generation
	setReady(r.Recorder, &key, &key.Status.Conditions, readyFrom(key.Generation, p, "the key is published to the runtime"))
	if err := patchStatus(ctx, r.Client, before, &key, func(k *chatv1alpha1.APIKey) any { return k.Status }); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// usable decides whether a readable key can be used now, and when to look again.
func (r *APIKeyReconciler) usable(ctx context.Context, key *chatv1alpha1.APIKey) (*problem, time.Duration, error) {
	now := r.Now()
	if render.Expired(key.Spec.ExpiresAt, now) {
		return newProblem(chatv1alpha1.ReasonExpired, "the key expired at %s", key.Spec.ExpiresAt.UTC().Format(time.RFC3339)), 0, nil
	}
	var requeue time.Duration
	if key.Spec.ExpiresAt != nil {
		requeue = key.Spec.ExpiresAt.Sub(now)
	}
	var m chatv1alpha1.Merchant
	err := r.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: key.Spec.MerchantRef.Name}, &m)
	if apierrors.IsNotFound(err) {
		return newProblem(chatv1alpha1.ReasonMerchantNotFound, "Merchant %s does not exist", key.Spec.MerchantRef.Name), requeue, nil
	}
	return nil, requeue, err
}

// SetupWithManager watches APIKeys, their Secrets (owned or brought along) and their Merchants.
func (r *APIKeyReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&chatv1alpha1.APIKey{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.keysOfSecret),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelAPIKey))).
		Watches(&chatv1alpha1.Merchant{}, handler.EnqueueRequestsFromMapFunc(r.keysOfMerchant)).
		WithOptions(controllerOptions(workers)).
		Named("apikey").
		Complete(r)
}

func (r *APIKeyReconciler) keysOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return requestsFor(ctx, r.Client, &chatv1alpha1.APIKeyList{}, o.GetNamespace(), apiKeySecretIndex, o.GetName())
}

func (r *APIKeyReconciler) keysOfMerchant(ctx context.Context, o client.Object) []reconcile.Request {
	return requestsFor(ctx, r.Client, &chatv1alpha1.APIKeyList{}, o.GetNamespace(), apiKeyMerchantIndex, o.GetName())
}
