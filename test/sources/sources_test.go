//go:build integration

// Package sources applies KnowledgeSources, as a merchant keeping its sources in Git would, on a real API server
// (envtest) with the operator and a `parley runtime` process run with the arguments the operator rendered, against
// a website served by the test. Run with `make test`.
package sources

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/helpsite"
	"github.com/parley-dev/parley/internal/testutil/operatortest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	operatorNS = "parley-system"
	grantLabel = "sources.parley.dev/tenant"
)

// TestKnowledgeSourceBecomesReady: a KnowledgeSource applied becomes Ready once the runtime's first sync of the
// local site finished, with its pages and items in its status; one whose site is unreachable is Ready=False,
// SyncFailed, with the crawl's error; one naming a Merchant of another namespace is refused (MerchantNotFound)
// and reaches no bundle; a source deleted leaves its merchant's bundle.
func TestKnowledgeSourceBecomesReady(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test ./test/sources/")
	}
	logf.SetLogger(logr.Discard())
	bin := runtimeproc.Build(t)
	c := startWorld(t, bin)
	ctx := t.Context()
	site := helpCentre(t)

	plan := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "sources"},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100, Burst: ptr.To[int32](100),
			AllowedNamespaces: &metav1.LabelSelector{MatchLabels: map[string]string{grantLabel: "true"}}}}
	create(t, c, plan)
	for _, ns := range []string{"shop-a", "shop-b"} {
		create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{grantLabel: "true"}}})
	}
	create(t, c, &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "shop-a"},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "Shop A", PlanRef: chatv1alpha1.LocalObjectReference{Name: plan.Name}}})
	create(t, c, &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "shop-b"},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "Shop B", PlanRef: chatv1alpha1.LocalObjectReference{Name: plan.Name}}})

	unreachable := runtimeproc.FreeAddress(t) // nothing listens there
	source := func(name, merchant, url string) *chatv1alpha1.KnowledgeSource {
		return &chatv1alpha1.KnowledgeSource{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop-a"},
			Spec: chatv1alpha1.KnowledgeSourceSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchant}, URL: url,
				Exclude: []string{"/internal/*"}, SyncInterval: &metav1.Duration{Duration: 24 * time.Hour}}}
	}
	create(t, c, source("help", "shop", site.URL+"/"))
	create(t, c, source("down", "shop", "http://"+unreachable+"/"))
	create(t, c, source("intruder", "other", site.URL+"/")) // "other" is shop-b's Merchant

	help := waitReady(t, c, "help", metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	s := help.Status.Sync
	if s == nil || s.Pages != 4 || s.Items < 4 || s.LastSyncedAt == nil || s.SyncedGeneration != help.Generation ||
		s.State != chatv1alpha1.SyncReady || help.Status.MerchantID == "" {
		t.Errorf("the synced source's status: %+v, sync %+v", help.Status, s)
	}
	down := waitReady(t, c, "down", metav1.ConditionFalse, chatv1alpha1.ReasonSyncFailed)
	if cond := meta.FindStatusCondition(down.Status.Conditions, chatv1alpha1.ConditionReady); !strings.Contains(cond.Message, unreachable) {
		t.Errorf("the unreachable site's condition does not say why: %q", cond.Message)
	}
	if st := meta.FindStatusCondition(down.Status.Conditions, chatv1alpha1.ConditionStalled); st == nil || st.Status != metav1.ConditionTrue {
		t.Errorf("a failed crawl is not Stalled for kstatus: %+v", down.Status.Conditions)
	}
	waitReady(t, c, "intruder", metav1.ConditionFalse, chatv1alpha1.ReasonMerchantNotFound)
	for _, ns := range []string{"shop-a", "shop-b"} {
		for _, b := range bundles(t, c) {
			if strings.HasPrefix(b.Source, ns+"/") && slices.ContainsFunc(b.Sources, func(s tenant.Source) bool { return s.ID == "intruder" }) {
				t.Errorf("the KnowledgeSource naming another namespace's Merchant reached the bundle of %s", b.Source)
			}
		}
	}

	// A new spec is Syncing until the runtime has read it, then Ready again.
	if err := c.Get(ctx, client.ObjectKeyFromObject(help), help); err != nil {
		t.Fatal(err)
	}
	help.Spec.Exclude = append(help.Spec.Exclude, "/returns")
	if err := c.Update(ctx, help); err != nil {
		t.Fatal(err)
	}
	help = waitReady(t, c, "help", metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	if help.Status.Sync.Pages != 3 {
		t.Errorf("after excluding /returns the sync read %d pages, want 3", help.Status.Sync.Pages)
	}

	// Deleted, it leaves the bundle; the runtime then deletes the source with its items.
	if err := c.Delete(ctx, help); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted source leaves the bundle", func() error {
		for _, b := range bundles(t, c) {
			if slices.ContainsFunc(b.Sources, func(s tenant.Source) bool { return s.ID == "help" }) {
				return fmt.Errorf("bundle of %s still declares it", b.Source)
			}
		}
		return nil
	})
}

