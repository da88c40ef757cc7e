package controllers

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/credentials"
	webhooktarget "github.com/parley-dev/parley/runtime/webhook/target"
)

// WebhookReconciler generates each Webhook's signing secret once (or reads the one brought along) and reports
// whether events are delivered to it. The Merchant reconciler puts endpoints into the tenant bundle.
type WebhookReconciler struct {
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
	// Namespace is where ChatRuntimes live: the operator's namespace.
	Namespace string
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks/status,verbs=get;update;patch

// Reconcile loads a Webhook, makes sure its signing secret exists, decides its Ready condition and reports it.
func (r *WebhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hook chatv1alpha1.Webhook
	if done, err := load(ctx, r.Client, req, &hook); done {
		return ctrl.Result{}, err
	}
	if r.writes.heldBack(&hook) {
		return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
	}
	// Its Merchant is usually created a moment before it, and its event may reach the cache later: then it waits
	// for that event, which brings it back, before it writes anything (its Secret, created now, could otherwise
	// be missing from the cache next time, and be created again).
	m, retry, merchantErr := merchantOfReferrer(ctx, r.Client, r.APIReader, hook.Namespace, hook.Spec.MerchantRef,
		hook.CreationTimestamp.Time, r.Now())
	if errors.Is(merchantErr, errCacheBehind) {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	before := hook.DeepCopy()
	ref := hook.SigningSecretRef()
	hook.Status.SecretRef = &ref

	var plan chatv1alpha1.Plan
	var rt chatv1alpha1.ChatRuntime
	secrets := r.Secrets
	p, err := check(
		func() error {
			known, err := provideSecret(ctx, r.Client, r.Secrets, r.created, r.Recorder, &hook, before.Status.Conditions, generatedSigningSecret(&hook))
			secrets = secrets.withKnown(known)
			return err
		},
		func() error {
			_, err := resolveSigningSecrets(ctx, secrets, &hook)
			return err
		},
		func() error {
			if merchantErr != nil {
				return merchantErr
			}
			if err := getReferenced(ctx, r.Client, types.NamespacedName{Name: m.Spec.PlanRef.Name}, &plan,
				chatv1alpha1.ReasonPlanNotFound, "the merchant's Plan %s does not exist", m.Spec.PlanRef.Name); err != nil {
				return err
			}
			return getReferenced(ctx, r.Client, types.NamespacedName{Namespace: r.Namespace, Name: m.Spec.RuntimeRef.Name}, &rt,
				chatv1alpha1.ReasonRuntimeNotFound, "the merchant's ChatRuntime %s does not exist", m.Spec.RuntimeRef.Name)
		},
	)
	if err != nil {
		return ctrl.Result{}, err
	}
	cond := readyFrom(hook.Generation, p, "events are delivered to the endpoint")
	if p == nil {
		cond = webhookCondition(hook.Generation, &plan, hook.Spec.Disabled,
			webhookTarget(hook.Spec.URL, rt.Spec.Webhooks.AllowPrivateAddresses))
	}
	hook.Status.ObservedGeneration = hook.Generation
	news := putReady(&hook.Status.Conditions, cond, quietFirstReady)
	statusOf := func(w *chatv1alpha1.Webhook) any { return w.Status }
	return reportStatus(ctx, r.Client, r.writes, r.Recorder, before, &hook, statusOf, news, ctrl.Result{})
}

// generatedSigningSecret describes the Secret of a signing secret the operator generates, or is nil for a
// webhook that brings its own.
func generatedSigningSecret(hook *chatv1alpha1.Webhook) *generatedSecret {
	if hook.Spec.SigningSecretRef != nil {
		return nil
	}
	ref := hook.SigningSecretRef()
	return &generatedSecret{
		ref:      ref,
		label:    chatv1alpha1.SecretLabelSigningSecret,
		generate: credentials.NewSigningSecret,
		reason:   chatv1alpha1.EventReasonSigningSecretGenerated,
		note:     "generated a signing secret into Secret " + ref.Name,
	}
}

// webhookTarget decides whether the runtime will deliver to rawURL: unless allowPrivate, it refuses loopback,
// private and link-local addresses (webhooktarget.Public, the runtime's own rule) and names that resolve inside the
// cluster (localhost, *.localhost, *.svc, *.cluster.local, and single-label names the cluster's search domains
// complete). Public names that resolve to private addresses are only found by the runtime, at delivery.
func webhookTarget(rawURL string, allowPrivate bool) *problem {
	if allowPrivate {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return newProblem(chatv1alpha1.ReasonTargetNotAllowed, "the URL does not parse")
	}
	// A name with its root's trailing dot ("kubernetes.default.svc.") is the same name.
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		if !webhooktarget.Public(addr) {
			return newProblem(chatv1alpha1.ReasonTargetNotAllowed, "the runtime refuses deliveries to %s, a loopback, "+
				"private or link-local address; the platform team may allow them on the ChatRuntime", host)
		}
		return nil
	}
	if host == "localhost" || !strings.Contains(host, ".") || slices.ContainsFunc(
		[]string{".localhost", ".svc", ".cluster.local"}, func(s string) bool { return strings.HasSuffix(host, s) }) {
		return newProblem(chatv1alpha1.ReasonTargetNotAllowed, "the runtime refuses deliveries to %s, which resolves "+
			"inside the cluster; the platform team may allow private targets on the ChatRuntime", host)
	}
	return nil
}

// webhookCondition decides a webhook's Ready condition from its merchant's plan, its own switch and whether its
// runtime refuses its target (webhookTarget's problem, or nil).
func webhookCondition(generation int64, plan *chatv1alpha1.Plan, disabled bool, target *problem) metav1.Condition {
	switch {
	case !plan.Spec.Features.Webhooks:
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks,
			"the merchant's plan "+plan.Name+" does not include webhooks; no events are delivered")
	case target != nil:
		return readyFrom(generation, target, "")
	case disabled:
		// Disabled on purpose is a healthy state for GitOps tools, so Ready stays True.
		return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonDisabled, "deliveries are paused by spec.disabled")
	default:
		return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "events are delivered to the endpoint")
	}
}

