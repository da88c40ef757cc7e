//go:build integration

// Package bench holds benchmarks that need a real API server: run them with `make bench-operator`.
package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
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

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
// With PARLEY_BENCH_PPROF set to an address, the operator serves net/http/pprof there while the benchmark runs;
// PARLEY_BENCH_OPERATOR_ARGS adds flags to its command line.
// What the merchants cost the control plane is reported too: the CPU time of envtest's kube-apiserver and etcd
// and the API server's requests by verb and resource; with PARLEY_BENCH_CONTROL_PLANE_PPROF set to a directory,
// profiles of both are saved there (profileControlPlane).
func BenchmarkOperatorScale(b *testing.B) {
	n := 10000
	if v := os.Getenv("PARLEY_BENCH_MERCHANTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	env := newEnvironment(b)
	profileDir := os.Getenv("PARLEY_BENCH_CONTROL_PLANE_PPROF")
	if profileDir != "" {
		env.ControlPlane.Etcd = &envtest.Etcd{}
		env.ControlPlane.Etcd.Configure().Set("enable-pprof", "true")
	}
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	controlPlane := controlPlaneProcesses(b)
	ctx := b.Context()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	admin, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	must(err)
	must(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}))
	// The operator and the benchmark's client (standing for the merchants' tools) authenticate with service account
	// tokens, as in a cluster: envtest's own users have client certificates, whose chain the API server verifies
	// on every request (7% of its CPU in this benchmark), where it keeps a verified token for a while.
	operatorCfg, benchCfg := serviceAccountConfig(b, admin, cfg, "parley-operator"), serviceAccountConfig(b, admin, cfg, "bench")
	benchCfg.QPS, benchCfg.Burst = 2000, 4000 // the load generator must not be the bottleneck
	c, err := client.New(benchCfg, client.Options{Scheme: controllers.Scheme()})
	must(err)

	bin := filepath.Join(b.TempDir(), "parley-operator")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/parley-operator").CombinedOutput(); err != nil {
		b.Fatalf("building parley-operator: %v\n%s", err, out)
	}
	kubeconfig, err := kubeconfigOf(operatorCfg)
	must(err)
	kcPath := filepath.Join(b.TempDir(), "kubeconfig")
	must(os.WriteFile(kcPath, kubeconfig, 0o600))

	must(c.Create(ctx, &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "enterprise"},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100, Features: chatv1alpha1.PlanFeatures{Webhooks: true}}}))
	must(c.Create(ctx, &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS},
		Spec: chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com"}}))

	ctrllog.SetLogger(logr.Discard()) // the benchmark's own informer has nothing to say
	merchants, err := cache.New(benchCfg, cache.Options{Scheme: controllers.Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
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
	// PARLEY_BENCH_OPERATOR_ARGS adds flags, to compare settings such as --workers or --kube-api-qps.
	args = append(args, strings.Fields(os.Getenv("PARLEY_BENCH_OPERATOR_ARGS"))...)
	op := exec.CommandContext(ctx, bin, args...)
	op.Env = append(os.Environ(), "KUBECONFIG="+kcPath)
	op.Stderr = os.Stderr
	must(op.Start())
	defer func() { _ = op.Process.Kill(); _ = op.Wait() }()

	sampleCtx, stopSampling := context.WithCancel(ctx)
	parts := make(chan rssParts, 1)
	go func() { parts <- peakRSSParts(sampleCtx, op.Process.Pid) }()
	apiserver, err := rest.HTTPClientFor(cfg)
	must(err)
	apiserverURL := strings.TrimSuffix(cfg.Host, "/")
	if profileDir != "" {
		profiles := profileControlPlane(b, apiserver, apiserverURL, env.ControlPlane.Etcd.URL.String(), profileDir)
		defer func() { <-profiles }()
	}
	apiserverBefore := scrape(b, apiserver, apiserverURL+"/metrics")
	cpuBefore := controlPlaneCPU(b, controlPlane)
	b.ResetTimer()
	start := time.Now()
	createTenants(b, c, n)
	created := time.Since(start)
	waitAllReady(b, merchants, n)
	elapsed := time.Since(start)
	b.StopTimer()
	stopSampling()
	cpuAfter := controlPlaneCPU(b, controlPlane)
	apiserverAfter := scrape(b, apiserver, apiserverURL+"/metrics")

	peak := peakRSS(b, op.Process.Pid)
	peakParts := <-parts
	cpu := cpuTime(b, op.Process.Pid)
	operatorMetrics := scrape(b, http.DefaultClient, "http://"+metricsAddr+"/metrics")
	b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
	b.ReportMetric((elapsed - created).Seconds(), "s-ready-after-creates")
	requests, writes := apiRequestCounts(operatorMetrics)
	b.ReportMetric(requests/float64(n), "requests/merchant")
	b.ReportMetric(writes/float64(n), "writes/merchant")
	b.ReportMetric(peak, "peak-MiB")
	b.ReportMetric(peakParts.anon, "peak-anon-MiB")
	b.ReportMetric(cpu.Seconds(), "operator-cpu-s")
	b.Logf("%d merchants, each with a key and a webhook: created in %s, all Ready in %s; operator peak RSS %.1f MiB "+
		"(anonymous at most %.1f MiB, files at most %.1f MiB), CPU %s; its API requests: %s", n,
		created.Round(time.Millisecond), elapsed.Round(time.Millisecond), peak, peakParts.anon, peakParts.file,
		cpu.Round(time.Millisecond), apiRequests(operatorMetrics))
	apiserverCPU, etcdCPU, ownCPU := cpuAfter[0]-cpuBefore[0], cpuAfter[1]-cpuBefore[1], cpuAfter[2]-cpuBefore[2]
	b.ReportMetric(apiserverCPU.Seconds(), "apiserver-cpu-s")
	b.Logf("from the first create until all were Ready: kube-apiserver CPU %s, etcd CPU %s, the benchmark's own "+
		"(its creates and its informer) %s", apiserverCPU.Round(time.Millisecond), etcdCPU.Round(time.Millisecond),
		ownCPU.Round(time.Millisecond))
	b.Logf("the API server's requests meanwhile, from everyone but watches: %s",
		requestsBetween(apiserverRequests(apiserverBefore, false), apiserverRequests(apiserverAfter, false)))
	b.Logf("the operator's writes by verb, resource and response code (the API server's own leases aside): %s",
		requestsBetween(apiserverRequests(apiserverBefore, true), withoutOwnCreates(apiserverRequests(apiserverAfter, true), n)))
	// Where a merchant waits: in the operator's workqueues, in its reconciles' requests, in the API server's
	// priority-and-fairness queues, or on etcd.
	b.Logf("Events recorded: %s", eventsByReason(b, admin))
	b.Logf("operator's reconciles: %s", sums(nil, operatorMetrics, "controller_runtime_reconcile_total", "controller", "result"))
	b.Logf("operator's workqueues, mean wait in queue: %s; mean reconcile: %s",
		means(nil, operatorMetrics, "workqueue_queue_duration_seconds", "name"),
		means(nil, operatorMetrics, "controller_runtime_reconcile_time_seconds", "controller"))
	b.Logf("operator's requests, mean latency: %s", means(nil, operatorMetrics, "rest_client_request_duration_seconds", "verb"))
	b.Logf("API server, mean latency by verb: %s; of which waiting in priority and fairness queues: %s; etcd's: %s",
		means(apiserverBefore, apiserverAfter, "apiserver_request_duration_seconds", "verb"),
		means(apiserverBefore, apiserverAfter, "apiserver_flowcontrol_request_wait_duration_seconds", "priority_level"),
		means(apiserverBefore, apiserverAfter, "etcd_request_duration_seconds", "operation"))
}

// eventsByReason counts the Events in all namespaces by kind of object, type and reason, with their repeats.
func eventsByReason(b *testing.B, c client.Client) string {
	var list eventsv1.EventList
	if err := c.List(b.Context(), &list); err != nil {
		b.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range list.Items {
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		counts[e.Regarding.Kind+" "+e.Type+" "+e.Reason] += n
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// metricFamilies are the metrics of one scrape, by name.
type metricFamilies = map[string]*dto.MetricFamily

// scrape reads a Prometheus text endpoint.
func scrape(b *testing.B, c *http.Client, url string) metricFamilies {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("reading metrics %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return families
}

// labelKey joins the values of the named labels of a metric, such as "merchant success".
func labelKey(m *dto.Metric, names []string) string {
	values := make([]string, len(names))
	for _, l := range m.GetLabel() {
		if i := slices.Index(names, l.GetName()); i >= 0 {
			values[i] = l.GetValue()
		}
	}
	return strings.Join(values, " ")
}

// sums adds up a counter between two scrapes (before may be nil) by the named labels, leaving out zeros.
func sums(before, after metricFamilies, name string, labelNames ...string) string {
	total := func(f metricFamilies) map[string]float64 {
		out := map[string]float64{}
		for _, m := range f[name].GetMetric() {
			out[labelKey(m, labelNames)] += m.GetCounter().GetValue()
		}
		return out
	}
	b, a := total(before), total(after)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if n := a[k] - b[k]; n != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, n))
		}
	}
	return strings.Join(parts, ", ")
}

// means gives a histogram's mean between two scrapes (before may be nil) by the named labels, with its count.
func means(before, after metricFamilies, name string, labelNames ...string) string {
	type sc struct{ sum, count float64 }
	total := func(f metricFamilies) map[string]sc {
		out := map[string]sc{}
		for _, m := range f[name].GetMetric() {
			k := labelKey(m, labelNames)
			h := m.GetHistogram()
			out[k] = sc{out[k].sum + h.GetSampleSum(), out[k].count + float64(h.GetSampleCount())}
		}
		return out
	}
	b, a := total(before), total(after)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if n := a[k].count - b[k].count; n >= 10 {
			mean := time.Duration((a[k].sum - b[k].sum) / n * float64(time.Second))
			parts = append(parts, fmt.Sprintf("%s %s (%.0f)", k, mean.Round(10*time.Microsecond), n))
		}
	}
	return strings.Join(parts, ", ")
}

// apiserverRequests reads the API server's count of requests it has served (apiserver_request_total) by verb and
// resource, such as "PATCH merchants/status"; with writes, only writes, by response code too, such as
// "PUT merchants/status 409": a write refused for a conflict costs the API server a request as well.
func apiserverRequests(families metricFamilies, writes bool) map[string]float64 {
	counts := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		var verb, resource, sub, code string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			case "code":
				code = l.GetValue()
			}
		}
		if sub != "" {
			resource += "/" + sub
		}
		key := verb + " " + resource
		if writes {
			if slices.Contains([]string{"GET", "LIST", "WATCH"}, verb) {
				continue
			}
			key += " " + code
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}

