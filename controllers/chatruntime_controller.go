package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
)

// runtimeFinalizer deletes a runtime's workload in a target namespace of its own, which the ChatRuntime cannot
// own across namespaces.
const runtimeFinalizer = "chat.parley.dev/runtime-workload"

// ChatRuntimeReconciler renders each ChatRuntime into its Deployment, Service, ServiceAccount, Role, RoleBinding,
// PersistentVolumeClaim, PodDisruptionBudget, HorizontalPodAutoscaler and NetworkPolicy, applied with server-side apply under
// one field owner.
type ChatRuntimeReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	// Namespace is the operator's namespace, the only one ChatRuntimes are served from.
	Namespace string
	// Image is the runtime image used when a ChatRuntime names none: the operator's own.
	Image string
	// Now is the clock of status.lastOutage.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes,verbs=update;patch
// +kubebuilder:rbac:groups=chat.parley.dev,resources=chatruntimes/finalizers,verbs=update
// The operator reads what it renders for runtimes in every namespace (its cache keeps only its own, by label),
// and writes it only in its own namespace: a Role there (`make chart` puts the release's namespace in place of
// parley-system), whose rules the ClusterRole parley-runtime-namespace repeats for the platform team to bind in
// each runtime's target namespace.
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;persistentvolumeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,namespace=parley-system,resources=deployments,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=parley-system,resources=services;serviceaccounts;persistentvolumeclaims,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,namespace=parley-system,resources=roles;rolebindings,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups=policy,namespace=parley-system,resources=poddisruptionbudgets,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,namespace=parley-system,resources=horizontalpodautoscalers,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,namespace=parley-system,resources=networkpolicies,verbs=create;update;patch;delete

