//go:build integration

package helm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// TestNamespacedInstall installs the chart with watchNamespaces and runs the operator with the arguments and the
// identity the chart gives it (its ServiceAccount, with the chart's RBAC alone): it serves the Merchant of a watched
// namespace, leaves one of another namespace untouched, and is refused nothing it asks the API server.
func TestNamespacedInstall(t *testing.T) {
	c, kubeconfig, env := startAPIServer(t)
	ctx := t.Context()
	for _, ns := range []string{"shop-a", "shop-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	k := []string{"--kubeconfig", kubeconfig, "-n", "parley-system"}
	helm(t, append([]string{"install", "parley", chart, "--create-namespace", "--set", "watchNamespaces={shop-a}"}, k...)...)
	helm(t, append([]string{"upgrade", "parley", chart, "--set", "watchNamespaces={shop-a},defaults.enabled=true"}, k...)...)
	manifest := helm(t, append([]string{"get", "manifest", "parley"}, k...)...)
	const watch = "--watch-namespaces=shop-a,parley-system,parley-runtime"
	if !strings.Contains(manifest, watch) {
		t.Fatalf("the release does not run the operator with %s", watch)
	}

	operator := kubeconfigOf(t, env, envtest.User{Name: "system:serviceaccount:parley-system:parley-operator",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:parley-system", "system:authenticated"}})
	stop := runOperator(t, operator, buildOperator(t, repo), "--runtime-image=ghcr.io/parley-dev/parley:test", watch)

	merchants := map[string]*chatv1alpha1.Merchant{}
	for _, ns := range []string{"shop-a", "shop-b"} {
		m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
			Spec: chatv1alpha1.MerchantSpec{DisplayName: "Shop", PlanRef: chatv1alpha1.LocalObjectReference{Name: "starter"}}}
		if err := c.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		merchants[ns] = m
	}
	waitFor(t, func() error {
		m := merchants["shop-a"]
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(m.Status.Conditions, chatv1alpha1.ConditionReady) {
			return fmt.Errorf("the watched namespace's Merchant is not Ready: %+v", m.Status.Conditions)
		}
		return nil
	})
	var bundles corev1.SecretList
	if err := c.List(ctx, &bundles, client.InNamespace("parley-runtime"),
		client.MatchingLabels{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant}); err != nil {
		t.Fatal(err)
	}
	if len(bundles.Items) != 1 || !strings.Contains(bundles.Items[0].Name, "shop-a") {
		t.Errorf("tenant bundles %v, want shop-a's alone", names(bundles.Items))
	}

	// The other namespace's Merchant was created at the same time: a second is plenty for it to have been served.
	time.Sleep(time.Second)
	m := merchants["shop-b"]
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	if len(m.Status.Conditions) > 0 || len(m.Finalizers) > 0 {
		t.Errorf("a Merchant outside the watched namespaces was reconciled: finalizers %v, status %+v", m.Finalizers, m.Status)
	}
	if log := stop(); strings.Contains(log, "forbidden") {
		t.Errorf("the chart's RBAC refused the namespaced operator a request:\n%s", log)
	}
}

func names(secrets []corev1.Secret) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s.Name)
	}
	return out
}
