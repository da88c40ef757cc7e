package controllers

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/render"
)

// APIKeyReconciler generates each APIKey's key once (or reads the one brought along) and reports whether it is
// usable. The Merchant reconciler puts usable keys' hashes into the tenant bundle.
type APIKeyReconciler struct {
	smallKindReconciler
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=apikeys,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=apikeys/status,verbs=get;update;patch
// Secrets: read everywhere (a label-filtered cache); written only in the operator's namespace (tenant bundles:
// updated, retired, never deleted). Generated keys and signing secrets in a tenant's namespace need the
// ClusterRole parley-tenant-secrets (config/rbac/tenant_secrets_role.yaml), which the platform team binds per
// tenant namespace; without it an APIKey or Webhook is Ready=False, SecretsNotGranted.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=parley-system,resources=secrets,verbs=create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile loads an APIKey, makes sure its key exists, decides its Ready condition and reports it.
func (r *APIKeyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileSmallKind(ctx, &r.smallKindReconciler, req, &chatv1alpha1.APIKey{}, r.parts, r.decide)
}

// parts shows the skeleton (reconcileSmallKind) the APIKey's fields.
func (*APIKeyReconciler) parts(key *chatv1alpha1.APIKey) smallParts {
	return smallParts{merchantRef: key.Spec.MerchantRef, status: key.Status,
		observedGeneration: &key.Status.ObservedGeneration, conditions: &key.Status.Conditions}
}

// decide makes sure the key's Secret exists, describes the key in its status, and decides whether it is usable:
// not expired, within its runtime's limit of keys, and not refused as another merchant's. A key that will expire
// is looked at again when it does.
func (r *APIKeyReconciler) decide(ctx context.Context, key, before *chatv1alpha1.APIKey, m *chatv1alpha1.Merchant,
	merchantErr error) (metav1.Condition, ctrl.Result, error) {
	ref := key.KeySecretRef()
	key.Status.SecretRef = &ref

	var requeue time.Duration
	var resolved render.ResolvedKey
	secrets := r.Secrets
	p, err := check(
		r.secretStep(ctx, key, before.Status.Conditions, generatedKey(key), &secrets),
		func() error {
			var described credentials.Key
			var err error
			if resolved, described, err = resolveKey(ctx, secrets, key); err == nil {
				key.Status.KeyID, key.Status.Prefix = described.ID, described.Prefix
			}
			return err
		},
		func() error {
			var p *problem
			if p, requeue = keyExpiry(key.Spec.ExpiresAt, r.Now()); p != nil {
				return p
			}
			return nil
		},
		func() error {
			if merchantErr != nil {
				return merchantErr
			}
			limits, err := tenantLimits(ctx, r.Client, r.Namespace, m)
			if err != nil {
				return err
			}
			if err := keyPastLimit(ctx, r.Client, key, limits); err != nil {
				return err
			}
			if p := refusedByRuntime(m.Status.KeysInUse, resolved.ID); p != nil {
				return p
			}
			return keyInUse(ctx, r.Client, r.Namespace, resolved.SHA256, render.Source(m))
		},
	)
	if err != nil {
		return metav1.Condition{}, ctrl.Result{}, err
	}
	return readyFrom(key.Generation, p, "the key is published to the runtime"), ctrl.Result{RequeueAfter: requeue}, nil
}

// generatedKey describes the Secret of a key the operator generates, or is nil for a key brought along.
func generatedKey(key *chatv1alpha1.APIKey) *generatedSecret {
	if key.Spec.ExistingSecretRef != nil {
		return nil
	}
	prefix := credentials.PublishablePrefix
	if key.Spec.Type == chatv1alpha1.APIKeySecret {
		prefix = credentials.SecretPrefix
	}
	ref := key.KeySecretRef()
	return &generatedSecret{
		ref:      ref,
		label:    chatv1alpha1.SecretLabelAPIKey,
		generate: func() (string, error) { return credentials.NewAPIKey(prefix) },
		reason:   chatv1alpha1.EventReasonKeyGenerated,
		note:     "generated a " + string(key.Spec.Type) + " key into Secret " + ref.Name,
	}
}

// refusedByRuntime reports as a KeyInUse problem a key whose ID is among its Merchant's status.keysInUse: its
// runtime refuses it, because another merchant created a key of the same value first, in its dashboard. The
// problem names no other merchant.
func refusedByRuntime(keysInUse []string, keyID string) *problem {
	if !slices.Contains(keysInUse, keyID) {
		return nil
	}
	return newProblem(chatv1alpha1.ReasonKeyInUse,
		"the runtime refuses this key: another merchant created a key with this value first; generate a new key or bring another one")
}

// keyExpiry decides whether a key with the given expiry is usable at now: an expired key is a problem; a key that
// will expire is looked at again when it does (requeue), a key without expiry never.
func keyExpiry(expiresAt *metav1.Time, now time.Time) (*problem, time.Duration) {
	if render.Expired(expiresAt, now) {
		return newProblem(chatv1alpha1.ReasonExpired, "the key expired at %s", expiresAt.UTC().Format(time.RFC3339)), 0
	}
	if expiresAt == nil {
		return nil, 0
	}
	return nil, expiresAt.Sub(now)
}

// SetupWithManager watches APIKeys, their Secrets (owned or brought along) and their Merchants.
func (r *APIKeyReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return r.controllerFor(mgr, &chatv1alpha1.APIKey{}, &chatv1alpha1.APIKeyList{}, "APIKey",
		chatv1alpha1.SecretLabelAPIKey, apiKeySecretIndex).
		// A key's condition follows whether its Merchant exists, and of the Merchant's status only the keys its
		// runtime refuses.
		Watches(&chatv1alpha1.Merchant{}, enqueueReferrers(r.Client, &chatv1alpha1.APIKeyList{}, apiKeyMerchantIndex),
			builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, keysInUseChanged()))).
		// A key deleted makes room, under the runtime's apiKeysPerMerchant, for its Merchant's other keys; a
		// runtime's limit changed moves the line for all of its Merchants' keys.
		Watches(&chatv1alpha1.APIKey{}, handler.EnqueueRequestsFromMapFunc(r.siblingKeys),
			onlyDeletes()).
		Watches(&chatv1alpha1.ChatRuntime{}, handler.EnqueueRequestsFromMapFunc(r.keysOfRuntime), specChanges()).
		WithOptions(controllerOptions(workers)).
		Named("apikey").
		Complete(r)
}

