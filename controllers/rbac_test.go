package controllers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestOperatorRBAC installs the operator's generated RBAC (config/rbac/role.yaml) for a ServiceAccount and acts as
// that ServiceAccount on the real API server: it writes what it renders for runtimes only in its own namespace,
// and never deletes a tenant's Secrets.
func TestOperatorRBAC(t *testing.T) {
	const sa = "rbac-test-operator"
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: operatorNS}}
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc struct {
			Kind     string              `json:"kind"`
			Metadata metav1.ObjectMeta   `json:"metadata"`
			Rules    []rbacv1.PolicyRule `json:"rules"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
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
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-own", Namespace: tenantNS}}
	create(t, secret)
	if err := as.Delete(ctxT(t), secret, dry); !apierrors.IsForbidden(err) {
		t.Errorf("the operator may delete a tenant's Secret: %v", err)
	}
}
