package controllers

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/credentials"
	webhooktarget "github.com/parley-dev/parley/runtime/webhook/target"
)

// WebhookReconciler generates each Webhook's signing secret once (or reads the one brought along) and reports
// whether events are delivered to it. The Merchant reconciler puts endpoints into the tenant bundle.
type WebhookReconciler struct {
	smallKindReconciler
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks/status,verbs=get;update;patch

// Reconcile loads a Webhook, makes sure its signing secret exists, decides its Ready condition and reports it.
func (r *WebhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileSmallKind(ctx, &r.smallKindReconciler, req, &chatv1alpha1.Webhook{}, r.parts, r.decide)
}

// parts shows the skeleton (reconcileSmallKind) the Webhook's fields.
func (*WebhookReconciler) parts(hook *chatv1alpha1.Webhook) smallParts {
	return smallParts{merchantRef: hook.Spec.MerchantRef, status: hook.Status,
		observedGeneration: &hook.Status.ObservedGeneration, conditions: &hook.Status.Conditions}
}

// decide makes sure the webhook's signing secret exists and decides whether events are delivered to it, from its
// Merchant's Plan and ChatRuntime (webhookCondition).
func (r *WebhookReconciler) decide(ctx context.Context, hook, before *chatv1alpha1.Webhook, m *chatv1alpha1.Merchant,
	merchantErr error) (metav1.Condition, ctrl.Result, error) {
	ref := hook.SigningSecretRef()
	hook.Status.SecretRef = &ref

	var plan chatv1alpha1.Plan
	var rt chatv1alpha1.ChatRuntime
	secrets := r.Secrets
	p, err := check(
		r.secretStep(ctx, hook, before.Status.Conditions, generatedSigningSecret(hook), &secrets),
		func() error {
			_, err := resolveSigningSecrets(ctx, secrets, hook)
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
		return metav1.Condition{}, ctrl.Result{}, err
	}
	if p != nil {
		return readyFrom(hook.Generation, p, "events are delivered to the endpoint"), ctrl.Result{}, nil
	}
	return webhookCondition(hook.Generation, &plan, hook.Spec.Disabled,
		webhookTarget(hook.Spec.URL, rt.Spec.Webhooks.AllowPrivateAddresses)), ctrl.Result{}, nil
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
	return r.controllerFor(mgr, &chatv1alpha1.Webhook{}, &chatv1alpha1.WebhookList{}, "Webhook",
		chatv1alpha1.SecretLabelSigningSecret, webhookSecretIndex).
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
