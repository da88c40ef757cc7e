//go:build integration

// Package helm tests the Helm chart: lint and template, and an install, upgrade and uninstall on a real API
// server (envtest). Helm is the pinned Go tool of hack/tools/helm.
package helm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

var (
	repo  = filepath.Join("..", "..")
	chart = filepath.Join(repo, "charts", "parley")
)

// helm runs the pinned Helm with its own configuration and cache directories.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	stdout, err := tryHelm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return stdout
}

// tryHelm runs the pinned Helm and returns its output, or an error with what it printed.
func tryHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	modfile, err := filepath.Abs(filepath.Join(repo, "hack", "tools", "helm", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command("go", append([]string{"tool", "-modfile=" + modfile, "helm"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// values.schema.json refuses what the chart cannot render into a working install, before anything is applied.
func TestSchemaRefusesBadValues(t *testing.T) {
	for _, set := range []string{
		"operator.workers=0",
		"operator.kubeAPI.qps=-1",
		"operator.kubeAPI.burst=1.5",
		"operator.logLevel=loud",
		"operator.resources.limits.memory=lots",
		"operator.resourses.limits.memory=1Gi",
		"image.pullPolicy=Sometimes",
		"watchNamespaces={Shop_A}",
		"tenantNamespaces={acme,acme}",
		"runtime.trustedProxies={everyone}",
		"metrics.port=70000",
		"defaults.plans.pro.burst=0",
		"unknown=1",
	} {
		_, err := tryHelm(t, "template", "parley", chart, "--kube-version", "1.37.0", "--set", set)
		if err == nil {
			t.Errorf("--set %s is accepted", set)
		} else if !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
			t.Errorf("--set %s is refused, but not by the schema: %v", set, err)
		}
	}
	helm(t, "lint", "--strict", chart, "--set", "operator.resources.limits.memory=512Mi,operator.resources.requests.cpu=0.5,watchNamespaces={shop-a}")
}

// operator.kubeAPI reaches the operator's flags; by default the operator sets no pace of its own.
func TestTemplateKubeAPI(t *testing.T) {
	args := func(set ...string) []any {
		t.Helper()
		all := objects(t, helm(t, append([]string{"template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system"}, set...)...))
		spec := all["Deployment/parley-operator"]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		return spec["containers"].([]any)[0].(map[string]any)["args"].([]any)
	}
	for _, a := range args() {
		if strings.HasPrefix(a.(string), "--kube-api-") {
			t.Errorf("the default install paces the operator: %s", a)
		}
	}
	if got := args("--set", "operator.kubeAPI.qps=50,operator.kubeAPI.burst=100"); !contains(got, "--kube-api-qps=50") || !contains(got, "--kube-api-burst=100") {
		t.Errorf("operator.kubeAPI is not passed on: %v", got)
	}
}

// A namespaced install grants the operator its ClusterRole in the watched namespaces only, and tells it which.
func TestTemplateNamespaced(t *testing.T) {
	all := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "watchNamespaces={shop-a,shop-b},runtimeNamespaces={parley-pg}"))
	if _, ok := all["ClusterRoleBinding/parley-operator"]; ok {
		t.Error("a namespaced install binds the operator's ClusterRole cluster-wide")
	}
	if _, ok := all["ClusterRoleBinding/parley-operator-cluster"]; !ok {
		t.Error("a namespaced install cannot read Plans and Namespaces")
	}
	if ref := all["RoleBinding/parley-operator-watch"]["roleRef"].(map[string]any); ref["kind"] != "ClusterRole" || ref["name"] != "parley-operator" {
		t.Errorf("the watched namespaces' RoleBindings grant %v", ref)
	}
	// objects keys by kind and name: the RoleBindings of one name in several namespaces are read from the manifest.
	manifest := helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "watchNamespaces={shop-a,shop-b},runtimeNamespaces={parley-pg}", "--show-only", "templates/operator.yaml")
	want := "shop-a,shop-b,parley-system,parley-runtime,parley-pg"
	if !strings.Contains(manifest, "--watch-namespaces="+want) {
		t.Errorf("the operator is not told to watch %s", want)
	}
	for _, ns := range strings.Split(want, ",") {
		if !strings.Contains(manifest, "name: parley-operator-watch\n  namespace: "+ns+"\n") {
			t.Errorf("no grant in watched namespace %s", ns)
		}
	}
	cluster := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system"))
	if _, ok := cluster["ClusterRoleBinding/parley-operator"]; !ok {
		t.Error("the cluster-wide install does not bind the operator's ClusterRole")
	}
	if strings.Contains(helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "--show-only", "templates/operator.yaml"), "--watch-namespaces") {
		t.Error("the cluster-wide install watches a list of namespaces")
	}
}

