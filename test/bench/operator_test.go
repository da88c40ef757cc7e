// Package bench holds benchmarks that need a real API server: run them with `make bench-operator`.
package bench

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
)

const operatorNS = "parley-system"

// BenchmarkOperatorScale creates merchants (10,000 by default, PARLEY_BENCH_MERCHANTS to change), each in its own
// namespace with an API key and a webhook, and measures the time until every one is Ready with its key and webhook
// in its bundle, and the operator's peak memory. The operator runs as its own process (`parley-operator`), so its
// memory is its own: its peak resident set (VmHWM), and the peaks of its two parts, sampled: anonymous memory
// (the Go heap and runtime, which a Go memory limit bounds) and file pages (the executable's, which it does not).
// With PARLEY_BENCH_PPROF set to an address, the operator serves net/http/pprof there while the benchmark runs.
func BenchmarkOperatorScale(b *testing.B) {
	n := 10000
	if v := os.Getenv("PARLEY_BENCH_MERCHANTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run `make bench-operator`")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cfg.QPS, cfg.Burst = 2000, 4000 // the load generator must not be the bottleneck
	c, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()

	bin := filepath.Join(b.TempDir(), "parley-operator")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/parley-operator").CombinedOutput(); err != nil {
		b.Fatalf("building parley-operator: %v\n%s", err, out)
	}
	user, err := env.AddUser(envtest.User{Name: "operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	kcPath := filepath.Join(b.TempDir(), "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		b.Fatal(err)
	}

	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}))
	must(c.Create(ctx, &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "enterprise"},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100, Features: chatv1alpha1.PlanFeatures{Webhooks: true}}}))
	must(c.Create(ctx, &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS},
		Spec: chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com"}}))

	ctrllog.SetLogger(logr.Discard()) // the benchmark's own informer has nothing to say
	merchants, err := cache.New(cfg, cache.Options{Scheme: controllers.Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
	must(err)
	go func() { _ = merchants.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute) // Start's error shows as a sync that never ends
	defer cancel()
	_, err = merchants.GetInformer(syncCtx, &chatv1alpha1.Merchant{})
	must(err)

	metricsAddr := freeAddr(b)
	args := []string{"--namespace=" + operatorNS,
		"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=0", "--log-level=error"}
	if addr := os.Getenv("PARLEY_BENCH_PPROF"); addr != "" {
		args = append(args, "--pprof-bind-address="+addr)
	}
	op := exec.CommandContext(ctx, bin, args...)
	op.Env = append(os.Environ(), "KUBECONFIG="+kcPath)
	op.Stderr = os.Stderr
	must(op.Start())
	defer func() { _ = op.Process.Kill(); _ = op.Wait() }()

	sampleCtx, stopSampling := context.WithCancel(ctx)
	parts := make(chan rssParts, 1)
	go func() { parts <- peakRSSParts(sampleCtx, op.Process.Pid) }()
	b.ResetTimer()
	start := time.Now()
	createTenants(b, c, n)
	created := time.Since(start)
	waitAllReady(b, merchants, n)
	elapsed := time.Since(start)
	b.StopTimer()
	stopSampling()

	peak := peakRSS(b, op.Process.Pid)
	peakParts := <-parts
	cpu := cpuTime(b, op.Process.Pid)
	b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
	b.ReportMetric(peak, "peak-MiB")
	b.ReportMetric(peakParts.anon, "peak-anon-MiB")
	b.ReportMetric(cpu.Seconds(), "operator-cpu-s")
	b.Logf("%d merchants, each with a key and a webhook: created in %s, all Ready in %s; operator peak RSS %.1f MiB "+
		"(anonymous at most %.1f MiB, files at most %.1f MiB), CPU %s; its API requests: %s", n,
		created.Round(time.Millisecond), elapsed.Round(time.Millisecond), peak, peakParts.anon, peakParts.file,
		cpu.Round(time.Millisecond), apiRequests(b, metricsAddr))
}

// createTenants creates n namespaces, each with a Merchant, an APIKey and a Webhook, from 16 workers.
func createTenants(b *testing.B, c client.Client, n int) {
	ctx := b.Context()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				ns := fmt.Sprintf("tenant-%04d", i)
				objs := []client.Object{
					&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
					&chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
						Spec: chatv1alpha1.MerchantSpec{DisplayName: ns, PlanRef: chatv1alpha1.LocalObjectReference{Name: "enterprise"},
							AllowedOrigins: []string{"https://" + ns + ".example"}}},
					&chatv1alpha1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: ns},
						Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, Type: chatv1alpha1.APIKeyPublishable}},
					&chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Name: "crm", Namespace: ns},
						Spec: chatv1alpha1.WebhookSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"},
							URL: "https://crm.example/" + ns, Events: []chatv1alpha1.WebhookEvent{chatv1alpha1.EventLeadCreated}}},
				}
				for _, o := range objs {
					if err := c.Create(ctx, o); err != nil {
						errs <- fmt.Errorf("creating %s/%s: %w", ns, o.GetName(), err)
						return
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// waitAllReady waits until every Merchant is Ready with one key and one webhook published. It watches Merchants
// through an informer rather than listing them from the API server: a list of 10,000 Merchants every poll would
// load the API server the operator shares the machine with.
func waitAllReady(b *testing.B, merchants cache.Cache, n int) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var list chatv1alpha1.MerchantList
		if err := merchants.List(b.Context(), &list, client.UnsafeDisableDeepCopy); err != nil {
			b.Fatal(err)
		}
		done := 0
		for _, m := range list.Items {
			if meta.IsStatusConditionTrue(m.Status.Conditions, chatv1alpha1.ConditionReady) &&
				m.Status.APIKeys == 1 && m.Status.Webhooks == 1 {
				done++
			}
		}
		if done == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d merchants are complete after 10 minutes", done, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// peakRSS reads a process's peak resident memory (VmHWM) in MiB.
func peakRSS(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	mib, ok := statusMiB(data, "VmHWM:")
	if !ok {
		b.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	return mib
}

// rssParts are the peaks of a process's resident memory by kind, in MiB.
type rssParts struct{ anon, file float64 }

// peakRSSParts samples a process's anonymous and file-backed resident memory (RssAnon, RssFile) every 100 ms
// until ctx ends, and returns the peak of each. The kernel keeps a peak of their sum only (VmHWM).
func peakRSSParts(ctx context.Context, pid int) rssParts {
	var peak rssParts
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			anon, _ := statusMiB(data, "RssAnon:")
			file, _ := statusMiB(data, "RssFile:")
			peak.anon, peak.file = max(peak.anon, anon), max(peak.file, file)
		}
		select {
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
	}
}

// statusMiB reads a field of /proc/PID/status given in kB, in MiB; ok is false when it is missing or malformed.
func statusMiB(status []byte, field string) (mib float64, ok bool) {
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, found := strings.CutPrefix(line, field); found {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}

// cpuTime reads the CPU time (user and system) a process has used, from /proc/<pid>/stat.
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] { // utime and stime, fields 14 and 15 of proc(5)
		t, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		ticks += t
	}
	const userHZ = 100 // the clock tick /proc reports in on every Linux architecture Go supports
	return time.Duration(ticks) * time.Second / userHZ
}

// apiRequests sums the operator's requests to the API server by HTTP method, from its client-go metrics: what
// the operator costs the API server besides its watches.
func apiRequests(b *testing.B, metricsAddr string) string {
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	byMethod := map[string]float64{}
	var total float64
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" {
				byMethod[l.GetValue()] += m.GetCounter().GetValue()
				total += m.GetCounter().GetValue()
			}
		}
	}
	parts := []string{fmt.Sprintf("%.0f", total)}
	for _, method := range slices.Sorted(maps.Keys(byMethod)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", method, byMethod[method]))
	}
	return strings.Join(parts, ", ")
}
