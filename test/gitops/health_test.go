//go:build integration

package gitops

import (
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/render"
)

// healthOf reads obj from the API server as Argo CD's cache holds it, unstructured, and runs the health check the
// chart renders for its kind.
func healthOf(t *testing.T, obj client.Object) (health, *unstructured.Unstructured, error) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, controllers.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	script, ok := scripts[healthKey(gvk.Kind)]
	if !ok {
		t.Fatalf("%s: %v", gvk.Kind, errNoScript)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(obj), u); err != nil {
		return health{}, nil, err
	}
	h, err := runHealth(script, u.Object)
	return h, u, err
}

// expectHealth waits until obj's Ready condition has reason and its health check reports status, with the
// condition's reason and message as its message.
func expectHealth(t *testing.T, obj client.Object, status, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s %s/%s", obj, obj.GetName(), status, reason), func() error {
		h, u, err := healthOf(t, obj)
		if err != nil {
			return err
		}
		var ready map[string]any
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conditions {
			if c, _ := c.(map[string]any); c["type"] == chatv1alpha1.ConditionReady {
				ready = c
			}
		}
		if ready == nil || ready["reason"] != reason {
			return fmt.Errorf("Ready is %v", ready)
		}
		if want := fmt.Sprintf("%s: %s", reason, ready["message"]); h.status != status || h.message != want {
			return fmt.Errorf("health %s %q, want %s %q", h.status, h.message, status, want)
		}
		return nil
	})
}

func newNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-", Labels: labels}}
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
	ns := newNamespace(t, nil)
	tn := tenant{ns: ns, plan: plan("plan-"+ns, webhooks), runtime: runtimeIn(operatorNS, "rt-"+ns)}
	m := merchant(ns, "shop", tn.plan.Name, tn.runtime.Name)
	create(t, tn.plan, tn.runtime, m)
	expectHealth(t, m, healthy, chatv1alpha1.ReasonReconciled)
	return tn
}

func TestPlanHealth(t *testing.T) {
	ns := newNamespace(t, nil)
	ok := plan("ok-"+ns, false)
	invalid := plan("invalid-"+ns, false)
	invalid.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
	create(t, ok, invalid)
	expectHealth(t, ok, healthy, chatv1alpha1.ReasonReconciled)
	expectHealth(t, invalid, degraded, chatv1alpha1.ReasonInvalidAllowedNamespaces)
}

func TestChatRuntimeHealth(t *testing.T) {
	ns := newNamespace(t, nil)
	rt := runtimeIn(operatorNS, "rt-"+ns)
	create(t, rt)
	expectHealth(t, rt, progressing, chatv1alpha1.ReasonDeploymentNotReady)
	markDeploymentAvailable(t, render.TargetNamespace(rt), render.ServiceName(rt))
	expectHealth(t, rt, healthy, chatv1alpha1.ReasonReconciled)

	misplaced := runtimeIn(ns, "misplaced")
	create(t, misplaced)
	expectHealth(t, misplaced, degraded, chatv1alpha1.ReasonWrongNamespace)
}

// TestMerchantHealth: the states of the issue, a plan outside the merchant's grant above all, which Argo CD
// showed as Healthy without a health check.
func TestMerchantHealth(t *testing.T) {
	tn := newTenant(t, false)

	notYet := merchant(tn.ns, "early", "plan-created-later-"+tn.ns, tn.runtime.Name)
	create(t, notYet)
	expectHealth(t, notYet, progressing, chatv1alpha1.ReasonPlanNotFound)
	create(t, plan("plan-created-later-"+tn.ns, false))
	expectHealth(t, notYet, healthy, chatv1alpha1.ReasonReconciled)

	granted := plan("granted-"+tn.ns, false)
	granted.Spec.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold-" + tn.ns}}
	outside := merchant(tn.ns, "outside", granted.Name, tn.runtime.Name)
	create(t, granted, outside)
	expectHealth(t, outside, degraded, chatv1alpha1.ReasonPlanNotAllowed)

	suspended := merchant(tn.ns, "paused", tn.plan.Name, tn.runtime.Name)
	suspended.Spec.Suspended = true
	create(t, suspended)
	expectHealth(t, suspended, healthy, chatv1alpha1.ReasonSuspended)
}

