//go:build integration

package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
)

// BenchmarkAPIServerCost measures the kube-apiserver's and etcd's CPU a request, for each kind of request a merchant
// costs (the benchmark's creates, the operator's writes and reads), with two sets of informers watching as the
// operator's and make bench-operator's do: PARLEY_BENCH_REQUESTS of each (2,000 by default), 16 at a time. An
// update is measured as a merge patch on one half of the objects and as an update (PUT) on the other, the patches
// first unless PARLEY_BENCH_PUT_FIRST is set. With PARLEY_BENCH_PROFILE_DIR set to a directory, a CPU profile of the
// API server over the first 4 s of each kind is saved there. CPU time is read from /proc, so the figures do not
// depend on the machine's load as much as the times do.
func BenchmarkAPIServerCost(b *testing.B) {
	n := 2000
	if v := os.Getenv("PARLEY_BENCH_REQUESTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	env := newEnvironment(b)
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	pids := controlPlaneProcesses(b)
	ctx := b.Context()
	admin, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}); err != nil {
		b.Fatal(err)
	}
	opCfg := serviceAccountConfig(b, admin, cfg, "parley-operator")
	opCfg.QPS, opCfg.Burst = 5000, 5000
	c, err := client.New(opCfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	// The operator's informers, and the benchmark's own on Merchants: every write is sent to its watchers.
	var cached cache.Cache
	for range 2 {
		informers, err := cache.New(opCfg, cache.Options{Scheme: controllers.Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = informers.Start(ctx) }()
		for _, o := range []client.Object{&chatv1alpha1.Merchant{}, &chatv1alpha1.APIKey{}, &corev1.Secret{}} {
			if _, err := informers.GetInformer(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
		ns := &metav1.PartialObjectMetadata{}
		ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		if _, err := informers.GetInformer(ctx, ns, cache.BlockUntilSynced(true)); err != nil {
			b.Fatal(err)
		}
		cached = informers
	}

	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("tenant-%04d", i)
	}
	apiserver, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	profileDir := os.Getenv("PARLEY_BENCH_PROFILE_DIR")
	phase := func(name string, lo, hi int, do func(i int) error) {
		if profileDir != "" {
			// A CPU profile of the API server over the phase's first 4 s.
			go func() {
				resp, err := apiserver.Get(strings.TrimSuffix(cfg.Host, "/") + "/debug/pprof/profile?seconds=4")
				if err != nil {
					b.Log(err)
					return
				}
				defer func() { _ = resp.Body.Close() }()
				data, _ := io.ReadAll(resp.Body)
				_ = os.WriteFile(filepath.Join(profileDir, strings.NewReplacer(" ", "-", "/", "-", "(", "", ")", "").Replace(name)+".pprof"), data, 0o644)
			}()
		}
		before := controlPlaneCPU(b, pids)
		start := time.Now()
		work := make(chan int)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for range 16 {
			wg.Go(func() {
				for i := range work {
					if err := do(i); err != nil {
						mu.Lock()
						firstErr = firstOf(firstErr, fmt.Errorf("%s %d: %w", name, i, err))
						mu.Unlock()
					}
				}
			})
		}
		for i := lo; i < hi; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		if firstErr != nil {
			b.Fatal(firstErr)
		}
		time.Sleep(time.Second) // the watches' fan-out of the last writes
		after := controlPlaneCPU(b, pids)
		per := func(d time.Duration) string {
			return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)/float64(hi-lo))
		}
		b.Logf("%-34s kube-apiserver %s, etcd %s a request (%d in %s)", name, per(after[0]-before[0]),
			per(after[1]-before[1]), hi-lo, time.Since(start).Round(time.Millisecond))
	}

	phase("POST namespaces", 0, n, func(i int) error {
		return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}})
	})
	phase("POST merchants", 0, n, func(i int) error {
		return c.Create(ctx, &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: names[i]},
			Spec: chatv1alpha1.MerchantSpec{DisplayName: names[i], PlanRef: chatv1alpha1.LocalObjectReference{Name: "enterprise"},
				AllowedOrigins: []string{"https://" + names[i] + ".example"}}})
	})
	phase("POST apikeys", 0, n, func(i int) error {
		return c.Create(ctx, &chatv1alpha1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: names[i]},
			Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, Type: chatv1alpha1.APIKeyPublishable}})
	})
	get := func(i int, o client.Object, name string) error {
		return cached.Get(ctx, types.NamespacedName{Namespace: names[i], Name: name}, o)
	}
	phase("GET merchants (metadata)", 0, n, func(i int) error {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(chatv1alpha1.GroupVersion.WithKind("Merchant"))
		return c.Get(ctx, types.NamespacedName{Namespace: names[i], Name: "shop"}, m)
	})
	phase("POST secrets (generated key)", 0, n, func(i int) error {
		var k chatv1alpha1.APIKey
		if err := get(i, &k, "widget"); err != nil {
			return err
		}
		return c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "widget-key", Namespace: names[i],
				Labels:          map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey, "app.kubernetes.io/managed-by": "parley"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&k, chatv1alpha1.GroupVersion.WithKind("APIKey"))}},
			Immutable: new(true),
			Data:      map[string][]byte{"key": []byte("pk_0123456789abcdefghijklmnopqrstuvwxyz0123456789")},
		})
	})
	half := n / 2
	putFirst := os.Getenv("PARLEY_BENCH_PUT_FIRST") != ""
	patch := func(i int) bool { return (i < half) != putFirst }
	halves := func(name1, name2 string, do func(int) error) {
		if putFirst {
			name1, name2 = name2, name1
		}
		phase(name1, 0, half, do)
		phase(name2, half, n, do)
	}
	finalizer := func(i int) error {
		var m chatv1alpha1.Merchant
		if err := get(i, &m, "shop"); err != nil {
			return err
		}
		m.ManagedFields = nil
		before := m.DeepCopy()
		m.Finalizers = append(m.Finalizers, "chat.parley.dev/tenant-bundle")
		if !patch(i) {
			return c.Update(ctx, &m)
		}
		return c.Patch(ctx, &m, client.MergeFrom(before))
	}
	halves("PATCH merchants (finalizer)", "PUT merchants (finalizer)", finalizer)
	now := metav1.Now()
	merchantStatus := func(i int) error {
		var m chatv1alpha1.Merchant
		if err := get(i, &m, "shop"); err != nil {
			return err
		}
		m.ManagedFields = nil
		before := m.DeepCopy()
		m.Status = chatv1alpha1.MerchantStatus{ObservedGeneration: 1, MerchantID: names[i] + "-shop", Plan: "enterprise",
			APIKeys: 1, Webhooks: 1, BundleSecret: "parley-system/tenant-" + names[i] + "-shop",
			EmbedSnippet: `<script src="https://chat.example.com/widget.js" data-merchant="` + names[i] + `-shop" data-key="<API_KEY>" async></script>`,
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled",
				Message: "the tenant bundle is published", ObservedGeneration: 1, LastTransitionTime: now}}}
		if patch(i) {
			return c.Status().Patch(ctx, &m, client.MergeFrom(before))
		}
		return c.Status().Update(ctx, &m)
	}
	halves("PATCH merchants/status", "PUT merchants/status", merchantStatus)
	keyStatus := func(i int) error {
		var k chatv1alpha1.APIKey
		if err := get(i, &k, "widget"); err != nil {
			return err
		}
		k.ManagedFields = nil
		before := k.DeepCopy()
		k.Status = chatv1alpha1.APIKeyStatus{ObservedGeneration: 1, KeyID: "k_0123456789", Prefix: "pk_01234567",
			SecretRef: &chatv1alpha1.SecretKeySelector{Name: "widget-key", Key: "key"},
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled",
				Message: "the key is published to the runtime", ObservedGeneration: 1, LastTransitionTime: now}}}
		if patch(i) {
			return c.Status().Patch(ctx, &k, client.MergeFrom(before))
		}
		return c.Status().Update(ctx, &k)
	}
	halves("PATCH apikeys/status", "PUT apikeys/status", keyStatus)
	phase("POST events", 0, n, func(i int) error {
		return c.Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "shop-", Namespace: names[i]},
			EventTime: metav1.NowMicro(), ReportingController: "parley-merchant", ReportingInstance: "parley-merchant-x",
			Action: "Reconcile", Reason: "Reconciled", Type: corev1.EventTypeNormal, Note: "the tenant bundle is published",
			Regarding: corev1.ObjectReference{Kind: "Merchant", APIVersion: chatv1alpha1.GroupVersion.String(), Namespace: names[i], Name: "shop"}})
	})
}

func firstOf(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
