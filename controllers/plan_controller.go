package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// PlanReconciler counts the merchants on each Plan. Merchants re-render themselves when their Plan changes.
type PlanReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=plans,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=plans/status,verbs=get;update;patch

// Reconcile counts a Plan's merchants and reports.
func (r *PlanReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var plan chatv1alpha1.Plan
	if err := r.Get(ctx, req.NamespacedName, &plan); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := plan.DeepCopy()
	var merchants chatv1alpha1.MerchantList
	// Only counted: the cache's objects are read without copying them, 10,000 copies a reconcile otherwise.
	if err := r.List(ctx, &merchants, client.MatchingFields{merchantPlanIndex: plan.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing merchants of plan %s: %w", plan.Name, err)
	}
	plan.Status.Merchants = count(len(merchants.Items))
	plan.Status.ObservedGeneration = plan.Generation
	setReady(r.Recorder, &plan, &plan.Status.Conditions, readyFrom(plan.Generation, selectorProblem(plan.Spec.AllowedNamespaces),
		fmt.Sprintf("%d merchants are on this plan", plan.Status.Merchants)))
	return retryConflict(patchStatus(ctx, r.Client, before, &plan, func(p *chatv1alpha1.Plan) any { return p.Status }))
}

// merchantCountDelay is how long a Merchant's arrival, departure or move waits before its Plans count their
// merchants again (enqueueAfter): a Plan's status is patched once every few seconds while thousands of merchants
// are created, not once a merchant.
const merchantCountDelay = 5 * time.Second

// SetupWithManager watches Plans and the Merchants that refer to them.
func (r *PlanReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		// Its own status patch must not bring a Plan back: the count is taken again when a Merchant changes.
		For(&chatv1alpha1.Plan{}, notStatusOnly()).
		// The count changes when a Merchant comes, goes or names another plan, not when its status does.
		Watches(&chatv1alpha1.Merchant{}, enqueueAfter(merchantCountDelay, func(o client.Object) reconcile.Request {
			return reconcile.Request{NamespacedName: types.NamespacedName{Name: o.(*chatv1alpha1.Merchant).Spec.PlanRef.Name}}
		}), specChanges()).
		Named("plan").
		Complete(r)
}
