//go:build integration

package controllers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestSamplesBecomeReady applies config/samples as a new user would and waits for every object to be Ready.
func TestSamplesBecomeReady(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, &u)
			}
		}
	}
	// Namespaces first, as kubectl apply of a directory would need them.
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolInt(b.GetKind() == "Namespace") - boolInt(a.GetKind() == "Namespace")
	})
	kinds := map[string]int{}
	for _, u := range objs {
		if err := k8s.Create(ctxT(t), u); err != nil && (u.GetKind() != "Namespace" || !apierrors.IsAlreadyExists(err)) {
			t.Fatalf("creating sample %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		kinds[u.GetKind()]++
	}
	for _, kind := range []string{"Plan", "ChatRuntime", "Merchant", "APIKey", "Webhook"} {
		if kinds[kind] == 0 {
			t.Errorf("the samples have no %s", kind)
		}
	}
	if kinds["Plan"] < 3 || kinds["APIKey"] < 2 {
		t.Errorf("the samples need plans starter, pro, enterprise and two keys: %v", kinds)
	}

	for _, u := range objs {
		if u.GetKind() == "ChatRuntime" {
			target, _, _ := unstructured.NestedString(u.Object, "spec", "targetNamespace")
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()},
				Spec: chatv1alpha1.ChatRuntimeSpec{TargetNamespace: target}}
			markDeploymentAvailable(t, render.TargetNamespace(rt), render.ServiceName(rt))
		}
	}
	for _, u := range objs {
		var obj client.Object
		switch u.GetKind() {
		case "Plan":
			obj = &chatv1alpha1.Plan{}
		case "ChatRuntime":
			obj = &chatv1alpha1.ChatRuntime{}
		case "Merchant":
			obj = &chatv1alpha1.Merchant{}
		case "APIKey":
			obj = &chatv1alpha1.APIKey{}
		case "Webhook":
			obj = &chatv1alpha1.Webhook{}
		default:
			continue
		}
		obj.SetNamespace(u.GetNamespace())
		obj.SetName(u.GetName())
		waitReady(t, obj, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	}

	var m chatv1alpha1.Merchant
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: "acme", Name: "acme"}, &m); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, m.Status.MerchantID, func(b *tenant.Bundle) error {
		if len(b.APIKeys) != 2 || len(b.Webhooks) != 1 {
			return fmt.Errorf("sample bundle has %d keys and %d webhooks, want 2 and 1", len(b.APIKeys), len(b.Webhooks))
		}
		return nil
	})
	eventually(t, "the default runtime counts its tenant", func() error {
		var rt chatv1alpha1.ChatRuntime
		if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: operatorNS, Name: "default"}, &rt); err != nil {
			return err
		}
		if rt.Status.Tenants < 1 || rt.Status.ReadyReplicas != 1 {
			return fmt.Errorf("tenants %d, ready replicas %d", rt.Status.Tenants, rt.Status.ReadyReplicas)
		}
		return nil
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRuntimeObjects checks what the operator renders for a ChatRuntime on the API server: every object, its
// owner, its field manager, and the restricted security context.
func TestRuntimeObjects(t *testing.T) {
	rt := runtimeObj("objects")
	rt.Labels = map[string]string{"argocd.argoproj.io/instance": "platform"}
	rt.Spec.OIDC = &chatv1alpha1.OIDCSpec{IssuerURL: "https://idp.example", Audience: "parley"}
	create(t, rt)
	name := render.ServiceName(rt)
	key := types.NamespacedName{Namespace: operatorNS, Name: name}

	var d appsv1.Deployment
	eventually(t, "Deployment rendered", func() error { return k8s.Get(ctxT(t), key, &d) })
	waitReady(t, rt, metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady)

	if !metav1.IsControlledBy(&d, rt) {
		t.Error("the Deployment is not controlled by its ChatRuntime")
	}
	if _, copied := d.Labels["argocd.argoproj.io/instance"]; copied {
		t.Error("the ChatRuntime's labels were copied onto the Deployment")
	}
	if !slices.ContainsFunc(d.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == render.FieldOwner && f.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("the Deployment was not server-side applied by %s", render.FieldOwner)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "ghcr.io/parley-dev/parley:test" {
		t.Errorf("image %s, want the operator's own", c.Image)
	}
	if c.Args[0] != "runtime" || !slices.Contains(c.Args, "--oidc-issuer=https://idp.example") {
		t.Errorf("args %v", c.Args)
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context is not restricted: %+v", sc)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context is not restricted: %+v", psc)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.StartupProbe == nil || c.StartupProbe.HTTPGet.Path != "/healthz" {
		t.Error("probes missing")
	}
	if pod.ServiceAccountName != name || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("service account %s, strategy %s", pod.ServiceAccountName, d.Spec.Strategy.Type)
	}

	var role rbacv1.Role
	if err := k8s.Get(ctxT(t), key, &role); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}
	if fmt.Sprint(role.Rules) != fmt.Sprint(want) {
		t.Errorf("runtime Role grants %v, want only %v", role.Rules, want)
	}
	var binding rbacv1.RoleBinding
	if err := k8s.Get(ctxT(t), key, &binding); err != nil {
		t.Fatal(err)
	}
	if binding.RoleRef.Name != name || binding.Subjects[0].Name != name || binding.Subjects[0].Namespace != operatorNS {
		t.Errorf("RoleBinding %+v", binding)
	}
	for _, obj := range []client.Object{&corev1.Service{}, &corev1.ServiceAccount{}} {
		if err := k8s.Get(ctxT(t), key, obj); err != nil {
			t.Errorf("%T: %v", obj, err)
		}
	}
	// The metrics port (every merchant's name and usage) admits the operator's namespace only; a tenant's pod
	// reaches the public port alone. Then the platform team admits its monitoring namespace.
	metricsPeers := func() (string, error) {
		var np networkingv1.NetworkPolicy
		if err := k8s.Get(ctxT(t), key, &np); err != nil {
			return "", err
		}
		if !metav1.IsControlledBy(&np, rt) || len(np.Spec.Ingress) != 2 || len(np.Spec.Ingress[0].From) != 0 ||
			np.Spec.Ingress[1].Ports[0].Port.String() != "metrics" {
			return "", fmt.Errorf("NetworkPolicy %+v", np.Spec)
		}
		var peers []string
		for _, p := range np.Spec.Ingress[1].From {
			peers = append(peers, metav1.FormatLabelSelector(p.NamespaceSelector))
		}
		return strings.Join(peers, "; "), nil
	}
	eventually(t, "NetworkPolicy rendered", func() error {
		if got, err := metricsPeers(); err != nil || got != "kubernetes.io/metadata.name="+operatorNS {
			return fmt.Errorf("metrics admitted from %q: %w", got, err)
		}
		return nil
	})
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) {
		rt.Spec.Metrics.AllowedNamespaces = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "monitoring"}}
	})
	eventually(t, "the monitoring namespace admitted", func() error {
		if got, err := metricsPeers(); err != nil || got != "kubernetes.io/metadata.name="+operatorNS+"; kubernetes.io/metadata.name=monitoring" {
			return fmt.Errorf("metrics admitted from %q: %w", got, err)
		}
		return nil
	})
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: operatorNS, Name: render.DataClaimName(rt)}, &pvc); err != nil {
		t.Errorf("SQLite data claim: %v", err)
	}
	if err := k8s.Get(ctxT(t), key, &policyv1.PodDisruptionBudget{}); !apierrors.IsNotFound(err) {
		t.Errorf("a single replica must have no PodDisruptionBudget: %v", err)
	}

	markDeploymentAvailable(t, operatorNS, name)
	waitReady(t, rt, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	// Without trustedProxies the ChatRuntime says that the abuse limits see an ingress as one client.
	eventually(t, "ProxiesTrusted=False", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(rt.Status.Conditions, chatv1alpha1.ConditionProxiesTrusted); c == nil ||
			c.Status != metav1.ConditionFalse || c.Reason != chatv1alpha1.ReasonNoTrustedProxies {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})

	// A drifted Deployment is put back.
	update(t, &d, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "evil:latest" })
	eventually(t, "drift repaired", func() error {
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/parley-dev/parley:test" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
}

// TestScaledRuntimeOnPostgres checks the PodDisruptionBudget and the PostgreSQL wiring of a multi-replica runtime,
// in the operator's namespace and in a target namespace of its own.
func TestScaledRuntimeOnPostgres(t *testing.T) {
	t.Run("own namespace", func(t *testing.T) { testScaledRuntimeOnPostgres(t, "scaled", "") })
	t.Run("target namespace", func(t *testing.T) { testScaledRuntimeOnPostgres(t, "scaled-target", newNamespace(t)) })
}

func testScaledRuntimeOnPostgres(t *testing.T, name, target string) {
	rt := runtimeObj(name)
	rt.Spec.TargetNamespace = target
	rt.Spec.Replicas = new(int32(3))
	rt.Spec.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
		Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
	create(t, rt)
	key := types.NamespacedName{Namespace: render.TargetNamespace(rt), Name: render.ServiceName(rt)}
	var pdb policyv1.PodDisruptionBudget
	eventually(t, "PodDisruptionBudget", func() error { return k8s.Get(ctxT(t), key, &pdb) })
	var d appsv1.Deployment
	eventually(t, "Deployment", func() error { return k8s.Get(ctxT(t), key, &d) })
	env := d.Spec.Template.Spec.Containers[0].Env
	i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == "PARLEY_DATABASE_URL" })
	if i < 0 || env[i].ValueFrom.SecretKeyRef.Name != "pg" || env[i].ValueFrom.SecretKeyRef.Key != "url" || env[i].Value != "" {
		t.Errorf("database URL not wired from its Secret: %+v", env)
	}
	if *d.Spec.Replicas != 3 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("replicas %d strategy %s", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: key.Namespace, Name: render.DataClaimName(rt)}, &pvc); !apierrors.IsNotFound(err) {
		t.Errorf("a PostgreSQL runtime must have no SQLite claim: %v", err)
	}

	// Scaling down to one replica removes the budget, which would otherwise block node drains.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Replicas = new(int32(1)) })
	eventually(t, "PodDisruptionBudget removed", func() error {
		return absent(k8s.Get(ctxT(t), key, &pdb))
	})
}