// SetupWithManager watches Webhooks, their Secrets, their Merchants and the Merchants' Plans.
func (r *WebhookReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.writes = newOwnWrites()
	r.created = newOwnSecrets(r.Now)
	return ctrl.NewControllerManagedBy(mgr).
		// Its own status patch must not wake it: the generated Secret may not be cached yet, and would be read
		// from the API server again.
		For(&chatv1alpha1.Webhook{}, notStatusOnly()).
		Watches(&chatv1alpha1.Webhook{}, r.writes.forget()).
		Watches(&corev1.Secret{}, r.created.forget(), builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelSigningSecret))).
		Watches(&corev1.Secret{}, enqueueReferrers(r.Client, &chatv1alpha1.WebhookList{}, webhookSecretIndex),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelSigningSecret), notGeneratedCreate("Webhook"))).
		// A webhook's condition follows the spec of its Merchant, Plan and ChatRuntime, never their status, which
		// changes with every merchant added.
		Watches(&chatv1alpha1.Merchant{}, enqueueReferrers(r.Client, &chatv1alpha1.WebhookList{}, webhookMerchantIndex), specChanges()).
		Watches(&chatv1alpha1.Plan{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfPlan), specChanges()).
		Watches(&chatv1alpha1.ChatRuntime{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfRuntime), specChanges()).
		WithOptions(controllerOptions(workers)).
		Named("webhook").
		Complete(r)
}

// hooksOfPlan maps a Plan to the Webhooks of the Merchants on it.
func (r *WebhookReconciler) hooksOfPlan(ctx context.Context, o client.Object) []reconcile.Request {
	return r.hooksOfMerchants(ctx, merchantPlanIndex, o.GetName())
}

// hooksOfRuntime maps a ChatRuntime of the operator's namespace to the Webhooks of the Merchants on it.
func (r *WebhookReconciler) hooksOfRuntime(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.Namespace {
		return nil
	}
	return r.hooksOfMerchants(ctx, merchantRuntimeIndex, o.GetName())
}

// hooksOfMerchants maps the Merchants whose indexed field is value to their Webhooks.
func (r *WebhookReconciler) hooksOfMerchants(ctx context.Context, field, value string) []reconcile.Request {
	var reqs []reconcile.Request
	for _, m := range requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, "", field, value) {
		reqs = append(reqs, requestsFor(ctx, r.Client, &chatv1alpha1.WebhookList{}, m.Namespace, webhookMerchantIndex, m.Name)...)
	}
	return reqs
}