// withoutOwnCreates takes the benchmark's own creates (createTenants: n namespaces, Merchants, APIKeys and
// Webhooks) out of writes counted by apiserverRequests, leaving the operator's.
func withoutOwnCreates(writes map[string]float64, n int) map[string]float64 {
	for _, resource := range []string{"namespaces", "merchants", "apikeys", "webhooks"} {
		writes["POST "+resource+" 201"] -= float64(n)
	}
	return writes
}

// requestsBetween describes the requests counted between two apiserverRequests, the most frequent first, without
// watches (one request each, open throughout) and kinds of fewer than 10.
func requestsBetween(before, after map[string]float64) string {
	type kind struct {
		name string
		n    float64
	}
	var kinds []kind
	var total float64
	for name, n := range after {
		n -= before[name]
		total += n
		if n >= 10 && !strings.HasPrefix(name, "WATCH") {
			kinds = append(kinds, kind{name, n})
		}
	}
	slices.SortFunc(kinds, func(a, b kind) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	parts := []string{fmt.Sprintf("%.0f", total)}
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.0f", k.name, k.n))
	}
	return strings.Join(parts, ", ")
}

// controlPlaneProcesses finds envtest's kube-apiserver and etcd among this process's children, and returns
// their process IDs and this process's own, in that order: what the benchmark costs the API server and etcd,
// which share the machine with it and the operator, is read from their /proc CPU times.
func controlPlaneProcesses(b *testing.B) [3]int {
	pids := [3]int{0, 0, os.Getpid()}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // it ended meanwhile
		}
		// Fields: pid (comm) state ppid ...; comm may hold spaces, the fields after its closing parenthesis do not.
		open, closing := strings.IndexByte(string(data), '('), strings.LastIndexByte(string(data), ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(string(data[closing+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		switch string(data[open+1 : closing]) {
		case "kube-apiserver":
			pids[0] = pid
		case "etcd":
			pids[1] = pid
		}
	}
	if pids[0] == 0 || pids[1] == 0 {
		b.Fatalf("kube-apiserver (%d) or etcd (%d) not found among this process's children", pids[0], pids[1])
	}
	return pids
}

// controlPlaneCPU reads the CPU time of each of controlPlaneProcesses' processes.
func controlPlaneCPU(b *testing.B, pids [3]int) [3]time.Duration {
	var cpu [3]time.Duration
	for i, pid := range pids {
		cpu[i] = cpuTime(b, pid)
	}
	return cpu
}

// profileControlPlane saves profiles of the kube-apiserver's CPU and allocations and of etcd's CPU over the first
// PARLEY_BENCH_PPROF_SECONDS (30 by default) of the benchmark into dir, as apiserver-cpu.pprof,
// apiserver-allocs.pprof and etcd-cpu.pprof.
// The channel is closed when both are written; a failure only logs, the benchmark goes on.
func profileControlPlane(b *testing.B, apiserver *http.Client, apiserverURL, etcdURL, dir string) <-chan struct{} {
	seconds := cmp.Or(os.Getenv("PARLEY_BENCH_PPROF_SECONDS"), "30")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	save := func(client *http.Client, url, file string) {
		resp, err := client.Get(url)
		if err != nil {
			b.Logf("profiling %s: %v", url, err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, data)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, file), data, 0o644)
		}
		if err != nil {
			b.Logf("profiling %s: %v", url, err)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { save(apiserver, apiserverURL+"/debug/pprof/profile?seconds="+seconds, "apiserver-cpu.pprof") })
	wg.Go(func() { save(apiserver, apiserverURL+"/debug/pprof/allocs?seconds="+seconds, "apiserver-allocs.pprof") })
	wg.Go(func() { save(http.DefaultClient, etcdURL+"/debug/pprof/profile?seconds="+seconds, "etcd-cpu.pprof") })
	go func() { wg.Wait(); close(done) }()
	return done
}

// serviceAccountConfig creates a ServiceAccount named name in the operator's namespace, bound to the ClusterRole
// cluster-admin, and returns a config for the API server that authenticates with a token of it.
func serviceAccountConfig(b *testing.B, admin client.Client, cfg *rest.Config, name string) *rest.Config {
	ctx := b.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNS}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: operatorNS}}}
	token := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	err := admin.Create(ctx, sa)
	if err == nil {
		err = admin.Create(ctx, binding)
	}
	if err == nil {
		err = admin.SubResource("token").Create(ctx, sa, token)
	}
	if err != nil {
		b.Fatalf("giving %s a service account token: %v", name, err)
	}
	return &rest.Config{Host: cfg.Host, BearerToken: token.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}}
}

// kubeconfigOf writes a kubeconfig for a config that authenticates with a bearer token.
func kubeconfigOf(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["bench"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "bench"}
	kc.CurrentContext = "envtest"
	return clientcmd.Write(*kc)
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

// apiRequestCounts are the operator's requests to the API server, from its client-go metrics, and how many of them
// were writes (any method but GET).
func apiRequestCounts(families metricFamilies) (requests, writes float64) {
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" {
				requests += m.GetCounter().GetValue()
				if l.GetValue() != http.MethodGet {
					writes += m.GetCounter().GetValue()
				}
			}
		}
	}
	return requests, writes
}

// apiRequests sums the operator's requests to the API server by HTTP method, from its client-go metrics: what
// the operator costs the API server besides its watches.
func apiRequests(families metricFamilies) string {
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

// newEnvironment returns an envtest control plane with Parley's CRDs, to be started by the caller, and stops the
// benchmark with a clear error when envtest's binaries are not set up.
func newEnvironment(b *testing.B) *envtest.Environment {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run `make bench-operator`, or set it to `hack/setup-envtest.sh`'s output")
	}
	return &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
}
