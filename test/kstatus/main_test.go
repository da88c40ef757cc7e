//go:build integration

// Package kstatus runs kstatus, the library Flux's health checks compute a resource's status with
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, pinned in go.mod), on Plans, ChatRuntimes, Merchants, APIKeys and
// Webhooks that the operator's reconcilers brought into each state on a real API server (envtest): Current when
// Ready, InProgress while the object waits on something that comes by itself, Failed when it needs someone.
package kstatus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parley-dev/parley/controllers"
)

const operatorNS = "parley-system"

var (
	cfg *rest.Config
	k8s client.Client
	// stopOperator stops the running operator and waits until it has stopped.
	stopOperator func() error
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with "+
			"KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test ./test/kstatus/")
		return 1
	}
	logf.SetLogger(logr.Discard()) // the tests read objects, not logs
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
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
	mgr, err := controllers.NewManager(cfg, controllers.Options{
		Namespace: operatorNS, RuntimeImage: "ghcr.io/parley-dev/parley:test",
		MetricsAddr: "0", ProbeAddr: "0", Workers: 4, Registry: prometheus.NewRegistry(), Rebuildable: true,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopOperator = func() error {
		cancel()
		return <-done
	}
	return nil
}

// eventually retries check until it passes or 30 seconds have gone.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
