//go:build integration

package controllers

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestRuntimeReadsOnlyItsOwnBundles acts as each runtime's ServiceAccount on the real API server, with the Role
// the operator rendered for it: a runtime with a target namespace of its own reads its own tenant bundles, and
// neither another runtime's bundle nor a Secret of the operator's namespace. A second ChatRuntime naming a
// target namespace already taken is refused, and so are its Merchants; a runtime without one reports that it is
// not isolated; deleting a ChatRuntime deletes its workload in its target namespace.
func TestRuntimeReadsOnlyItsOwnBundles(t *testing.T) {
	nsA, nsB, tenantNS := newNamespace(t), newNamespace(t), newNamespace(t)
	create(t, plan("rtns-plan", 5, false))
	rtA, rtB := runtimeObj("rtns-a"), runtimeObj("rtns-b")
	rtA.Spec.TargetNamespace, rtB.Spec.TargetNamespace = nsA, nsB
	create(t, rtA, rtB)
	mA, mB := merchant(tenantNS, "alpha", "rtns-plan", rtA.Name), merchant(tenantNS, "beta", "rtns-plan", rtB.Name)
	create(t, mA, mB)
	waitReady(t, mA, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, mB, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if want := nsA + "/" + tenant.SecretName(mA.Status.MerchantID); mA.Status.BundleSecret != want {
		t.Errorf("merchant alpha's bundle is %s, want %s", mA.Status.BundleSecret, want)
	}
	platform := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rtns-database-url", Namespace: operatorNS},
		StringData: map[string]string{"url": "postgres://platform"}}
	create(t, platform)

	as := func(rt *chatv1alpha1.ChatRuntime) client.Client {
		imp := rest.CopyConfig(cfg)
		imp.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s",
			render.TargetNamespace(rt), render.ServiceName(rt))}
		c, err := client.New(imp, client.Options{Scheme: Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	runtimeA := as(rtA)
	own := types.NamespacedName{Namespace: nsA, Name: tenant.SecretName(mA.Status.MerchantID)}
	eventually(t, "runtime a reads its own bundle", func() error {
		var s corev1.Secret
		return runtimeA.Get(ctxT(t), own, &s)
	})
	for _, key := range []types.NamespacedName{
		{Namespace: nsB, Name: tenant.SecretName(mB.Status.MerchantID)},
		client.ObjectKeyFromObject(platform),
	} {
		var s corev1.Secret
		if err := runtimeA.Get(ctxT(t), key, &s); !apierrors.IsForbidden(err) {
			t.Errorf("runtime a reads Secret %s: %v", key, err)
		}
	}
	var list corev1.SecretList
	if err := runtimeA.List(ctxT(t), &list, client.InNamespace(operatorNS)); !apierrors.IsForbidden(err) {
		t.Errorf("runtime a lists the operator's Secrets: %v", err)
	}
	eventually(t, "runtime a Isolated", func() error { return isolated(t, rtA, metav1.ConditionTrue, chatv1alpha1.ReasonOwnNamespace) })

	// A second runtime in a's namespace could read a's bundles: it is refused, and so is its Merchant.
	intruder := runtimeObj("rtns-c")
	intruder.Spec.TargetNamespace = nsA
	create(t, intruder)
	waitReady(t, intruder, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNamespaceInUse)
	var d appsv1.Deployment
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: nsA, Name: render.ServiceName(intruder)}, &d); !apierrors.IsNotFound(err) {
		t.Errorf("the refused runtime has a Deployment: %v", err)
	}
	mC := merchant(tenantNS, "gamma", "rtns-plan", intruder.Name)
	create(t, mC)
	waitReady(t, mC, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNamespaceInUse)

	// An older runtime moving into a younger one's namespace takes it over: the younger one's workload goes.
	older, younger := runtimeObj("rtns-older"), runtimeObj("rtns-younger")
	create(t, older)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of one second
	nsY := newNamespace(t)
	younger.Spec.TargetNamespace = nsY
	create(t, younger)
	youngerKey := types.NamespacedName{Namespace: nsY, Name: render.ServiceName(younger)}
	eventually(t, "the younger runtime's Deployment", func() error { return k8s.Get(ctxT(t), youngerKey, &d) })
	update(t, older, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.TargetNamespace = nsY })
	waitReady(t, younger, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNamespaceInUse)
	eventually(t, "the younger runtime's workload deleted", func() error {
		if err := k8s.Get(ctxT(t), youngerKey, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("its Deployment: %w", err)
		}
		return nil
	})

	// Once the runtime that had the namespace is gone, the refused one starts.
	if err := k8s.Delete(ctxT(t), rtA); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the refused runtime's Deployment", func() error {
		return k8s.Get(ctxT(t), types.NamespacedName{Namespace: nsA, Name: render.ServiceName(intruder)}, &d)
	})

	// Without a target namespace the runtime shares the operator's, and says so.
	shared := runtimeObj("rtns-shared")
	create(t, shared)
	eventually(t, "shared runtime not Isolated", func() error {
		return isolated(t, shared, metav1.ConditionFalse, chatv1alpha1.ReasonSharesNamespace)
	})

	// Deleting a runtime deletes its workload in its target namespace, which no owner reference can.
	key := types.NamespacedName{Namespace: nsB, Name: render.ServiceName(rtB)}
	eventually(t, "runtime b's Deployment", func() error { return k8s.Get(ctxT(t), key, &d) })
	if err := k8s.Delete(ctxT(t), rtB); err != nil {
		t.Fatal(err)
	}
	eventually(t, "runtime b's workload deleted", func() error {
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.ServiceAccount{}} {
			if err := k8s.Get(ctxT(t), key, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T: %w", obj, err)
			}
		}
		return nil
	})
}