// absent turns the result of reading an object expected gone into an error while it is still there.
func absent(getErr error) error {
	switch {
	case getErr == nil:
		return errors.New("still there")
	case apierrors.IsNotFound(getErr):
		return nil
	}
	return getErr
}

func TestRuntimeOutsideOperatorNamespace(t *testing.T) {
	rt := runtimeObj("elsewhere")
	rt.Namespace = newNamespace(t)
	create(t, rt)
	waitReady(t, rt, metav1.ConditionFalse, chatv1alpha1.ReasonWrongNamespace)
}

// TestTenantsCountedWithoutApplying adds a tenant to a runtime at rest: its count changes, and its objects, which
// do not depend on it, are not applied again (the ChatRuntime controller's reconciles, which apply them all, do
// not run).
func TestTenantsCountedWithoutApplying(t *testing.T) {
	ns := newNamespace(t)
	p, rt := plan("plan-"+ns, 10, false), runtimeObj("rt-"+ns)
	create(t, p, rt)
	waitReady(t, rt, metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady)
	// Its objects' creation brings it back a few times; then it rests.
	applied := reconciles(t, "chatruntime")
	for settled := 0; settled < 2; {
		time.Sleep(time.Second)
		n := reconciles(t, "chatruntime")
		if n == applied {
			settled++
		} else {
			settled, applied = 0, n
		}
	}

	create(t, merchant(ns, "shop", p.Name, rt.Name))
	eventually(t, "the tenant counted", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
		if rt.Status.Tenants != 1 {
			return fmt.Errorf("tenants %d", rt.Status.Tenants)
		}
		return nil
	})
	if n := reconciles(t, "chatruntime"); n != applied {
		t.Errorf("adding a tenant reconciled the runtime's objects %v times", n-applied)
	}
}