func TestLint(t *testing.T) {
	helm(t, "lint", "--strict", chart)
	helm(t, "lint", "--strict", chart, "--set", "defaults.enabled=true,metrics.serviceMonitor.enabled=true,networkPolicy.enabled=true")
}

// objects returns the objects of a rendered manifest by "Kind/name".
func objects(t *testing.T, manifest string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(manifest, "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		out[obj["kind"].(string)+"/"+meta["name"].(string)] = obj
	}
	return out
}

func TestTemplate(t *testing.T) {
	all := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true,metrics.serviceMonitor.enabled=true,networkPolicy.enabled=true"))
	for _, want := range []string{
		"CustomResourceDefinition/merchants.chat.parley.dev", "CustomResourceDefinition/plans.chat.parley.dev",
		"Deployment/parley-operator", "ServiceAccount/parley-operator", "ClusterRole/parley-operator",
		"ClusterRoleBinding/parley-operator", "Role/parley-leader-election", "RoleBinding/parley-leader-election",
		"ClusterRole/parley-editor", "ClusterRole/parley-viewer", "ClusterRole/parley-tenant-secrets",
		"Service/parley-operator-metrics",
		"ServiceMonitor/parley-operator", "ServiceMonitor/parley-runtimes", "NetworkPolicy/parley-operator",
		"Plan/starter", "Plan/pro", "Plan/enterprise", "ChatRuntime/default",
	} {
		if _, ok := all[want]; !ok {
			t.Errorf("%s is not rendered", want)
		}
	}
	crd := all["CustomResourceDefinition/merchants.chat.parley.dev"]
	if crd["metadata"].(map[string]any)["annotations"].(map[string]any)["helm.sh/resource-policy"] != "keep" {
		t.Error("CRDs are not kept by default")
	}
	d := all["Deployment/parley-operator"]
	spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	sc := c["securityContext"].(map[string]any)
	if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false ||
		spec["securityContext"].(map[string]any)["runAsNonRoot"] != true {
		t.Errorf("the operator's security context is not restricted: %v", sc)
	}
	if args := c["args"].([]any); !contains(args, "--leader-elect") || !contains(args, "--namespace=parley-system") {
		t.Errorf("operator args %v", args)
	}

	// The default runtime gets a namespace of its own, where the operator is granted its workload and bundles.
	if ns := all["Namespace/parley-runtime"]; ns == nil ||
		ns["metadata"].(map[string]any)["annotations"].(map[string]any)["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the runtime's namespace is not created, or not kept: %v", ns)
	}
	if rt := all["ChatRuntime/default"]; rt["spec"].(map[string]any)["targetNamespace"] != "parley-runtime" {
		t.Errorf("the default ChatRuntime's spec is %v, want targetNamespace parley-runtime", rt["spec"])
	}
	rtb := all["RoleBinding/parley-runtime-namespace"]
	if rtb == nil || rtb["metadata"].(map[string]any)["namespace"] != "parley-runtime" ||
		rtb["roleRef"].(map[string]any)["name"] != "parley-runtime-namespace" {
		t.Errorf("the runtime namespace's grant is %v", rtb)
	}
	if _, ok := all["ClusterRole/parley-runtime-namespace"]; !ok {
		t.Error("ClusterRole/parley-runtime-namespace is not rendered")
	}
	shared := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true,runtime.namespace="))
	if _, ok := shared["ChatRuntime/default"]["spec"].(map[string]any)["targetNamespace"]; ok || shared["RoleBinding/parley-runtime-namespace"] != nil {
		t.Errorf("runtime.namespace empty still moves the runtime: %v", shared["ChatRuntime/default"]["spec"])
	}

	// The ingress's networks, given once, reach the default runtime; a spec of its own wins.
	if _, ok := all["ChatRuntime/default"]["spec"].(map[string]any)["trustedProxies"]; ok {
		t.Errorf("the default runtime trusts proxies nobody listed: %v", all["ChatRuntime/default"]["spec"])
	}
	proxied := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true,runtime.trustedProxies={10.244.0.0/16,fd00:10:244::/56}"))
	if got := fmt.Sprint(proxied["ChatRuntime/default"]["spec"].(map[string]any)["trustedProxies"]); got != "[10.244.0.0/16 fd00:10:244::/56]" {
		t.Errorf("runtime.trustedProxies gives the default runtime trustedProxies %s", got)
	}
	own := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true,runtime.trustedProxies={10.244.0.0/16},defaults.runtime.trustedProxies={10.0.0.0/8}"))
	if got := fmt.Sprint(own["ChatRuntime/default"]["spec"].(map[string]any)["trustedProxies"]); got != "[10.0.0.0/8]" {
		t.Errorf("defaults.runtime.trustedProxies is overridden: %s", got)
	}

	// The monitoring namespaces, named once, may scrape the default runtime's metrics port.
	if _, ok := all["ChatRuntime/default"]["spec"].(map[string]any)["metrics"]; ok {
		t.Errorf("the default runtime admits scrapers nobody listed: %v", all["ChatRuntime/default"]["spec"])
	}
	scraped := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true,runtime.metricsNamespaces={monitoring,observability}"))
	var rtSpec chatv1alpha1.ChatRuntime
	data, err := yaml.Marshal(scraped["ChatRuntime/default"])
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &rtSpec); err != nil {
		t.Fatal(err)
	}
	if sel := rtSpec.Spec.Metrics.AllowedNamespaces; !grants(t, sel, map[string]string{corev1.LabelMetadataName: "observability"}) ||
		grants(t, sel, map[string]string{corev1.LabelMetadataName: "tenant-a"}) {
		t.Errorf("runtime.metricsNamespaces gives the default runtime metrics.allowedNamespaces %v", sel)
	}

	if _, ok := all["RoleBinding/parley-tenant-secrets"]; ok {
		t.Error("the operator is granted Secrets in tenant namespaces nobody listed")
	}
	granted := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "tenantNamespaces={acme}"))
	rb := granted["RoleBinding/parley-tenant-secrets"]
	if rb == nil {
		t.Fatal("tenantNamespaces renders no RoleBinding")
	}
	ref := rb["roleRef"].(map[string]any)
	subject := rb["subjects"].([]any)[0].(map[string]any)
	if rb["metadata"].(map[string]any)["namespace"] != "acme" || ref["kind"] != "ClusterRole" || ref["name"] != "parley-tenant-secrets" ||
		subject["name"] != "parley-operator" || subject["namespace"] != "parley-system" {
		t.Errorf("the tenant namespace's grant is %v", rb)
	}

	none := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "--set", "crds.enabled=false"))
	for k := range none {
		if strings.HasPrefix(k, "CustomResourceDefinition/") || strings.HasPrefix(k, "Plan/") {
			t.Errorf("%s rendered with crds.enabled=false and no defaults", k)
		}
	}
	notKept := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "--set", "crds.keep=false"))
	if _, ok := notKept["CustomResourceDefinition/plans.chat.parley.dev"]["metadata"].(map[string]any)["annotations"].(map[string]any)["helm.sh/resource-policy"]; ok {
		t.Error("crds.keep=false still keeps the CRDs")
	}
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Install, upgrade with the defaults, apply the samples, uninstall: the CRDs and the custom resources stay.
func TestInstallUpgradeUninstall(t *testing.T) {
	c, kubeconfig, _ := startAPIServer(t)
	ctx := t.Context()
	k := []string{"--kubeconfig", kubeconfig, "-n", "parley-system"}

	helm(t, append([]string{"install", "parley", chart, "--create-namespace"}, k...)...)
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: "parley-operator"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: "parley-operator"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "parley-operator"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "merchants.chat.parley.dev"}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("after install: %T %s: %v", obj, obj.GetName(), err)
		}
	}

	// The CRDs exist now, so the release can create the default plans and runtime.
	// As a release of a chart from before runtime.namespace: the default runtime in the release's namespace.
	helm(t, append([]string{"upgrade", "parley", chart, "--reuse-values", "--set", "defaults.enabled=true,runtime.namespace="}, k...)...)
	waitFor(t, func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "parley-system", Name: "default"}, &chatv1alpha1.ChatRuntime{})
	})
	if err := c.Get(ctx, client.ObjectKey{Name: "enterprise"}, &chatv1alpha1.Plan{}); err != nil {
		t.Errorf("default plan: %v", err)
	}
	applySamples(ctx, t, c)

	// The scale-out example docs/operating.md gives: the API server accepts it and the runtime gets every part.
	// Upgraded to runtime.namespace, the runtime is not moved from under its data.
	helm(t, append([]string{"upgrade", "parley", chart, "--reuse-values", "--set", "runtime.namespace=parley-runtime",
		"-f", filepath.Join(chart, "examples", "scale-out.yaml")}, k...)...)
	waitFor(t, func() error {
		var rt chatv1alpha1.ChatRuntime
		if err := c.Get(ctx, client.ObjectKey{Namespace: "parley-system", Name: "default"}, &rt); err != nil {
			return err
		}
		s := rt.Spec
		if s.Storage.Type != chatv1alpha1.StoragePostgres || s.Storage.SQLite != nil || s.Autoscaling == nil ||
			s.Autoscaling.MaxReplicas != 10 || s.RateLimiter == nil || s.RateLimiter.Redis == nil {
			return fmt.Errorf("the runtime after the scale-out upgrade: %+v", s)
		}
		if s.TargetNamespace != "" {
			return fmt.Errorf("the upgrade moved the installed runtime to %s", s.TargetNamespace)
		}
		return nil
	})

	helm(t, append([]string{"uninstall", "parley"}, k...)...)
	waitFor(t, func() error {
		err := c.Get(ctx, client.ObjectKey{Namespace: "parley-system", Name: "parley-operator"}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the operator Deployment is still there: %w", err)
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Name: "merchants.chat.parley.dev"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
		t.Errorf("the CRDs went with the release despite crds.keep: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "acme", Name: "acme"}, &chatv1alpha1.Merchant{}); err != nil {
		t.Errorf("a merchant went with the release: %v", err)
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: "parley-runtime"}, &ns); err != nil || !ns.DeletionTimestamp.IsZero() {
		t.Errorf("the runtime's namespace went with the release: %v", err)
	}
}

// applySamples creates the merchant samples of config/samples.
func applySamples(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	for _, name := range []string{"v1_namespace_acme.yaml", "chat_v1alpha1_merchant_acme.yaml", "chat_v1alpha1_apikey_acme-widget.yaml"} {
		data, err := os.ReadFile(filepath.Join(repo, "config", "samples", name))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := objectFrom(c.Scheme(), data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
}

// objectFrom decodes a YAML document into a typed object of the scheme.
func objectFrom(scheme *runtime.Scheme, data []byte) (client.Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	o, err := scheme.New(tm.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(data, o); err != nil {
		return nil, err
	}
	return o.(client.Object), nil
}

func waitFor(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPaidPlansGrantedToNobody: a namespace editor must not be able to put a Merchant on a paid plan, from the
// chart's default plans or from the samples, until the platform team labels the namespace; the free plan stays
// open. A plan without allowedNamespaces is granted to every namespace.
func TestPaidPlansGrantedToNobody(t *testing.T) {
	plans := map[string][]byte{}
	all := objects(t, helm(t, "template", "parley", chart, "--kube-version", "1.37.0", "-n", "parley-system",
		"--set", "defaults.enabled=true"))
	for k, obj := range all {
		if strings.HasPrefix(k, "Plan/") {
			data, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			plans["chart "+k] = data
		}
	}
	samples, err := filepath.Glob(filepath.Join(repo, "config", "samples", "chat_v1alpha1_plan_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range samples {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		plans["sample "+filepath.Base(f)] = data
	}
	if len(plans) != 6 {
		t.Fatalf("want the three plans of the chart and of the samples, have %d", len(plans))
	}
	for where, data := range plans {
		var p chatv1alpha1.Plan
		if err := yaml.UnmarshalStrict(data, &p); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if p.Name == "starter" {
			if p.Spec.AllowedNamespaces != nil {
				t.Errorf("%s: the free plan is granted only to some namespaces: %v", where, p.Spec.AllowedNamespaces)
			}
			continue
		}
		if grants(t, p.Spec.AllowedNamespaces, map[string]string{"kubernetes.io/metadata.name": "intruder"}) {
			t.Errorf("%s: paid plan %s is granted to an unlabelled namespace: allowedNamespaces %v", where, p.Name, p.Spec.AllowedNamespaces)
		}
		if !grants(t, p.Spec.AllowedNamespaces, map[string]string{"plans.chat.parley.dev/" + p.Name: "granted"}) {
			t.Errorf("%s: the label docs/security.md gives does not grant plan %s", where, p.Name)
		}
	}
}

// grants reports whether a plan's allowedNamespaces selects a namespace with the given labels, as the operator
// decides it: no selector grants every namespace.
func grants(t *testing.T, selector *metav1.LabelSelector, nsLabels map[string]string) bool {
	t.Helper()
	if selector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		t.Fatalf("allowedNamespaces %v: %v", selector, err)
	}
	return sel.Matches(labels.Set(nsLabels))
}
