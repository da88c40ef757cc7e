//go:build integration

package kstatus

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/render"
)

// statusOf reads obj from the API server unstructured, as Flux's health checks read it, and computes its kstatus.
func statusOf(t *testing.T, obj client.Object) (*status.Result, *unstructured.Unstructured, error) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, controllers.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, nil, err
	}
	res, err := status.Compute(u)
	return res, u, err
}

// expectStatus waits until obj's Ready condition has reason and kstatus computes want from the object. A status
// other than Current must carry the Ready condition's reason and message, not one of kstatus's own (such as
// LatestGenerationNotObserved): the object's observedGeneration is its generation.
func expectStatus(t *testing.T, obj client.Object, want status.Status, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s %s/%s", obj, obj.GetName(), want, reason), func() error {
		res, u, err := statusOf(t, obj)
		if err != nil {
			return err
		}
		ready := readyCondition(u)
		if ready == nil || ready["reason"] != reason {
			return fmt.Errorf("Ready is %v", ready)
		}
		if res.Status != want {
			return fmt.Errorf("kstatus %s %q, want %s", res.Status, res.Message, want)
		}
		if want == status.CurrentStatus {
			return nil
		}
		if len(res.Conditions) != 1 || res.Conditions[0].Reason != reason || res.Message != ready["message"] {
			return fmt.Errorf("kstatus %s %q %+v, want the Ready condition's reason %s and message %q",
				res.Status, res.Message, res.Conditions, reason, ready["message"])
		}
		return nil
	})
}

func readyCondition(u *unstructured.Unstructured) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if c, _ := c.(map[string]any); c["type"] == chatv1alpha1.ConditionReady {
			return c
		}
	}
	return nil
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// update re-reads obj, applies mutate and writes it, retrying when the operator wrote the object meanwhile.
func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return k8s.Update(t.Context(), obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}

// markDeploymentAvailable does what the Deployment controller and kubelet would: report every replica ready.
func markDeploymentAvailable(t *testing.T, namespace, name string) {
	t.Helper()
	eventually(t, "Deployment "+name+" available", func() error {
		var d appsv1.Deployment
		if err := k8s.Get(t.Context(), types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
			return err
		}
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
			ReadyReplicas: n, AvailableReplicas: n}
		return k8s.Status().Update(t.Context(), &d)
	})
}

// fixtures

func plan(name string, webhooks bool) *chatv1alpha1.Plan {
	return &chatv1alpha1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 10, MonthlyConversations: 100,
			Features: chatv1alpha1.PlanFeatures{Webhooks: webhooks}},
	}
}

func runtimeIn(namespace, name string) *chatv1alpha1.ChatRuntime {
	return &chatv1alpha1.ChatRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com"},
	}
}

func merchant(ns, name, planName, runtimeName string) *chatv1alpha1.Merchant {
	return &chatv1alpha1.Merchant{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.MerchantSpec{
			DisplayName:    "Shop " + name,
			PlanRef:        chatv1alpha1.LocalObjectReference{Name: planName},
			RuntimeRef:     chatv1alpha1.LocalObjectReference{Name: runtimeName},
			AllowedOrigins: []string{"https://shop.example"},
		},
	}
}

func apiKey(ns, name, merchantName string) *chatv1alpha1.APIKey {
	return &chatv1alpha1.APIKey{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchantName},
			Type: chatv1alpha1.APIKeyPublishable},
	}
}

func webhook(ns, name, merchantName, url string) *chatv1alpha1.Webhook {
	return &chatv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.WebhookSpec{
			MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchantName},
			URL:         url,
			Events:      []chatv1alpha1.WebhookEvent{chatv1alpha1.EventLeadCreated},
		},
	}
}

// tenant is a namespace with a Ready merchant "shop" on a plan and runtime of its own.
type tenant struct {
	ns      string
	plan    *chatv1alpha1.Plan
	runtime *chatv1alpha1.ChatRuntime
}