// reconciles is how many reconciles the operator's controller of the given name has run, in all.
func reconciles(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// A SQLite runtime's rollout stops its pod before the new one starts: the runtime says so while it lasts, and
// keeps how long nothing served in status.lastOutage.
func TestSQLiteRolloutOutage(t *testing.T) {
	rt := runtimeObj("rolled")
	create(t, rt)
	key := types.NamespacedName{Namespace: render.TargetNamespace(rt), Name: render.ServiceName(rt)}
	markDeploymentAvailable(t, key.Namespace, key.Name)
	waitReady(t, rt, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if rt.Status.LastOutage != nil {
		t.Errorf("a runtime that started has an outage: %+v", rt.Status.LastOutage)
	}

	// A new image: the Deployment controller (Recreate) scales the old pod down before the new one starts.
	update(t, rt, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Image = "ghcr.io/parley-dev/parley:next" })
	eventually(t, "the old pod stopped", func() error {
		var d appsv1.Deployment
		if err := k8s.Get(ctxT(t), key, &d); err != nil {
			return err
		}
		if d.Spec.Template.Spec.Containers[0].Image != rt.Spec.Image {
			return fmt.Errorf("the Deployment runs %s", d.Spec.Template.Spec.Containers[0].Image)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1}
		return k8s.Status().Update(ctxT(t), &d)
	})
	waitReady(t, rt, metav1.ConditionFalse, chatv1alpha1.ReasonDeploymentNotReady)
	eventually(t, "the outage starts", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
		if o := rt.Status.LastOutage; o == nil || o.Start.IsZero() || o.End != nil {
			return fmt.Errorf("lastOutage %+v", o)
		}
		return nil
	})
	if c := meta.FindStatusCondition(rt.Status.Conditions, chatv1alpha1.ConditionReady); !strings.Contains(c.Message, "SQLite") {
		t.Errorf("Ready does not say why nothing serves: %q", c.Message)
	}

	time.Sleep(1100 * time.Millisecond) // status times are whole seconds
	markDeploymentAvailable(t, key.Namespace, key.Name)
	waitReady(t, rt, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	eventually(t, "the outage ends", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
		o := rt.Status.LastOutage
		if o == nil || o.End == nil || o.Duration == nil || o.Duration.Duration < time.Second ||
			o.Duration.Duration != o.End.Sub(o.Start.Time) {
			return fmt.Errorf("lastOutage %+v", o)
		}
		return nil
	})
}
