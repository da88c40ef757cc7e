package storetest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// GroupMetrics reads a store's group commit metrics from its collectors: how many groups its writers took, how
// many writes they held, and how many groups were split to run their writes alone.
func GroupMetrics(t *testing.T, collectors []prometheus.Collector) (groups, writes, split int) {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		m := f.GetMetric()[0]
		switch f.GetName() {
		case "parley_runtime_store_group_writes":
			groups = int(m.GetHistogram().GetSampleCount()) //nolint:gosec // a test's counts are small
			writes = int(m.GetHistogram().GetSampleSum())
		case "parley_runtime_store_groups_split_total":
			split = int(m.GetCounter().GetValue())
		}
	}
	return groups, writes, split
}