func isolated(t *testing.T, rt *chatv1alpha1.ChatRuntime, status metav1.ConditionStatus, reason string) error {
	t.Helper()
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(rt), rt); err != nil {
		return err
	}
	c := meta.FindStatusCondition(rt.Status.Conditions, chatv1alpha1.ConditionIsolated)
	if c == nil || c.Status != status || c.Reason != reason {
		return fmt.Errorf("Isolated condition %+v, want %s/%s", c, status, reason)
	}
	return nil
}

// TestRuntimeMovesToTargetNamespace sets targetNamespace on a ChatRuntime that ran in the operator's namespace:
// its workload moves (the old Deployment is deleted), its merchant's bundle is published in the new namespace,
// and the old bundle is retired, keeping the merchant ID and serving nothing.
func TestRuntimeMovesToTargetNamespace(t *testing.T) {
	target, tenantNS := newNamespace(t), newNamespace(t)
	create(t, plan("rtns-move-plan", 5, false))
	rt := runtimeObj("rtns-move")
	create(t, rt)
	m := merchant(tenantNS, "mover", "rtns-move-plan", rt.Name)
	create(t, m)
	waitReady(t, m, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	old := types.NamespacedName{Namespace: operatorNS, Name: render.ServiceName(rt)}
	eventually(t, "the Deployment in the operator's namespace", func() error { return k8s.Get(ctxT(t), old, &appsv1.Deployment{}) })

	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.TargetNamespace = target })
	eventually(t, "the workload moved", func() error {
		if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: target, Name: render.ServiceName(rt)}, &appsv1.Deployment{}); err != nil {
			return err
		}
		if err := k8s.Get(ctxT(t), old, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the old Deployment: %w", err)
		}
		return nil
	})
	want := target + "/" + tenant.SecretName(m.Status.MerchantID)
	eventually(t, "the bundle moved", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		if m.Status.BundleSecret != want {
			return fmt.Errorf("bundle %s, want %s", m.Status.BundleSecret, want)
		}
		var s corev1.Secret
		if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: operatorNS, Name: tenant.SecretName(m.Status.MerchantID)}, &s); err != nil {
			return err
		}
		if _, retired := s.Annotations[render.RetiredAnnotation]; !retired || len(s.Data) != 0 {
			return fmt.Errorf("the old bundle is not retired: %v", s.Annotations)
		}
		return nil
	})

	for _, changed := range []string{"", "elsewhere"} {
		moved := rt.DeepCopy()
		moved.ResourceVersion = "" // unconditional: the operator writes the ChatRuntime meanwhile
		moved.Spec.TargetNamespace = changed
		if err := k8s.Update(ctxT(t), moved); !apierrors.IsInvalid(err) {
			t.Errorf("targetNamespace changed to %q: %v", changed, err)
		}
	}
}