// Reconcile loads a ChatRuntime, applies its rendered objects and reports the Deployment's state.
func (r *ChatRuntimeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rt chatv1alpha1.ChatRuntime
	if err := r.Get(ctx, req.NamespacedName, &rt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rt.DeletionTimestamp.IsZero() {
		return retryConflict(r.finalize(ctx, &rt))
	}
	before := rt.DeepCopy()
	rt.Status.ObservedGeneration = rt.Generation
	if rt.Namespace != r.Namespace {
		setReady(r.Recorder, &rt, &rt.Status.Conditions, ready(rt.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonWrongNamespace,
			fmt.Sprintf("ChatRuntimes are served only from the operator's namespace %s", r.Namespace)))
		return retryConflict(patchStatus(ctx, r.Client, before, &rt, runtimeStatus))
	}

	target := render.TargetNamespace(&rt)
	if target != rt.Namespace && controllerutil.AddFinalizer(&rt, runtimeFinalizer) {
		if err := r.Update(ctx, &rt); err != nil {
			return retryConflict(fmt.Errorf("adding finalizer: %w", err))
		}
	}
	setIsolated(&rt, r.Namespace)
	setProxiesTrusted(&rt)
	var all chatv1alpha1.ChatRuntimeList
	if err := r.List(ctx, &all, client.InNamespace(r.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ChatRuntimes: %w", err)
	}
	if targetTaken(&rt, all.Items, r.Namespace) {
		// An older runtime moved into the namespace after this one: this one's workload goes.
		if err := r.deleteWorkload(ctx, &rt, target); err != nil {
			return ctrl.Result{}, err
		}
		setReady(r.Recorder, &rt, &rt.Status.Conditions, ready(rt.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNamespaceInUse,
			fmt.Sprintf("another ChatRuntime already runs in namespace %s; give this one a namespace of its own", target)))
		return retryConflict(patchStatus(ctx, r.Client, before, &rt, runtimeStatus))
	}

	if problem := backupScheduleProblem(&rt); problem != "" {
		// Applied, the schedule would stop the runtime's new pods at their start; the running ones keep serving.
		setReady(r.Recorder, &rt, &rt.Status.Conditions,
			ready(rt.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonInvalidBackupSchedule, problem))
		return retryConflict(patchStatus(ctx, r.Client, before, &rt, runtimeStatus))
	}
	if err := r.apply(ctx, &rt); err != nil {
		reason, message := applyProblem(err, target, r.Namespace)
		setReady(r.Recorder, &rt, &rt.Status.Conditions,
			ready(rt.Generation, metav1.ConditionFalse, reason, message))
		if perr := patchStatus(ctx, r.Client, before, &rt, runtimeStatus); perr != nil {
			return retryConflict(perr)
		}
		return ctrl.Result{}, err
	}
	if target != rt.Namespace {
		// A ChatRuntime given a targetNamespace after it ran in its own namespace moves there.
		if err := r.deleteWorkload(ctx, &rt, rt.Namespace); err != nil {
			return ctrl.Result{}, err
		}
	}

	var deploy appsv1.Deployment
	var current *appsv1.Deployment
	switch err := r.Get(ctx, types.NamespacedName{Namespace: target, Name: render.ServiceName(&rt)}, &deploy); {
	case err == nil:
		current = &deploy
		rt.Status.LastOutage = render.RuntimeOutage(rt.Status.LastOutage, &deploy, rt.Status.ReadyReplicas,
			metav1.NewTime(r.Now().Truncate(time.Second)))
		rt.Status.Replicas, rt.Status.ReadyReplicas = deploy.Status.Replicas, deploy.Status.ReadyReplicas
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	setReady(r.Recorder, &rt, &rt.Status.Conditions, render.RuntimeReady(&rt, current))
	return retryConflict(patchStatus(ctx, r.Client, before, &rt, runtimeStatus))
}

// countTenants reconciles a ChatRuntime's tenant count alone, apart from Reconcile: the rendered objects do not
// depend on the tenants, and while thousands of merchants are published, waking Reconcile to count them applied
// its objects again every few seconds without changing them. Its merge patch holds the count only, so it does
// not undo the conditions Reconcile patches, nor they the count.
func (r *ChatRuntimeReconciler) countTenants(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rt chatv1alpha1.ChatRuntime
	if done, err := load(ctx, r.Client, req, &rt); done || rt.Namespace != r.Namespace {
		return ctrl.Result{}, err
	}
	var bundles corev1.SecretList
	// Only counted: the cache's bundles are read without copying them, 10,000 copies a reconcile otherwise.
	if err := r.List(ctx, &bundles, client.InNamespace(render.TargetNamespace(&rt)), client.UnsafeDisableDeepCopy,
		client.MatchingLabels{chatv1alpha1.TenantLabel: "true", chatv1alpha1.RuntimeLabel: rt.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("counting tenant bundles: %w", err)
	}
	before := rt.DeepCopy()
	rt.Status.Tenants = count(len(bundles.Items))
	return retryConflict(patchStatus(ctx, r.Client, before, &rt, runtimeStatus))
}

func runtimeStatus(rt *chatv1alpha1.ChatRuntime) any { return rt.Status }

// applyProblem words why the runtime's objects could not be applied. Forbidden in a target namespace of its own
// almost always means the platform team has not granted the operator that namespace yet, so the message says
// what to bind rather than quoting the API server's refusal alone.
func applyProblem(err error, target, operatorNamespace string) (reason, message string) {
	if target != operatorNamespace && apierrors.IsForbidden(err) {
		return chatv1alpha1.ReasonNamespaceNotGranted, fmt.Sprintf("the operator may not write in namespace %s: "+
			"bind the ClusterRole parley-runtime-namespace there (with Helm: list it in runtimeNamespaces): %v", target, err)
	}
	return chatv1alpha1.ReasonApplyFailed, err.Error()
}

// setIsolated reports whether the runtime can read only its own tenant bundles: it can read every Secret of its
// target namespace, so not when that is the operator's namespace.
func setIsolated(rt *chatv1alpha1.ChatRuntime, operatorNamespace string) {
	cond := metav1.Condition{Type: chatv1alpha1.ConditionIsolated, ObservedGeneration: rt.Generation,
		Status: metav1.ConditionTrue, Reason: chatv1alpha1.ReasonOwnNamespace,
		Message: "the runtime reads Secrets only in namespace " + render.TargetNamespace(rt)}
	if render.TargetNamespace(rt) == operatorNamespace {
		cond.Status, cond.Reason = metav1.ConditionFalse, chatv1alpha1.ReasonSharesNamespace
		cond.Message = "the runtime can read every Secret of namespace " + operatorNamespace +
			": other runtimes' tenant bundles and the platform's credentials; set spec.targetNamespace"
	}
	meta.SetStatusCondition(&rt.Status.Conditions, cond)
}

// setProxiesTrusted reports whether the runtime knows the proxies in front of it. Without them, behind an
// ingress, every visitor comes from the ingress's address: the runtime keeps visitors' abuse limits apart as well
// as it can and warns when it sees forwarded requests, but only the platform team can name the ingress.
func setProxiesTrusted(rt *chatv1alpha1.ChatRuntime) {
	cond := metav1.Condition{Type: chatv1alpha1.ConditionProxiesTrusted, ObservedGeneration: rt.Generation,
		Status: metav1.ConditionTrue, Reason: chatv1alpha1.ReasonProxiesListed,
		Message: "the runtime takes client addresses from X-Forwarded-For of " + strings.Join(rt.Spec.TrustedProxies, ", ")}
	if len(rt.Spec.TrustedProxies) == 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, chatv1alpha1.ReasonNoTrustedProxies
		cond.Message = "spec.trustedProxies is empty: behind an ingress or load balancer every visitor comes from its " +
			"address and the abuse limits hold them to one shared ceiling; list the ingress's networks there, " +
			"unless visitors reach the runtime directly"
	}
	meta.SetStatusCondition(&rt.Status.Conditions, cond)
}

// targetTaken decides whether another ChatRuntime of runtimes, older than rt (or as old, with a smaller name),
// already has rt's target namespace, where each runtime could read the other's bundles. The operator's own
// namespace is shared as before targetNamespace existed; those runtimes report Isolated=False instead.
func targetTaken(rt *chatv1alpha1.ChatRuntime, runtimes []chatv1alpha1.ChatRuntime, operatorNamespace string) bool {
	target := render.TargetNamespace(rt)
	if target == operatorNamespace {
		return false
	}
	for i := range runtimes {
		o := &runtimes[i]
		if o.Name == rt.Name || render.TargetNamespace(o) != target {
			continue
		}
		if o.CreationTimestamp.Before(&rt.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&rt.CreationTimestamp) && o.Name < rt.Name) {
			return true
		}
	}
	return false
}

// finalize deletes the workload of a runtime in a target namespace of its own, then removes the finalizer. Its
// PersistentVolumeClaim stays, as in the ChatRuntime's own namespace: its conversations are not deleted with it.
func (r *ChatRuntimeReconciler) finalize(ctx context.Context, rt *chatv1alpha1.ChatRuntime) error {
	if !controllerutil.ContainsFinalizer(rt, runtimeFinalizer) {
		return nil
	}
	if err := r.deleteWorkload(ctx, rt, render.TargetNamespace(rt)); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(rt, runtimeFinalizer)
	return r.Update(ctx, rt)
}

// deleteWorkload deletes what the operator rendered for a runtime in namespace, but for its data volume. It reads
// the cache first, so that a reconcile with nothing to delete sends no requests.
func (r *ChatRuntimeReconciler) deleteWorkload(ctx context.Context, rt *chatv1alpha1.ChatRuntime, namespace string) error {
	om := metav1.ObjectMeta{Namespace: namespace, Name: render.ServiceName(rt)}
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: om}, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om},
		&policyv1.PodDisruptionBudget{ObjectMeta: om}, &corev1.Service{ObjectMeta: om},
		&networkingv1.NetworkPolicy{ObjectMeta: om},
		&rbacv1.RoleBinding{ObjectMeta: om}, &rbacv1.Role{ObjectMeta: om}, &corev1.ServiceAccount{ObjectMeta: om},
	} {
		if err := r.deleteRendered(ctx, rt, obj); err != nil {
			return err
		}
	}
	return nil
}