// helpCentre is a small website: a start page linking three help pages and an internal page the sources exclude.
func helpCentre(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/":                `<h1>Help centre</h1><p>Answers about shipping, returns and care of our ceramics.</p><a href="/shipping">Shipping</a> <a href="/returns">Returns</a> <a href="/care">Care</a> <a href="/internal/prices">Prices</a>`,
		"/shipping":        `<h1>Shipping</h1><p>Orders within Germany arrive in two to three working days and cost 4.90 euros.</p>`,
		"/returns":         `<h1>Returns</h1><p>Return any item within 30 days of delivery; we refund within a week.</p>`,
		"/care":            `<h1>Care</h1><p>Our mugs are dishwasher safe on the gentle programme and may go in the microwave.</p>`,
		"/internal/prices": `<h1>Internal</h1><p>Purchase prices, not for customers.</p>`,
	}
	srv := httptest.NewServer(helpsite.Pages("Shop", pages))
	t.Cleanup(srv.Close)
	return srv
}

// waitReady waits until the KnowledgeSource of shop-a has a Ready condition of the current generation with status
// and reason, and returns it.
func waitReady(t *testing.T, c client.Client, name string, status metav1.ConditionStatus, reason string) *chatv1alpha1.KnowledgeSource {
	t.Helper()
	ks := &chatv1alpha1.KnowledgeSource{}
	eventually(t, "KnowledgeSource "+name+" is Ready="+string(status)+" "+reason, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "shop-a", Name: name}, ks); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(ks.Status.Conditions, chatv1alpha1.ConditionReady)
		if cond == nil || cond.Status != status || cond.Reason != reason || cond.ObservedGeneration != ks.Generation {
			return fmt.Errorf("Ready %+v, sync %+v", cond, ks.Status.Sync)
		}
		return nil
	})
	return ks
}

// bundles reads the tenant bundles the operator published.
func bundles(t *testing.T, c client.Client) []*tenant.Bundle {
	t.Helper()
	var list corev1.SecretList
	if err := c.List(t.Context(), &list, client.InNamespace(operatorNS),
		client.MatchingLabels{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant}); err != nil {
		t.Fatal(err)
	}
	var out []*tenant.Bundle
	for _, s := range list.Items {
		if len(s.Data[tenant.DataKey]) == 0 {
			continue
		}
		b, err := tenant.Parse(s.Data[tenant.DataKey])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// startWorld starts an API server, the operator and a SQLite runtime that may crawl loopback sites, run with the
// arguments the operator rendered, and returns a client of the API server.
func startWorld(t *testing.T, bin string) client.Client {
	cluster := operatortest.Start(t)
	c := cluster.Client
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}})
	// The site is on loopback, which the runtime crawls only where the ChatRuntime allows private targets.
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS},
		Spec: chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com", Storage: chatv1alpha1.StorageSpec{Type: chatv1alpha1.StorageSQLite},
			Webhooks:          chatv1alpha1.ChatRuntimeWebhooks{AllowPrivateAddresses: true},
			AllowedNamespaces: &metav1.LabelSelector{MatchLabels: map[string]string{grantLabel: "true"}}}}
	create(t, c, rt)

	listen, metrics := runtimeproc.FreeAddress(t), runtimeproc.FreeAddress(t)
	cluster.RunOperator(t, controllers.Options{Namespace: operatorNS, RuntimeImage: "ghcr.io/parley-dev/parley:test", MetricsAddr: "0", ProbeAddr: "0",
		UsageInterval: 200 * time.Millisecond, UsageAddress: metrics, Registry: prometheus.NewRegistry(), Rebuildable: true})
	cluster.RunRuntime(t, bin, rt, map[string]string{contract.FlagListen: listen, contract.FlagMetricsListen: metrics,
		contract.FlagSQLitePath: filepath.Join(t.TempDir(), "parley.db")})
	return c
}

func create(t *testing.T, c client.Client, o client.Object) { t.Helper(); operatortest.Create(t, c, o) }

// eventually retries check until it passes or 90 seconds have gone: a sync starts within the runtime's poll of
// 10 seconds after its bundle arrives.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	operatortest.Eventually(t, what, 90*time.Second, check)
}