func newTenant(t *testing.T, webhooks bool) tenant {
	t.Helper()
	ns := newNamespace(t)
	tn := tenant{ns: ns, plan: plan("plan-"+ns, webhooks), runtime: runtimeIn(operatorNS, "rt-"+ns)}
	m := merchant(ns, "shop", tn.plan.Name, tn.runtime.Name)
	create(t, tn.plan, tn.runtime, m)
	expectStatus(t, m, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
	return tn
}

func TestPlanStatus(t *testing.T) {
	ns := newNamespace(t)
	ok := plan("ok-"+ns, false)
	invalid := plan("invalid-"+ns, false)
	invalid.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
	create(t, ok, invalid)
	expectStatus(t, ok, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
	expectStatus(t, invalid, status.FailedStatus, chatv1alpha1.ReasonInvalidAllowedNamespaces)

	// Someone fixes the selector: the Plan is Current again, its Stalled condition gone.
	update(t, invalid, func(p *chatv1alpha1.Plan) { p.Spec.AllowedNamespaces = nil })
	expectStatus(t, invalid, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
}

func TestChatRuntimeStatus(t *testing.T) {
	ns := newNamespace(t)
	rt := runtimeIn(operatorNS, "rt-"+ns)
	create(t, rt)
	expectStatus(t, rt, status.InProgressStatus, chatv1alpha1.ReasonDeploymentNotReady)
	markDeploymentAvailable(t, render.TargetNamespace(rt), render.ServiceName(rt))
	expectStatus(t, rt, status.CurrentStatus, chatv1alpha1.ReasonReconciled)

	misplaced := runtimeIn(ns, "misplaced")
	create(t, misplaced)
	expectStatus(t, misplaced, status.FailedStatus, chatv1alpha1.ReasonWrongNamespace)
}

// TestMerchantStatus: the states of the issue, a plan outside the merchant's grant above all, which kstatus
// reported InProgress until Flux's timeout.
func TestMerchantStatus(t *testing.T) {
	tn := newTenant(t, false)

	notYet := merchant(tn.ns, "early", "plan-created-later-"+tn.ns, tn.runtime.Name)
	create(t, notYet)
	expectStatus(t, notYet, status.InProgressStatus, chatv1alpha1.ReasonPlanNotFound)
	create(t, plan("plan-created-later-"+tn.ns, false))
	expectStatus(t, notYet, status.CurrentStatus, chatv1alpha1.ReasonReconciled)

	granted := plan("granted-"+tn.ns, false)
	granted.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold-" + tn.ns}}
	outside := merchant(tn.ns, "outside", granted.Name, tn.runtime.Name)
	create(t, granted, outside)
	expectStatus(t, outside, status.FailedStatus, chatv1alpha1.ReasonPlanNotAllowed)
	update(t, outside, func(m *chatv1alpha1.Merchant) { m.Spec.PlanRef.Name = tn.plan.Name })
	expectStatus(t, outside, status.CurrentStatus, chatv1alpha1.ReasonReconciled)

	suspended := merchant(tn.ns, "paused", tn.plan.Name, tn.runtime.Name)
	suspended.Spec.Suspended = true
	create(t, suspended)
	expectStatus(t, suspended, status.CurrentStatus, chatv1alpha1.ReasonSuspended)
}

func TestAPIKeyStatus(t *testing.T) {
	tn := newTenant(t, false)
	key := apiKey(tn.ns, "web", "shop")
	create(t, key)
	expectStatus(t, key, status.CurrentStatus, chatv1alpha1.ReasonReconciled)

	orphan := apiKey(tn.ns, "orphan", "ghost")
	create(t, orphan)
	expectStatus(t, orphan, status.InProgressStatus, chatv1alpha1.ReasonMerchantNotFound)

	expired := apiKey(tn.ns, "expired", "shop")
	expired.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-time.Hour)}
	create(t, expired)
	expectStatus(t, expired, status.FailedStatus, chatv1alpha1.ReasonExpired)
}

func TestWebhookStatus(t *testing.T) {
	withWebhooks := newTenant(t, true)
	hook := webhook(withWebhooks.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, hook)
	expectStatus(t, hook, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
	update(t, hook, func(w *chatv1alpha1.Webhook) { w.Spec.Disabled = true })
	expectStatus(t, hook, status.CurrentStatus, chatv1alpha1.ReasonDisabled)

	internal := webhook(withWebhooks.ns, "internal", "shop", "http://billing.platform.svc/admin")
	create(t, internal)
	expectStatus(t, internal, status.FailedStatus, chatv1alpha1.ReasonTargetNotAllowed)

	without := newTenant(t, false)
	notInPlan := webhook(without.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, notInPlan)
	expectStatus(t, notInPlan, status.FailedStatus, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks)
}

// TestBehindTheOperator: while the operator is stopped, a Merchant changed after it stalled is InProgress, not
// Failed on the Stalled condition of its previous generation; once the operator is back, it is what the new spec
// makes it.
func TestBehindTheOperator(t *testing.T) {
	tn := newTenant(t, false)
	granted := plan("granted-"+tn.ns, false)
	granted.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold-" + tn.ns}}
	outside := merchant(tn.ns, "outside", granted.Name, tn.runtime.Name)
	create(t, granted, outside)
	expectStatus(t, outside, status.FailedStatus, chatv1alpha1.ReasonPlanNotAllowed)

	if err := stopOperator(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			if err := startOperator(); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restart()

	update(t, outside, func(m *chatv1alpha1.Merchant) { m.Spec.PlanRef.Name = tn.plan.Name })
	res, _, err := statusOf(t, outside)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != status.InProgressStatus || len(res.Conditions) != 1 ||
		res.Conditions[0].Reason != "LatestGenerationNotObserved" {
		t.Errorf("a Merchant changed behind the operator: kstatus %s %q %+v, want InProgress, "+
			"LatestGenerationNotObserved", res.Status, res.Message, res.Conditions)
	}

	restart()
	expectStatus(t, outside, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
}

// TestNotReconciledYet: an object the operator has not reconciled yet (it is stopped here; a new Merchant also
// waits a second before its first reconcile) is InProgress, not Current, so that Flux's health check does not
// pass on it before the operator has said whether it can ever become Ready.
func TestNotReconciledYet(t *testing.T) {
	tn := newTenant(t, true)
	if err := stopOperator(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			if err := startOperator(); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restart()

	granted := plan("granted-"+tn.ns, false)
	granted.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold-" + tn.ns}}
	outside := merchant(tn.ns, "outside", granted.Name, tn.runtime.Name)
	objs := []client.Object{granted, runtimeIn(operatorNS, "new-"+tn.ns), outside,
		apiKey(tn.ns, "new", "shop"), webhook(tn.ns, "new", "shop", "https://crm.example/hooks")}
	create(t, objs...)
	for _, obj := range objs {
		res, _, err := statusOf(t, obj)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != status.InProgressStatus {
			t.Errorf("%T %s not reconciled yet: kstatus %s %q, want InProgress", obj, obj.GetName(), res.Status, res.Message)
		}
	}

	restart()
	expectStatus(t, outside, status.FailedStatus, chatv1alpha1.ReasonPlanNotAllowed)
}