// deleteRendered deletes obj (its namespace and name set) if the cache has it as rendered for the runtime; it
// sends no request when there is nothing to delete.
func (r *ChatRuntimeReconciler) deleteRendered(ctx context.Context, rt *chatv1alpha1.ChatRuntime, obj client.Object) error {
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("reading %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	if obj.GetLabels()[render.InstanceLabel] != rt.Name || obj.GetLabels()[render.ManagedByLabel] != render.FieldOwner {
		return nil
	}
	if err := r.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// apply writes every rendered object with server-side apply, and removes the PodDisruptionBudget when the
// runtime may run a single replica and the HorizontalPodAutoscaler when it has no autoscaling, in the namespace
// they were rendered into.
func (r *ChatRuntimeReconciler) apply(ctx context.Context, rt *chatv1alpha1.ChatRuntime) error {
	rendered := metav1.ObjectMeta{Namespace: render.TargetNamespace(rt), Name: render.ServiceName(rt)}
	objects := []runtime.ApplyConfiguration{
		render.RuntimeServiceAccount(rt),
		render.RuntimeRole(rt),
		render.RuntimeRoleBinding(rt),
		render.RuntimeService(rt),
		render.RuntimeNetworkPolicy(rt),
	}
	if pvc := render.RuntimeDataClaim(rt); pvc != nil {
		objects = append(objects, pvc)
	}
	if pdb := render.RuntimePodDisruptionBudget(rt); pdb != nil {
		objects = append(objects, pdb)
	} else {
		if err := r.deleteRendered(ctx, rt, &policyv1.PodDisruptionBudget{ObjectMeta: rendered}); err != nil {
			return err
		}
	}
	if err := r.handOffReplicas(ctx, rt); err != nil {
		return err
	}
	objects = append(objects, render.RuntimeDeployment(rt, r.Image))
	if hpa := render.RuntimeHorizontalPodAutoscaler(rt); hpa != nil {
		objects = append(objects, hpa)
	} else {
		if err := r.deleteRendered(ctx, rt, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: rendered}); err != nil {
			return err
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
	switch err := r.Get(ctx, types.NamespacedName{Namespace: render.TargetNamespace(rt), Name: render.ServiceName(rt)}, &d); {
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

// enqueueRuntime maps an object rendered for a runtime, by its labels, to its ChatRuntime: owner references do
// not reach across namespaces.
func (r *ChatRuntimeReconciler) enqueueRuntime() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[render.InstanceLabel]
		if name == "" || o.GetLabels()[render.ManagedByLabel] != render.FieldOwner {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: name}}}
	})
}

