//go:build integration

package gitops

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// newFluxTenant is newTenant, with its Merchant read as Current by kstatus too.
func newFluxTenant(t *testing.T, webhooks bool) tenant {
	t.Helper()
	tn := newTenant(t, webhooks)
	m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: tn.ns}}
	expectStatus(t, m, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
	return tn
}

func TestPlanStatus(t *testing.T) {
	ns := newNamespace(t, nil)
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
	ns := newNamespace(t, nil)
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
	tn := newFluxTenant(t, false)

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
	tn := newFluxTenant(t, false)
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
	withWebhooks := newFluxTenant(t, true)
	hook := webhook(withWebhooks.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, hook)
	expectStatus(t, hook, status.CurrentStatus, chatv1alpha1.ReasonReconciled)
	update(t, hook, func(w *chatv1alpha1.Webhook) { w.Spec.Disabled = true })
	expectStatus(t, hook, status.CurrentStatus, chatv1alpha1.ReasonDisabled)

	internal := webhook(withWebhooks.ns, "internal", "shop", "http://billing.platform.svc/admin")
	create(t, internal)
	expectStatus(t, internal, status.FailedStatus, chatv1alpha1.ReasonTargetNotAllowed)

	without := newFluxTenant(t, false)
	notInPlan := webhook(without.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, notInPlan)
	expectStatus(t, notInPlan, status.FailedStatus, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks)
}

// TestBehindTheOperator: while the operator is stopped, a Merchant changed after it stalled is InProgress, not
// Failed on the Stalled condition of its previous generation; once the operator is back, it is what the new spec
// makes it.
func TestKstatusBehindTheOperator(t *testing.T) {
	tn := newFluxTenant(t, false)
	granted := plan("granted-"+tn.ns, false)
	granted.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold-" + tn.ns}}
	outside := merchant(tn.ns, "outside", granted.Name, tn.runtime.Name)
	create(t, granted, outside)
	expectStatus(t, outside, status.FailedStatus, chatv1alpha1.ReasonPlanNotAllowed)

	restart := pauseOperator(t)

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
	tn := newFluxTenant(t, true)
	restart := pauseOperator(t)

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
