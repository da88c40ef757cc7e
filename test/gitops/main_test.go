//go:build integration

// Package gitops tests how the GitOps tools read Parley's objects, on Plans, ChatRuntimes, Merchants, APIKeys and
// Webhooks that the operator's reconcilers brought into each state on a real API server (envtest):
//   - Argo CD: the health checks the chart ships (charts/parley/argocd/health.lua, rendered into the ConfigMap of
//     templates/argocd.yaml), run with the Lua engine Argo CD embeds, as Argo CD runs a script from argocd-cm.
//     go.mod pins github.com/yuin/gopher-lua at v1.1.2, the version Argo CD v3.6 requires: move it with Argo CD.
//   - Flux: kstatus, the library Flux's health checks compute a resource's status with
//     (sigs.k8s.io/cli-utils/pkg/kstatus/status, pinned in go.mod): Current when Ready, InProgress while the object
//     waits on something that comes by itself, Failed when it needs someone.
package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/testutil/operatortest"
)

const operatorNS = "parley-system"

var (
	repo  = filepath.Join("..", "..")
	chart = filepath.Join(repo, "charts", "parley")

	cfg *rest.Config
	k8s client.Client
	// scripts are the health checks the chart renders, by argocd-cm key.
	scripts map[string]string
	// stopOperator stops the running operator and waits until it has stopped.
	stopOperator func() error
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with "+
			"KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test -tags integration ./test/gitops/")
		return 1
	}
	var err error
	if scripts, err = renderedScripts(); err != nil {
		fmt.Fprintln(os.Stderr, "rendering the chart's health checks:", err)
		return 1
	}
	logf.SetLogger(logr.Discard()) // the tests read objects, not logs
	cluster, err := operatortest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cluster.Env.Stop() }()
	cfg, k8s = cluster.Config, cluster.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startOperator(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the operator:", err)
		return 1
	}
	defer func() { _ = stopOperator() }()
	return m.Run()
}

// startOperator runs every Parley reconciler, as the operator's binary does.
func startOperator() error {
	stop, err := operatortest.StartOperator(cfg, controllers.Options{
		Namespace: operatorNS, RuntimeImage: "ghcr.io/parley-dev/parley:test",
		MetricsAddr: "0", ProbeAddr: "0", Workers: 4, Registry: prometheus.NewRegistry(), Rebuildable: true,
	})
	if err != nil {
		return err
	}
	stopOperator = stop
	return nil
}

// pauseOperator stops the operator for a test of what the GitOps tools see behind it, and returns restart, which
// starts it again the first time it is called; it is called when t ends too.
func pauseOperator(t *testing.T) (restart func()) {
	t.Helper()
	if err := stopOperator(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart = func() {
		if !restarted {
			restarted = true
			if err := startOperator(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(restart)
	return restart
}

// renderedScripts renders the chart's Argo CD ConfigMap with the pinned Helm and returns its data.
func renderedScripts() (map[string]string, error) {
	modfile, err := filepath.Abs(filepath.Join(repo, "hack", "tools", "helm", "go.mod"))
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "helm-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd := exec.Command("go", "tool", "-modfile="+modfile, "helm", "template", "parley", chart,
		"--kube-version", "1.37.0", "-n", operatorNS, "--set", "argocd.healthChecks.enabled=true",
		"--show-only", "templates/argocd.yaml")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, stderr.String())
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(stdout.Bytes(), &cm); err != nil {
		return nil, fmt.Errorf("the rendered ConfigMap: %w", err)
	}
	if len(cm.Data) == 0 {
		return nil, errors.New("the rendered ConfigMap has no data")
	}
	return cm.Data, nil
}

// eventually retries check until it passes or 30 seconds have gone.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	operatortest.Eventually(t, what, 30*time.Second, check)
}
