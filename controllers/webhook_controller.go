package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
)

// WebhookReconciler generates each Webhook's signing secret once (or reads the one brought along) and reports
// whether events are delivered to it. The Merchant reconciler puts endpoints into the tenant bundle.
type WebhookReconciler struct {
	client.Client
	Secrets  secretReader
	Recorder recorder.EventRecorder
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=webhooks/status,verbs=get;update;patch

// Reconcile loads a Webhook, makes sure its signing secret exists, decides its Ready condition and reports it.
func (r *WebhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hook chatv1alpha1.Webhook
	if err := r.Get(ctx, req.NamespacedName, &hook); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hook.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := hook.DeepCopy()
	ref := hook.SigningSecretRef()
	hook.Status.SecretRef = &ref

	var p *problem
	if hook.Spec.SigningSecretRef == nil {
		created, err := ensureGenerated(ctx, r.Client, r.Secrets, &hook, ref, chatv1alpha1.SecretLabelSigningSecret,
			credentials.NewSigningSecret)
		if p, err = asProblem(err); err != nil {
			return ctrl.Result{}, err
		}
		if created {
			r.Recorder.Eventf(&hook, nil, corev1.EventTypeNormal, chatv1alpha1.EventReasonSigningSecretGenerated, "Generate",
				"generated a signing secret into Secret %s", ref.Name)
		}
	}
	if p == nil {
		_, err := resolveSigningSecrets(ctx, r.Secrets, &hook)
		if p, err = asProblem(err); err != nil {
			return ctrl.Result{}, err
		}
	}
	cond := readyFrom(hook.Generation, p, "events are delivered to the endpoint")
	if p == nil {
		var err error
		if cond, err = r.deliverable(ctx, &hook); err != nil {
			return ctrl.Result{}, err
		}
	}
	hook.Status.ObservedGeneration = hook.Generation
	setReady(r.Recorder, &hook, &hook.Status.Conditions, cond)
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, &hook, func(w *chatv1alpha1.Webhook) any { return w.Status })
}

// deliverable decides, for a webhook whose secret is in order, whether its merchant's plan lets events flow.
func (r *WebhookReconciler) deliverable(ctx context.Context, hook *chatv1alpha1.Webhook) (metav1.Condition, error) {
	gen := hook.Generation
	var m chatv1alpha1.Merchant
	err := r.Get(ctx, types.NamespacedName{Namespace: hook.Namespace, Name: hook.Spec.MerchantRef.Name}, &m)
	if apierrors.IsNotFound(err) {
		return ready(gen, metav1.ConditionFalse, chatv1alpha1.ReasonMerchantNotFound,
			"Merchant "+hook.Spec.MerchantRef.Name+" does not exist"), nil
	} else if err != nil {
		return metav1.Condition{}, err
	}
	var plan chatv1alpha1.Plan
	err = r.Get(ctx, types.NamespacedName{Name: m.Spec.PlanRef.Name}, &plan)
	if apierrors.IsNotFound(err) {
		return ready(gen, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotFound,
			"the merchant's Plan "+m.Spec.PlanRef.Name+" does not exist"), nil
	} else if err != nil {
		return metav1.Condition{}, err
	}
	return webhookCondition(gen, &plan, hook.Spec.Disabled), nil
}

// webhookCondition decides a webhook's Ready condition from its merchant's plan and its own switch.
func webhookCondition(generation int64, plan *chatv1alpha1.Plan, disabled bool) metav1.Condition {
	switch {
	case !plan.Spec.Features.Webhooks:
		return ready(generation, metav1.ConditionFalse, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks,
			"the merchant's plan "+plan.Name+" does not include webhooks; no events are delivered")
	case disabled:
		// Disabled on purpose is a healthy state for GitOps tools, so Ready stays True.
		return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonDisabled, "deliveries are paused by spec.disabled")
	default:
		return ready(generation, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled, "events are delivered to the endpoint")
	}
}

// SetupWithManager watches Webhooks, their Secrets, their Merchants and the Merchants' Plans.
func (r *WebhookReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&chatv1alpha1.Webhook{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfSecret),
			builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelSigningSecret))).
		Watches(&chatv1alpha1.Merchant{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfMerchant)).
		Watches(&chatv1alpha1.Plan{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfPlan)).
		WithOptions(controllerOptions(workers)).
		Named("webhook").
		Complete(r)
}

func (r *WebhookReconciler) hooksOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return requestsFor(ctx, r.Client, &chatv1alpha1.WebhookList{}, o.GetNamespace(), webhookSecretIndex, o.GetName())
}

func (r *WebhookReconciler) hooksOfMerchant(ctx context.Context, o client.Object) []reconcile.Request {
	return requestsFor(ctx, r.Client, &chatv1alpha1.WebhookList{}, o.GetNamespace(), webhookMerchantIndex, o.GetName())
}

func (r *WebhookReconciler) hooksOfPlan(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, m := range requestsFor(ctx, r.Client, &chatv1alpha1.MerchantList{}, "", merchantPlanIndex, o.GetName()) {
		reqs = append(reqs, requestsFor(ctx, r.Client, &chatv1alpha1.WebhookList{}, m.Namespace, webhookMerchantIndex, m.Name)...)
	}
	return reqs
}
