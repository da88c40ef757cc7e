//go:build integration

package controllers

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// TestOperatorRBAC installs the operator's generated RBAC (config/rbac/role.yaml) for a ServiceAccount and acts as
// that ServiceAccount on the real API server: it writes what it renders for runtimes only in its own namespace
// and in runtime namespaces granted with the ClusterRole parley-runtime-namespace, and never deletes a tenant's
// Secrets.
func TestOperatorRBAC(t *testing.T) {
	const sa = "rbac-test-operator"
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: operatorNS}}
	as := operatorAs(t, sa)
	tenantNS := newNamespace(t)
	deployment := func(ns string) *appsv1.Deployment {
		labels := map[string]string{"app": "x"}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	}
	roleBinding := func(ns string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "rbac-probe"},
			Subjects: subject}
	}
	dry := client.DryRunAll
	for _, ns := range []string{operatorNS, tenantNS} {
		create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}})
	}

	for _, obj := range []client.Object{deployment(operatorNS), roleBinding(operatorNS)} {
		if err := as.Create(ctxT(t), obj, dry); err != nil {
			t.Errorf("the operator cannot create %T in its own namespace: %v", obj, err)
		}
	}
	for _, obj := range []client.Object{deployment(tenantNS), roleBinding(tenantNS)} {
		if err := as.Create(ctxT(t), obj, dry); !apierrors.IsForbidden(err) {
			t.Errorf("the operator may create %T in a tenant's namespace: %v", obj, err)
		}
	}
	// A runtime's target namespace, granted as the platform team does: the ClusterRole parley-runtime-namespace.
	runtimeNS := newNamespace(t)
	docs := rbacDocs(t, "runtime_namespace_role.yaml")
	if len(docs) != 1 || docs[0].Kind != "ClusterRole" || docs[0].Metadata.Name != "parley-runtime-namespace" {
		t.Fatalf("config/rbac/runtime_namespace_role.yaml holds %+v, want the ClusterRole parley-runtime-namespace", docs)
	}
	grant := sa + "-" + docs[0].Metadata.Name
	create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: grant}, Rules: docs[0].Rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: grant, Namespace: runtimeNS}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: grant}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: runtimeNS},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}})
	for _, obj := range []client.Object{deployment(runtimeNS), roleBinding(runtimeNS),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bundle", Namespace: runtimeNS}}} {
		eventually(t, fmt.Sprintf("creating %T in a granted runtime namespace", obj), func() error {
			return as.Create(ctxT(t), obj.DeepCopyObject().(client.Object), dry)
		})
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-own", Namespace: tenantNS}}
	create(t, secret)
	if err := as.Delete(ctxT(t), secret, dry); !apierrors.IsForbidden(err) {
		t.Errorf("the operator may delete a tenant's Secret: %v", err)
	}
}

// operatorAs installs the operator's generated RBAC (config/rbac/role.yaml) for the ServiceAccount sa of the
// operator's namespace and returns a client that acts as it.
func operatorAs(t *testing.T, sa string) client.Client {
	t.Helper()
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: operatorNS}}
	for _, doc := range rbacDocs(t, "role.yaml") {
		name := sa + "-" + doc.Metadata.Name
		switch doc.Kind {
		case "ClusterRole":
			create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: doc.Rules},
				&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})
		case "Role":
			if doc.Metadata.Namespace != operatorNS {
				t.Fatalf("Role %s is for namespace %q, not the operator's", doc.Metadata.Name, doc.Metadata.Namespace)
			}
			create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNS}, Rules: doc.Rules},
				&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNS}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}})
		}
	}
	imp := rest.CopyConfig(cfg)
	imp.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + operatorNS + ":" + sa}
	as, err := client.New(imp, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// rbacDoc is one Role or ClusterRole of config/rbac.
type rbacDoc struct {
	Kind     string              `json:"kind"`
	Metadata metav1.ObjectMeta   `json:"metadata"`
	Rules    []rbacv1.PolicyRule `json:"rules"`
}

// rbacDocs reads the documents of a file of config/rbac.
func rbacDocs(t *testing.T, file string) []rbacDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []rbacDoc
	for {
		var doc rbacDoc
		if err := dec.Decode(&doc); err != nil {
			return docs
		}
		docs = append(docs, doc)
	}
}

// TestOperatorWritesSecretsOnlyWhereGranted: the operator's ServiceAccount cannot create Secrets in a namespace
// the platform team has not granted it (where generating an APIKey's Secret is SecretsNotGranted), and can in a
// namespace where the ClusterRole parley-tenant-secrets is bound to it, and in its own.
func TestOperatorWritesSecretsOnlyWhereGranted(t *testing.T) {
	const sa = "rbac-test-secrets"
	as := operatorAs(t, sa)
	granted, bare := newNamespace(t), newNamespace(t)
	docs := rbacDocs(t, "tenant_secrets_role.yaml")
	if len(docs) != 1 || docs[0].Kind != "ClusterRole" || docs[0].Metadata.Name != "parley-tenant-secrets" {
		t.Fatalf("config/rbac/tenant_secrets_role.yaml holds %+v, want the ClusterRole parley-tenant-secrets", docs)
	}
	grant := sa + "-" + docs[0].Metadata.Name
	create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: grant}, Rules: docs[0].Rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: grant, Namespace: granted},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: operatorNS}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: grant}})

	secret := func(ns string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: ns}}
	}
	if err := as.Create(ctxT(t), secret(bare), client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("the operator may create Secrets in a namespace nobody granted: %v", err)
	}
	for _, ns := range []string{granted, operatorNS} {
		eventually(t, "the grant in "+ns, func() error { return as.Create(ctxT(t), secret(ns), client.DryRunAll) })
	}
	existing := secret(bare)
	create(t, existing)
	existing.StringData = map[string]string{"k": "v"}
	if err := as.Update(ctxT(t), existing, client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("the operator may update a tenant's Secret: %v", err)
	}

	// What the APIKey reconciler does for a key to generate, as the operator: a clear problem, not a retry loop.
	key := &chatv1alpha1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "backend", Namespace: bare, UID: "0b0b0b0b-0000-4000-8000-000000000001"},
		Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, Type: chatv1alpha1.APIKeySecret}}
	_, _, err := ensureGenerated(ctxT(t), as, secretReader{cache: as, api: as}, newOwnSecrets(time.Now), key, generatedKey(key))
	p, perr := asProblem(err)
	if perr != nil || p == nil || p.reason != chatv1alpha1.ReasonSecretsNotGranted {
		t.Fatalf("generating a key's Secret without the grant: problem %+v, error %v; want %s", p, perr, chatv1alpha1.ReasonSecretsNotGranted)
	}
	if !strings.Contains(p.message, "existingSecretRef") || !strings.Contains(p.message, "parley-tenant-secrets") {
		t.Errorf("the condition does not say what to do: %q", p.message)
	}
}