func TestAPIKeyHealth(t *testing.T) {
	owner := newTenant(t, false)
	key := apiKey(owner.ns, "web", "shop")
	create(t, key)
	expectHealth(t, key, healthy, chatv1alpha1.ReasonReconciled)

	orphan := apiKey(owner.ns, "orphan", "ghost")
	create(t, orphan)
	expectHealth(t, orphan, progressing, chatv1alpha1.ReasonMerchantNotFound)

	expired := apiKey(owner.ns, "expired", "shop")
	expired.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-time.Hour)}
	create(t, expired)
	expectHealth(t, expired, degraded, chatv1alpha1.ReasonExpired)

	// Another tenant brings the owner's key as its own: refused, and Degraded.
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(key), key); err != nil {
		t.Fatal(err)
	}
	var generated corev1.Secret
	if err := k8s.Get(t.Context(), types.NamespacedName{Namespace: owner.ns, Name: key.Status.SecretRef.Name}, &generated); err != nil {
		t.Fatal(err)
	}
	other := newTenant(t, false)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: other.ns,
			Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
		Data: map[string][]byte{"key": generated.Data[key.Status.SecretRef.Key]},
	})
	copied := apiKey(other.ns, "copied", "shop")
	copied.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "copied", Key: "key"}
	create(t, copied)
	expectHealth(t, copied, degraded, chatv1alpha1.ReasonKeyInUse)
}

func TestWebhookHealth(t *testing.T) {
	withWebhooks := newTenant(t, true)
	hook := webhook(withWebhooks.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, hook)
	expectHealth(t, hook, healthy, chatv1alpha1.ReasonReconciled)
	update(t, hook, func(w *chatv1alpha1.Webhook) { w.Spec.Disabled = true })
	expectHealth(t, hook, healthy, chatv1alpha1.ReasonDisabled)

	internal := webhook(withWebhooks.ns, "internal", "shop", "http://billing.platform.svc/admin")
	create(t, internal)
	expectHealth(t, internal, degraded, chatv1alpha1.ReasonTargetNotAllowed)

	without := newTenant(t, false)
	notInPlan := webhook(without.ns, "crm", "shop", "https://crm.example/hooks")
	create(t, notInPlan)
	expectHealth(t, notInPlan, degraded, chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks)
}

// TestBehindTheOperator: while the operator is stopped, a new object has only the CRD's default status
// (observedGeneration -1) and a changed one a status of its previous generation: both are Progressing, not the
// health of what the status last said.
func TestBehindTheOperator(t *testing.T) {
	ns := newNamespace(t, nil)
	changed := plan("changed-"+ns, false)
	create(t, changed)
	expectHealth(t, changed, healthy, chatv1alpha1.ReasonReconciled)

	restart := pauseOperator(t)

	update(t, changed, func(p *chatv1alpha1.Plan) { p.Spec.RequestsPerSecond = 20 })
	fresh := merchant(ns, "shop", changed.Name, "default")
	create(t, fresh)
	for _, tc := range []struct {
		obj     client.Object
		message string
	}{
		{changed, fmt.Sprintf("Waiting for the Parley operator to reconcile generation %d", changed.Generation)},
		{fresh, fmt.Sprintf("Waiting for the Parley operator to reconcile generation %d", fresh.Generation)},
	} {
		h, _, err := healthOf(t, tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		if h != (health{status: progressing, message: tc.message}) {
			t.Errorf("%T %s: %+v, want Progressing %q", tc.obj, tc.obj.GetName(), h, tc.message)
		}
	}

	restart()
	expectHealth(t, changed, healthy, chatv1alpha1.ReasonReconciled)
	expectHealth(t, fresh, progressing, chatv1alpha1.ReasonRuntimeNotFound)
}

// TestEveryKindHasTheCheck: the chart renders the one script for all six kinds.
func TestEveryKindHasTheCheck(t *testing.T) {
	var first string
	for _, kind := range []string{"Plan", "ChatRuntime", "Merchant", "APIKey", "Webhook", "KnowledgeSource"} {
		script, ok := scripts[healthKey(kind)]
		switch {
		case !ok:
			t.Errorf("%s: %v", kind, errNoScript)
		case first == "":
			first = script
		case script != first:
			t.Errorf("%s: the script differs from the other kinds'", kind)
		}
	}
	if len(scripts) != 6 {
		t.Errorf("the ConfigMap has %d keys, want 6", len(scripts))
	}
	if first == "" {
		t.Fatal(errors.New("no script rendered"))
	}
}
