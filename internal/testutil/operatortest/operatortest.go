//go:build integration

// Package operatortest runs what the operator's end-to-end tests share: an API server (envtest) with Parley's
// CRDs, the operator in the test's process, and `parley runtime` as a process run with the arguments and
// environment the operator rendered into the runtime's Deployment.
package operatortest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
)

// renderWait bounds the wait for the operator to write the runtime's Deployment.
const renderWait = 60 * time.Second

// Cluster is a running API server.
type Cluster struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	// Kubeconfig is the path of an administrator's kubeconfig, for processes that watch the API server.
	Kubeconfig string
}

// Environment is an API server with the repository's CRDs, not yet started.
func Environment() *envtest.Environment {
	_, file, _, _ := runtime.Caller(0)
	crds := filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "crd", "bases")
	return &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
}

// Start starts an API server, stopped when t ends, with a client and an administrator's kubeconfig.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Env.Stop() })
	if c.Kubeconfig, err = WriteKubeconfig(c.Env, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	return c
}

// Launch starts an API server with a client, without a kubeconfig, for a TestMain, which has no t to stop it
// when it ends: the caller stops it with c.Env.Stop.
func Launch() (*Cluster, error) {
	c := &Cluster{Env: Environment()}
	var err error
	if c.Config, err = c.Env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: controllers.Scheme()}); err != nil {
		_ = c.Env.Stop()
		return nil, err
	}
	return c, nil
}

// WriteKubeconfig writes a kubeconfig for an administrator of env's API server into dir and returns its path.
func WriteKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "parley-test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding the administrator: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("the administrator's kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// RunOperator runs the operator's manager with opts against the API server until t ends, and fails t if it
// stops with an error.
func (c *Cluster) RunOperator(t testing.TB, opts controllers.Options) {
	t.Helper()
	stop, err := StartOperator(c.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("the operator stopped with %v", err)
		}
	})
}

// StartOperator runs the operator's manager with opts against the API server of cfg until stop is called, which
// waits for it to stop and returns the error it stopped with: for a TestMain, or a test that stops the operator
// to start it again.
func StartOperator(cfg *rest.Config, opts controllers.Options) (stop func() error, err error) {
	mgr, err := controllers.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// RunRuntime runs bin with the arguments and environment the operator rendered for rt (RenderedRuntime), the
// flags of local set to their local values (local must name the listen address), watching the API server, and
// waits until it is ready.
func (c *Cluster) RunRuntime(t testing.TB, bin string, rt *chatv1alpha1.ChatRuntime, local map[string]string) *runtimeproc.Process {
	t.Helper()
	args, env, err := RenderedRuntime(t.Context(), c.Client, rt, local)
	if err != nil {
		t.Fatal(err)
	}
	return runtimeproc.Run(t, "http://"+local[contract.FlagListen], bin, append([]string{"KUBECONFIG=" + c.Kubeconfig}, env...), args...)
}

// RenderedRuntime waits for the operator to write rt's Deployment and returns its container's arguments, with the
// flags of local set to their local values, and its environment, with values from Secrets read from the API
// server.
func RenderedRuntime(ctx context.Context, c client.Client, rt *chatv1alpha1.ChatRuntime, local map[string]string) (args, env []string, err error) {
	var d appsv1.Deployment
	deadline := time.Now().Add(renderWait)
	for {
		err = c.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: render.ServiceName(rt)}, &d)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			current := &chatv1alpha1.ChatRuntime{}
			_ = c.Get(ctx, client.ObjectKeyFromObject(rt), current)
			return nil, nil, fmt.Errorf("the operator did not render the runtime's Deployment: %w; the ChatRuntime's conditions: %+v",
				err, current.Status.Conditions)
		}
		time.Sleep(50 * time.Millisecond)
	}
	container := d.Spec.Template.Spec.Containers[0]
	replaced := map[string]bool{}
	for _, arg := range container.Args {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if v, ok := local[name]; ok {
			arg = contract.Arg(name, v)
			replaced[name] = true
		}
		args = append(args, arg)
	}
	for name := range local {
		if !replaced[name] {
			return nil, nil, fmt.Errorf("the rendered arguments %v have no --%s to run locally", container.Args, name)
		}
	}
	for _, e := range container.Env {
		value := e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			var s corev1.Secret
			if err := c.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: ref.SecretKeyRef.Name}, &s); err != nil {
				return nil, nil, fmt.Errorf("$%s: %w", e.Name, err)
			}
			value = string(s.Data[ref.SecretKeyRef.Key])
		}
		env = append(env, e.Name+"="+value)
	}
	return args, env, nil
}

// Create creates o, failing t if it cannot.
func Create(t testing.TB, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// Eventually retries check until it passes, failing t with its last error once within has gone.
func Eventually(t testing.TB, what string, within time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not after %s: %v", what, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
