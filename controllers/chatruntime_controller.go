package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
)

// ChatRuntimeReconciler renders each ChatRuntime into its Deployment, Service, ServiceAccount, Role, RoleBinding,
// PersistentVolumeClaim, PodDisruptionBudget and HorizontalPodAutoscaler, applied with server-side apply under
// one field owner.
type ChatRuntimeReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	// Namespace is the operator's namespace, the only one ChatRuntimes are served from.
	Namespace string
	// Image is the runtime image used when a ChatRuntime names none: the operator's own.
	Image string
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes/status,verbs=get;update;patch
// What the operator renders for runtimes lives only in its own namespace: a Role there, not a ClusterRole
// (`make chart` puts the release's namespace in place of parley-system).
// +kubebuilder:rbac:groups=apps,namespace=parley-system,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=parley-system,resources=services;serviceaccounts;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,namespace=parley-system,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,namespace=parley-system,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,namespace=parley-system,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete

// Reconcile loads a ChatRuntime, applies its rendered objects and reports the Deployment's state.
func (r *ChatRuntimeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rt chatv1alpha1.ChatRuntime
	if done, err := load(ctx, r.Client, req, &rt); done {
		return ctrl.Result{}, err
	}
	before := rt.DeepCopy()
	rt.Status.ObservedGeneration = rt.Generation
	if rt.Namespace != r.Namespace {
		setReady(r.Recorder, &rt, &rt.Status.Conditions, ready(rt.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonWrongNamespace,
			fmt.Sprintf("ChatRuntimes are served only from the operator's namespace %s", r.Namespace)))
		return ctrl.Result{}, patchStatus(ctx, r.Client, before, &rt, runtimeStatus)
	}

	if err := r.apply(ctx, &rt); err != nil {
		setReady(r.Recorder, &rt, &rt.Status.Conditions,
			ready(rt.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonApplyFailed, err.Error()))
		if perr := patchStatus(ctx, r.Client, before, &rt, runtimeStatus); perr != nil {
			return ctrl.Result{}, perr
		}
		return ctrl.Result{}, err
	}

	var deploy appsv1.Deployment
	var current *appsv1.Deployment
	switch err := r.Get(ctx, types.NamespacedName{Namespace: rt.Namespace, Name: render.ServiceName(&rt)}, &deploy); {
	case err == nil:
		current = &deploy
		rt.Status.Replicas, rt.Status.ReadyReplicas = deploy.Status.Replicas, deploy.Status.ReadyReplicas
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	var bundles corev1.SecretList
	// Only counted: the cache's bundles are read without copying them, 10,000 copies a reconcile otherwise.
	if err := r.List(ctx, &bundles, client.InNamespace(rt.Namespace), client.UnsafeDisableDeepCopy,
		client.MatchingLabels{chatv1alpha1.TenantLabel: "true", chatv1alpha1.RuntimeLabel: rt.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("counting tenant bundles: %w", err)
	}
	rt.Status.Tenants = count(len(bundles.Items))
	setReady(r.Recorder, &rt, &rt.Status.Conditions, render.RuntimeReady(&rt, current))
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, &rt, runtimeStatus)
}

func runtimeStatus(rt *chatv1alpha1.ChatRuntime) any { return rt.Status }

// apply writes every rendered object with server-side apply, and removes the PodDisruptionBudget when the
// runtime may run a single replica and the HorizontalPodAutoscaler when it has no autoscaling.
func (r *ChatRuntimeReconciler) apply(ctx context.Context, rt *chatv1alpha1.ChatRuntime) error {
	objects := []runtime.ApplyConfiguration{
		render.RuntimeServiceAccount(rt),
		render.RuntimeRole(rt),
		render.RuntimeRoleBinding(rt),
		render.RuntimeService(rt),
	}
	if pvc := render.RuntimeDataClaim(rt); pvc != nil {
		objects = append(objects, pvc)
	}
	if pdb := render.RuntimePodDisruptionBudget(rt); pdb != nil {
		objects = append(objects, pdb)
	} else {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: render.ServiceName(rt)}}
		if err := r.Delete(ctx, pdb); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting PodDisruptionBudget: %w", err)
		}
	}
	if err := r.handOffReplicas(ctx, rt); err != nil {
		return err
	}
	objects = append(objects, render.RuntimeDeployment(rt, r.Image))
	if hpa := render.RuntimeHorizontalPodAutoscaler(rt); hpa != nil {
		objects = append(objects, hpa)
	} else {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: render.ServiceName(rt)}}
		if err := r.Delete(ctx, hpa); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting HorizontalPodAutoscaler: %w", err)
		}
	}
	for _, obj := range objects {
		if err := r.Apply(ctx, obj, client.FieldOwner(render.FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %T: %w", obj, err)
		}
	}
	return nil
}

// handOffReplicas keeps the Deployment's replica count when autoscaling is switched on: the count is applied
// once more under a field owner of its own, so that leaving it out of the operator's apply does not reset it to 1
// before the autoscaler takes over. It does not force ownership: should the cached Deployment be stale and the
// live count differ, the apply conflicts and the reconcile is retried, rather than overwriting the count.
func (r *ChatRuntimeReconciler) handOffReplicas(ctx context.Context, rt *chatv1alpha1.ChatRuntime) error {
	if rt.Spec.Autoscaling == nil {
		return nil
	}
	var d appsv1.Deployment
	switch err := r.Get(ctx, types.NamespacedName{Namespace: rt.Namespace, Name: render.ServiceName(rt)}, &d); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading the Deployment's replicas: %w", err)
	}
	handoff := render.ReplicasHandoff(rt, &d)
	if handoff == nil {
		return nil
	}
	if err := r.Apply(ctx, handoff, client.FieldOwner(render.ReplicasHandoffFieldOwner)); err != nil {
		return fmt.Errorf("handing the Deployment's replicas over to the autoscaler: %w", err)
	}
	return nil
}

// SetupWithManager watches ChatRuntimes, what they own, and tenant bundles (for the tenant count).
func (r *ChatRuntimeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&chatv1alpha1.ChatRuntime{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{
					Namespace: o.GetNamespace(), Name: o.GetLabels()[chatv1alpha1.RuntimeLabel]}}}
			}), builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelTenant))).
		Named("chatruntime").
		Complete(r)
}
