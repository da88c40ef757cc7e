package chat_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// keyWorld is a chat service and the tenant registry a runtime authenticates keys against.
type keyWorld struct {
	svc     *chat.Service
	tenants *tenant.Registry
	metrics *prometheus.Registry
	logs    *bytes.Buffer
}

func newKeyWorld(t *testing.T) *keyWorld {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	w := &keyWorld{metrics: prometheus.NewRegistry(), logs: &bytes.Buffer{}}
	log := slog.New(slog.NewTextHandler(w.logs, nil))
	if w.tenants, err = tenant.NewRegistry(log, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	if w.svc, err = chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{}, Registry: w.metrics, Logger: log,
		Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	return w
}

// serve puts a merchant's bundle, with keys, in effect and returns it as served.
func (w *keyWorld) serve(t *testing.T, id string, keys ...tenant.APIKey) *tenant.Bundle {
	t.Helper()
	bundletest.Publish(t, w.tenants, "parley-tenant-"+id, &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: id, DisplayName: id,
		Source: id + "/shop", Plan: tenant.Plan{Name: "free", RequestsPerSecond: 1, Burst: 1}, APIKeys: keys})
	m, _ := w.tenants.Merchant(id)
	return m
}

// TestBundleCannotTakeOverASelfServiceKey: the intruder copies the victim's dashboard-created publishable key into a
// bundle key of its own. The key keeps authenticating the victim, the intruder's key is refused, counted, logged
// without the key and reported for the operator; after the victim revokes it, it authenticates no one.
func TestBundleCannotTakeOverASelfServiceKey(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	victim := w.serve(t, "victim")
	raw, created, err := w.svc.CreateAPIKey(ctx, w.tenants, victim, tenant.KeyPublishable)
	if err != nil {
		t.Fatal(err)
	}
	w.serve(t, "intruder", tenant.APIKey{ID: "copied", Type: tenant.KeyPublishable, SHA256: created.SHA256})

	for range 2 {
		m, k, ok, err := w.svc.ResolveKey(ctx, w.tenants, created.SHA256)
		if err != nil || !ok || m.MerchantID != "victim" || k.ID != created.ID {
			t.Fatalf("the copied key authenticates %+v %+v (%v, %v), want the victim's own key", m, k, ok, err)
		}
	}
	if n := counterValue(t, w.metrics, "parley_runtime_api_key_refused_total"); n != 2 {
		t.Errorf("refusals counted: %v, want 2", n)
	}
	logs := w.logs.String()
	if strings.Count(logs, "refused") != 1 || !strings.Contains(logs, "merchant=intruder") || !strings.Contains(logs, "source=intruder/shop") || !strings.Contains(logs, "key=copied") {
		t.Errorf("the refusal is not logged once with the intruder's merchant and key ID:\n%s", logs)
	}
	if strings.Contains(logs, created.SHA256) || strings.Contains(logs, raw) {
		t.Errorf("the log holds the key or its hash:\n%s", logs)
	}

	report, err := w.svc.UsageReport(ctx, w.tenants.All())
	if err != nil {
		t.Fatal(err)
	}
	if got := report.Merchants["intruder"].KeysInUse; !slices.Equal(got, []string{"copied"}) {
		t.Errorf("the intruder's keys in use: %v, want [copied]", got)
	}
	if got := report.Merchants["victim"].KeysInUse; len(got) != 0 {
		t.Errorf("the victim's keys in use: %v, want none", got)
	}

	if err := w.svc.RevokeAPIKey(ctx, victim, created.ID); err != nil {
		t.Fatal(err)
	}
	if m, _, ok, err := w.svc.ResolveKey(ctx, w.tenants, created.SHA256); err != nil || ok {
		t.Fatalf("the revoked key still authenticates %+v (%v)", m, err)
	}
	if report, err = w.svc.UsageReport(ctx, w.tenants.All()); err != nil || !slices.Equal(report.Merchants["intruder"].KeysInUse, []string{"copied"}) {
		t.Errorf("after the revoke, the intruder's keys in use: %+v (%v), want [copied]: the hash stays the victim's", report, err)
	}
}

// TestBundleKeyAuthenticatesItsOwnMerchant: a bundle key no self-service key holds authenticates its merchant, and
// a merchant may declare its own self-service key in its bundle.
func TestBundleKeyAuthenticatesItsOwnMerchant(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	sum := sha256.Sum256([]byte("pk_declared"))
	declared := hex.EncodeToString(sum[:])
	shop := w.serve(t, "shop", tenant.APIKey{ID: "declared", Type: tenant.KeyPublishable, SHA256: declared})
	if m, k, ok, err := w.svc.ResolveKey(ctx, w.tenants, declared); err != nil || !ok || m.MerchantID != "shop" || k.ID != "declared" {
		t.Fatalf("the bundle key authenticates %+v %+v (%v, %v)", m, k, ok, err)
	}
	_, created, err := w.svc.CreateAPIKey(ctx, w.tenants, shop, tenant.KeySecret)
	if err != nil {
		t.Fatal(err)
	}
	w.serve(t, "shop", tenant.APIKey{ID: "declared", Type: tenant.KeyPublishable, SHA256: declared},
		tenant.APIKey{ID: "own", Type: tenant.KeySecret, SHA256: created.SHA256})
	if m, _, ok, err := w.svc.ResolveKey(ctx, w.tenants, created.SHA256); err != nil || !ok || m.MerchantID != "shop" {
		t.Fatalf("the merchant's own key, declared in its bundle: %+v (%v, %v)", m, ok, err)
	}
	report, err := w.svc.UsageReport(ctx, w.tenants.All())
	if err != nil || len(report.Merchants["shop"].KeysInUse) != 0 {
		t.Errorf("keys in use of a merchant holding its own keys: %+v (%v)", report.Merchants["shop"], err)
	}
}

// TestCreateAPIKeyDrawsAgainPastABundlesHash: a self-service key never takes a hash a bundle holds. The random
// source is replayed so that the first key drawn is one a bundle already declares.
func TestCreateAPIKeyDrawsAgainPastABundlesHash(t *testing.T) {
	w := newKeyWorld(t)
	cryptotest.SetGlobalRandom(t, 40)
	first, err := credentials.NewAPIKey(credentials.PublishablePrefix)
	if err != nil {
		t.Fatal(err)
	}
	d, err := credentials.Describe(first)
	if err != nil {
		t.Fatal(err)
	}
	w.serve(t, "holder", tenant.APIKey{ID: "first", Type: tenant.KeyPublishable, SHA256: d.SHA256})
	shop := w.serve(t, "shop")

	cryptotest.SetGlobalRandom(t, 40)
	raw, created, err := w.svc.CreateAPIKey(t.Context(), w.tenants, shop, tenant.KeyPublishable)
	if err != nil {
		t.Fatal(err)
	}
	if raw == first || created.SHA256 == d.SHA256 {
		t.Fatal("the self-service key took the hash a bundle holds")
	}
	if m, _, ok, err := w.svc.ResolveKey(t.Context(), w.tenants, d.SHA256); err != nil || !ok || m.MerchantID != "holder" {
		t.Errorf("the bundle's key authenticates %+v (%v, %v), want its holder", m, ok, err)
	}
}

// counterValue is the value of the registered counter name.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	return family(t, reg, name).GetMetric()[0].GetCounter().GetValue()
}

// counterWith is the value of the series of the counter name whose label is value.
func counterWith(t *testing.T, reg prometheus.Gatherer, name, value string) float64 {
	t.Helper()
	for _, m := range family(t, reg, name).GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series %s of %s", value, name)
	return 0
}

// family is the metric family name of reg.
func family(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}