// keysInUseChanged passes an update of a Merchant whose status.keysInUse changed, and no other event.
func keysInUseChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, oldOK := e.ObjectOld.(*chatv1alpha1.Merchant)
			updated, newOK := e.ObjectNew.(*chatv1alpha1.Merchant)
			return oldOK && newOK && !slices.Equal(old.Status.KeysInUse, updated.Status.KeysInUse)
		},
	}
}

// siblingKeys maps a deleted APIKey to the other keys of its Merchant.
func (r *APIKeyReconciler) siblingKeys(ctx context.Context, o client.Object) []reconcile.Request {
	key, ok := o.(*chatv1alpha1.APIKey)
	if !ok {
		return nil
	}
	return requestsFor(ctx, r.Client, &chatv1alpha1.APIKeyList{}, key.Namespace, apiKeyMerchantIndex, key.Spec.MerchantRef.Name)
}

// keysOfRuntime maps a ChatRuntime to the keys of its Merchants.
func (r *APIKeyReconciler) keysOfRuntime(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.Namespace {
		return nil
	}
	var reqs []reconcile.Request
	for _, m := range requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, "", merchantRuntimeIndex, o.GetName()) {
		reqs = append(reqs, requestsFor(ctx, r.Client, &chatv1alpha1.APIKeyList{}, m.Namespace, apiKeyMerchantIndex, m.Name)...)
	}
	return reqs
}
