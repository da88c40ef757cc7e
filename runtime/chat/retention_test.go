package chat_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Two replicas' sweepers: the one holding the lease deletes a merchant's conversations past its retention and
// counts them in its metric and log line, which name no content; the other does nothing until the lease ends.
func TestSweeperDeletesPastRetentionOnOneReplica(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	clock := now.Add(-100 * 24 * time.Hour)
	svc, err := chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{}, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	m, keeper := merchant(0), merchant(0)
	keeper.MerchantID = "keeper"
	m.Retention = tenant.Retention{ConversationsDays: 90}
	const secret = "old.secret@example.com"
	for _, b := range []*tenant.Bundle{m, keeper} {
		if _, err := svc.Answer(ctx, b, chat.Question{Message: "Write to " + secret, ConversationID: "old"}); err != nil {
			t.Fatal(err)
		}
	}
	clock = now.Add(-24 * time.Hour)
	if _, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?", ConversationID: "new"}); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	sweeper := func(holder string, reg prometheus.Registerer) *chat.Sweeper {
		s, err := chat.NewSweeper(chat.SweeperConfig{Store: st, Merchants: func() []*tenant.Bundle { return []*tenant.Bundle{m, keeper} },
			Holder: holder, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Registry: reg, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a, b := sweeper("a", regA), sweeper("b", regB)
	if err := b.SweepOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// Another old conversation: a, while b holds the lease (an interval, an hour), leaves it.
	clock = now.Add(-100 * 24 * time.Hour)
	if _, err := svc.Answer(ctx, m, chat.Question{Message: "Hello", ConversationID: "old2"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SweepOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.GetConversation(ctx, m.MerchantID, "old2"); err != nil {
		t.Errorf("a swept while b held the lease: %v", err)
	}
	if got := testutil.ToFloat64(mustCounter(t, regB, "conversations")); got != 1 {
		t.Errorf("b deleted %v conversations, want 1", got)
	}
	if _, _, err := st.GetConversation(ctx, m.MerchantID, "old"); err == nil {
		t.Error("the conversation past the retention is kept")
	}
	// Once b's lease has ended, a takes it and sweeps.
	now = now.Add(time.Hour)
	if err := a.SweepOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(mustCounter(t, regA, "conversations")); got != 1 {
		t.Errorf("a deleted %v conversations once the lease was its, want 1", got)
	}
	for _, c := range []struct{ merchant, id string }{{m.MerchantID, "new"}, {keeper.MerchantID, "old"}} {
		if _, _, err := st.GetConversation(ctx, c.merchant, c.id); err != nil {
			t.Errorf("%s's %s: %v, want kept", c.merchant, c.id, err)
		}
	}
	leads, _, err := st.ListLeads(ctx, m.MerchantID, store.LeadFilter{})
	if err != nil || len(leads) != 1 {
		t.Errorf("leads: %v, %v; want the old conversation's, which has no retention", leads, err)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"deleted records past their retention"`) || !strings.Contains(out, `"conversations":1`) || strings.Contains(out, secret) {
		t.Errorf("the sweep's log line:\n%s", out)
	}
}

func mustCounter(t *testing.T, reg *prometheus.Registry, kind string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if f.GetName() == "parley_runtime_retention_deleted_total" && l.GetValue() == kind {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"},
						func() float64 { return metric.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("no parley_runtime_retention_deleted_total{kind=%q}", kind)
	return nil
}
