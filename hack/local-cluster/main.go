// Command local-cluster starts a real kube-apiserver and etcd (the envtest binaries) with Parley's CRDs
// installed, writes a kubeconfig for them, and runs until interrupted. There is no kubelet: objects are stored
// and reconciled, but no pod runs. It lets anyone try the operator and kubectl without a cluster:
//
//	make local-cluster
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	kubeconfig := flag.String("out", ".parley/kubeconfig", "where to write the kubeconfig")
	flag.Parse()
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS is not set; run `make local-cluster`")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("starting the API server: %w", err)
	}
	defer func() { _ = env.Stop() }()
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return err
	}
	abs, _ := filepath.Abs(kubeconfig)
	fmt.Printf("A kube-apiserver with Parley's CRDs is running (no kubelet: no pod will start).\n\n"+
		"  export KUBECONFIG=%s\n\nPress Ctrl-C to stop it; everything in it is discarded.\n", abs)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
