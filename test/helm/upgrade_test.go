//go:build integration

package helm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// previousRelease is the commit whose chart and operator TestUpgradeKeepsRuntimes upgrades from. The chart has no
// tagged release yet; this is the last commit of main before the upgrade behaviour was settled (the chart's
// version, 0.1.0, did not change). Move it to each release's tag once there are tags.
const previousRelease = "da2e8f6"

// TestUpgradeKeepsRuntimes installs the chart as it was at previousRelease and runs that commit's operator until it
// has rendered a SQLite and a PostgreSQL runtime, then upgrades the release to this chart and runs this operator:
// with the same runtime image, no runtime Deployment's pod template changes, so no running pod is replaced. The
// cluster is envtest's API server, which runs no pods: the test proves the templates, not a rollout.
func TestUpgradeKeepsRuntimes(t *testing.T) {
	c, kubeconfig, _ := startAPIServer(t)
	ctx := t.Context()
	k := []string{"--kubeconfig", kubeconfig, "-n", "parley-system"}

	old := checkout(t, previousRelease)
	oldChart := filepath.Join(old, "charts", "parley")
	helm(t, append([]string{"install", "parley", oldChart, "--create-namespace"}, k...)...)
	helm(t, append([]string{"upgrade", "parley", oldChart, "--set", "defaults.enabled=true"}, k...)...)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "parley-pg"}}); err != nil {
		t.Fatal(err)
	}
	pg := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: "pg"},
		Spec: chatv1alpha1.ChatRuntimeSpec{TargetNamespace: "parley-pg", Replicas: new(int32(3)),
			Storage: chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
				Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "db"}}}}}
	if err := c.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	runtimes := map[string]client.ObjectKey{
		"sqlite": {Namespace: "parley-runtime", Name: "parley-runtime-default"},
		"pg":     {Namespace: "parley-pg", Name: "parley-runtime-pg"},
	}

	image := "--runtime-image=ghcr.io/parley-dev/parley:0.1.0"
	stop := runOperator(t, kubeconfig, buildOperator(t, old), image)
	before := map[string]*appsv1.Deployment{}
	for name, key := range runtimes {
		waitFor(t, func() error {
			var d appsv1.Deployment
			if err := c.Get(ctx, key, &d); err != nil {
				return fmt.Errorf("the previous operator's %s runtime: %w", name, err)
			}
			before[name] = &d
			return nil
		})
	}
	stop()

	helm(t, append([]string{"upgrade", "parley", chart, "--set", "defaults.enabled=true"}, k...)...)
	runOperator(t, kubeconfig, buildOperator(t, repo), image)
	// This operator rolls PostgreSQL runtimes with no replica down: seeing the strategy is seeing it has applied.
	waitFor(t, func() error {
		var d appsv1.Deployment
		if err := c.Get(ctx, runtimes["pg"], &d); err != nil {
			return err
		}
		if u := d.Spec.Strategy.RollingUpdate; u == nil || u.MaxUnavailable == nil || u.MaxUnavailable.IntValue() != 0 {
			return fmt.Errorf("the PostgreSQL runtime's strategy is still %+v", d.Spec.Strategy)
		}
		return nil
	})
	// And both runtimes were reconciled after it started.
	waitFor(t, func() error {
		for name, key := range runtimes {
			var rt chatv1alpha1.ChatRuntime
			if err := c.Get(ctx, client.ObjectKey{Namespace: "parley-system", Name: strings.TrimPrefix(key.Name, "parley-runtime-")}, &rt); err != nil {
				return err
			}
			if rt.Status.ObservedGeneration != rt.Generation || len(rt.Status.Conditions) == 0 {
				return fmt.Errorf("the %s runtime is not reconciled: %+v", name, rt.Status)
			}
		}
		return nil
	})
	for name, key := range runtimes {
		var d appsv1.Deployment
		if err := c.Get(ctx, key, &d); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(before[name].Spec.Template, d.Spec.Template) {
			t.Errorf("the upgrade changed the %s runtime's pod template, and would replace its pods:\n%s", name,
				diff.Diff(before[name].Spec.Template, d.Spec.Template))
		}
		if name == "sqlite" && d.Generation != before[name].Generation {
			t.Errorf("the upgrade changed the SQLite runtime's Deployment: generation %d, was %d", d.Generation, before[name].Generation)
		}
	}
}

// startAPIServer starts envtest's API server and returns an admin client, the path of an admin kubeconfig and
// the environment, to add users to.
func startAPIServer(t *testing.T) (client.Client, string, *envtest.Environment) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(chatv1alpha1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, kubeconfigOf(t, env, envtest.User{Name: "helm", Groups: []string{"system:masters"}}), env
}

// kubeconfigOf writes a kubeconfig that authenticates as user and returns its path.
func kubeconfigOf(t *testing.T, env *envtest.Environment, user envtest.User) string {
	t.Helper()
	u, err := env.AddUser(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkout writes the tree of a commit of this repository into a temporary directory.
func checkout(t *testing.T, commit string) string {
	t.Helper()
	dir := t.TempDir()
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", commit)
	var tarball, stderr bytes.Buffer
	archive.Stdout, archive.Stderr = &tarball, &stderr
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s (a shallow clone lacks it: fetch the history): %v\n%s", commit, err, stderr.String())
	}
	extract := exec.Command("tar", "-x", "-C", dir)
	extract.Stdin = &tarball
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("extracting %s: %v\n%s", commit, err, out)
	}
	return dir
}

// buildOperator builds the parley-operator of the source tree at dir.
func buildOperator(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "parley-operator")
	build := exec.Command("go", "build", "-o", bin, "./cmd/parley-operator")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator of %s: %v\n%s", dir, err, out)
	}
	return bin
}

// runOperator runs an operator binary against the cluster of kubeconfig and returns a function that stops it and
// waits until it has stopped, and its log so far. Its log is the test's on failure.
func runOperator(t *testing.T, kubeconfig, bin string, args ...string) (stop func() string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--namespace=parley-system", "--usage-interval=0",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-format=text", "--workers=4"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() string {
		if stopped {
			return log.String()
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// One stuck waiting for a cache it may not fill would hold the test up to its timeout.
		killer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
		defer killer.Stop()
		// An operator stopped before it installed its signal handler dies of the signal: that is a stop too, and
		// what these tests check is what it wrote before.
		if err := cmd.Wait(); err != nil && !stoppedBySignal(err) {
			t.Errorf("the operator %s: %v", bin, err)
		}
		if t.Failed() {
			t.Logf("the operator's log:\n%s", log.String())
		}
		return log.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// stoppedBySignal reports whether err is a process's death by SIGTERM.
func stoppedBySignal(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	status, ok := exit.Sys().(syscall.WaitStatus)
	return ok && status.Signaled() && status.Signal() == syscall.SIGTERM
}
