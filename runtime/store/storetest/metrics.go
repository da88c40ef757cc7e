package storetest

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// GroupMetrics reads a store's group commit metrics from its collectors: how many groups its writers took, how
// many writes they held, and how many groups were split to run their writes alone.
func GroupMetrics(t *testing.T, collectors []prometheus.Collector) (groups, writes, split int) {
	t.Helper()
	for name, m := range gather(t, collectors) {
		switch name {
		case "parley_runtime_store_group_writes":
			groups = int(m.GetHistogram().GetSampleCount()) //nolint:gosec // a test's counts are small
			writes = int(m.GetHistogram().GetSampleSum())
		case "parley_runtime_store_groups_split_total":
			split = int(m.GetCounter().GetValue())
		}
	}
	return groups, writes, split
}

// AwaitWaitingWrites returns once n writes wait for a store's writers, as its collectors' gauge
// parley_runtime_store_writes_waiting tells, so that a test can release busy writers knowing which writes queued
// behind them; it fails the test after 10 seconds.
func AwaitWaitingWrites(t *testing.T, collectors []prometheus.Collector, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		waiting := int(gather(t, collectors)["parley_runtime_store_writes_waiting"].GetGauge().GetValue())
		if waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes wait for the writers after 10 s, want %d", waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// gather is the one metric of each of collectors' families, by name.
func gather(t *testing.T, collectors []prometheus.Collector) map[string]*dto.Metric {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	metrics := make(map[string]*dto.Metric, len(families))
	for _, f := range families {
		metrics[f.GetName()] = f.GetMetric()[0]
	}
	return metrics
}
