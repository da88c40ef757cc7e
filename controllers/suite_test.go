//go:build integration

package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The suite runs against a real kube-apiserver and etcd (envtest). There is no kube-controller-manager: no
// garbage collection and no Deployment controller, so tests check owner references rather than cascades, and
// mark Deployments available themselves where a test needs a Ready ChatRuntime.

var (
	cfg          *rest.Config
	k8s          client.Client
	stopOperator context.CancelFunc
	operatorDone chan error
	registry     = prometheus.NewRegistry()
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test`, or "+
			"KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test -tags integration ./...")
		return 1
	}
	logf.SetLogger(logr.Discard()) // the tests read objects, not logs
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: Scheme()}); err != nil {
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
	defer func() { _ = shutdownOperator() }()
	return m.Run()
}

func startOperator() error {
	mgr, err := NewManager(cfg, Options{
		Namespace: operatorNS, RuntimeImage: "ghcr.io/parley-dev/parley:test",
		MetricsAddr: "0", ProbeAddr: "0", Workers: 4, Registry: registry, Rebuildable: true,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopOperator = cancel
	operatorDone = make(chan error, 1)
	go func() { operatorDone <- mgr.Start(ctx) }()
	return nil
}

func shutdownOperator() error {
	stopOperator()
	return <-operatorDone
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

func ctxT(t *testing.T) context.Context { return t.Context() }

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	if err := k8s.Create(ctxT(t), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(ctxT(t), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// update re-reads obj, applies mutate and writes it, retrying when the operator wrote the object meanwhile.
func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return k8s.Update(ctxT(t), obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}

func conditionsOf(o client.Object) []metav1.Condition {
	switch o := o.(type) {
	case *chatv1alpha1.Plan:
		return o.Status.Conditions
	case *chatv1alpha1.ChatRuntime:
		return o.Status.Conditions
	case *chatv1alpha1.Merchant:
		return o.Status.Conditions
	case *chatv1alpha1.APIKey:
		return o.Status.Conditions
	case *chatv1alpha1.Webhook:
		return o.Status.Conditions
	}
	panic(fmt.Sprintf("no conditions on %T", o))
}

// waitReady waits until obj's Ready condition has status and reason, and reflects the latest generation. obj is
// refreshed in place.
func waitReady(t *testing.T, obj client.Object, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s Ready=%s/%s", obj, obj.GetName(), status, reason), func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conditionsOf(obj), chatv1alpha1.ConditionReady)
		switch {
		case c == nil:
			return errors.New("no Ready condition")
		case c.ObservedGeneration != obj.GetGeneration():
			return fmt.Errorf("condition is for generation %d, object is at %d", c.ObservedGeneration, obj.GetGeneration())
		case c.Status != status || c.Reason != reason:
			return fmt.Errorf("Ready=%s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// bundleSecret reads a tenant bundle Secret, in the target namespace of the merchant's runtime: the live one of
// that merchant ID, or else the one in the operator's namespace.
func bundleSecret(t *testing.T, merchantID string) (*corev1.Secret, error) {
	t.Helper()
	var list corev1.SecretList
	if err := k8s.List(ctxT(t), &list, client.MatchingLabels{chatv1alpha1.MerchantIDLabel: merchantID}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if _, retired := list.Items[i].Annotations[render.RetiredAnnotation]; !retired && list.Items[i].Namespace != operatorNS {
			return &list.Items[i], nil
		}
	}
	var s corev1.Secret
	err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: operatorNS, Name: tenant.SecretName(merchantID)}, &s)
	return &s, err
}

// waitBundle waits until the merchant's bundle satisfies check, and returns it.
func waitBundle(t *testing.T, merchantID string, check func(*tenant.Bundle) error) *tenant.Bundle {
	t.Helper()
	var b *tenant.Bundle
	eventually(t, "bundle of "+merchantID, func() error {
		s, err := bundleSecret(t, merchantID)
		if err != nil {
			return err
		}
		if b, err = tenant.Parse(s.Data[tenant.DataKey]); err != nil {
			return err
		}
		return check(b)
	})
	return b
}

// markDeploymentAvailable does what the Deployment controller and kubelet would: report every replica ready.
func markDeploymentAvailable(t *testing.T, namespace, name string) {
	t.Helper()
	eventually(t, "Deployment "+name+" available", func() error {
		var d appsv1.Deployment
		if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
			return err
		}
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
			ReadyReplicas: n, AvailableReplicas: n}
		return k8s.Status().Update(ctxT(t), &d)
	})
}
