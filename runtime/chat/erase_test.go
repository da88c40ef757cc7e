package chat_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestEraserErasesAfterTheRetention: a retired merchant's data stays through the retention, is erased once it
// has passed (with a metric and a log line naming the merchant), and another merchant's data stays. A merchant
// served again before the retention ends keeps its data.
func TestEraserErasesAfterTheRetention(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	tenants, err := tenant.NewRegistry(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	retired := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := retired
	reg := prometheus.NewRegistry()
	eraser, err := chat.NewEraser(chat.EraserConfig{Store: st, Tenants: tenants, Retention: 24 * time.Hour, Logger: log,
		Registry: reg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gone", "kept", "back"} {
		if _, err := chat.RecordExchange(ctx, st, store.Exchange{MerchantID: id, ConversationID: "c1", VisitorID: "v",
			Question: store.Message{ID: "q", Role: store.RoleVisitor, Text: "hello", CreatedAt: retired},
			Answer:   store.Message{ID: "a", Role: store.RoleAssistant, Text: "hi", CreatedAt: retired}}); err != nil {
			t.Fatal(err)
		}
	}
	tenants.Retire("parley-tenant-gone", tenant.Retirement{MerchantID: "gone", At: retired})
	tenants.Retire("parley-tenant-back", tenant.Retirement{MerchantID: "back", At: retired})
	has := func(id string) bool {
		t.Helper()
		ok, err := st.ConversationExists(ctx, id, "c1")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	now = retired.Add(23 * time.Hour)
	if err := eraser.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if !has("gone") || !has("back") {
		t.Fatal("data erased within the retention")
	}
	// The merchant is created again: its bundle is served from another source (files, say) before the end.
	bundletest.Publish(t, tenants, "back.json", &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "back", DisplayName: "Back",
		Plan: tenant.Plan{Name: "free", RequestsPerSecond: 1, Burst: 1}})

	now = retired.Add(24 * time.Hour)
	if err := eraser.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if has("gone") {
		t.Error("the retired merchant's data was not erased after the retention")
	}
	if !has("kept") {
		t.Error("another merchant's data was erased")
	}
	if !has("back") {
		t.Error("a merchant served again lost its data")
	}
	if got := metricValue(t, reg, "parley_runtime_merchants_erased_total"); got != 1 {
		t.Errorf("merchants erased = %v, want 1", got)
	}
	if got := metricValue(t, reg, "parley_runtime_erased_rows_total"); got < 4 {
		t.Errorf("rows erased = %v, want at least 4 (conversation, 2 messages, month)", got)
	}
	var line struct {
		Msg, Merchant string
		Rows          int
	}
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "erased a deleted merchant") {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line.Merchant != "gone" || line.Rows < 4 {
		t.Errorf("log line %+v, want the merchant and its rows:\n%s", line, logs.String())
	}

	// Erased once: later sweeps leave the retirement, which still reserves the ID, alone.
	if err := eraser.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := metricValue(t, reg, "parley_runtime_merchants_erased_total"); got != 1 {
		t.Errorf("merchants erased after another sweep = %v, want 1", got)
	}
}

// metricValue returns the value of a counter the eraser registered.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s is not registered", name)
	return 0
}