// sharingTarget maps a ChatRuntime to the others with the same target namespace, so that a runtime refused for
// TargetNamespaceInUse starts once the runtime that had the namespace is deleted.
func (r *ChatRuntimeReconciler) sharingTarget(ctx context.Context, o client.Object) []reconcile.Request {
	changed, ok := o.(*chatv1alpha1.ChatRuntime)
	if !ok || render.TargetNamespace(changed) == r.Namespace {
		return nil
	}
	var all chatv1alpha1.ChatRuntimeList
	if err := r.List(ctx, &all, client.InNamespace(r.Namespace)); err != nil {
		logf.FromContext(ctx).Error(err, "listing ChatRuntimes to enqueue")
		return nil
	}
	var reqs []reconcile.Request
	for i := range all.Items {
		if rt := &all.Items[i]; rt.Name != changed.Name && render.TargetNamespace(rt) == render.TargetNamespace(changed) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rt)})
		}
	}
	return reqs
}

// tenantCountDelay is how long a change of tenant bundles waits before its ChatRuntime's tenants are counted
// (enqueueAfter): while thousands of merchants are published, a runtime's status is patched once every few
// seconds, not once a bundle.
const tenantCountDelay = 5 * time.Second

// SetupWithManager watches ChatRuntimes and what is rendered for them to apply it; and, in a controller of its
// own (countTenants), ChatRuntimes and tenant bundles to count them.
func (r *ChatRuntimeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		// A new ChatRuntime, or one whose target namespace changed, is counted at once.
		For(&chatv1alpha1.ChatRuntime{}, specChanges()).
		Watches(&corev1.Secret{}, enqueueAfter(tenantCountDelay, func(o client.Object) reconcile.Request {
			return reconcile.Request{NamespacedName: types.NamespacedName{
				Namespace: r.Namespace, Name: o.GetLabels()[chatv1alpha1.RuntimeLabel]}}
		}), builder.WithPredicates(secretLabelled(chatv1alpha1.SecretLabelTenant))).
		Named("chatruntime-tenants").
		Complete(reconcile.Func(r.countTenants))
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Its own status patch must not bring a ChatRuntime back to apply its objects again: the replicas are
		// read again when its Deployment changes.
		For(&chatv1alpha1.ChatRuntime{}, notStatusOnly()).
		Watches(&chatv1alpha1.ChatRuntime{}, handler.EnqueueRequestsFromMapFunc(r.sharingTarget)).
		Watches(&appsv1.Deployment{}, r.enqueueRuntime()).
		Watches(&corev1.Service{}, r.enqueueRuntime()).
		Watches(&corev1.ServiceAccount{}, r.enqueueRuntime()).
		Watches(&rbacv1.Role{}, r.enqueueRuntime()).
		Watches(&rbacv1.RoleBinding{}, r.enqueueRuntime()).
		Watches(&policyv1.PodDisruptionBudget{}, r.enqueueRuntime()).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, r.enqueueRuntime()).
		Watches(&networkingv1.NetworkPolicy{}, r.enqueueRuntime()).
		Named("chatruntime").
		Complete(r)
}
