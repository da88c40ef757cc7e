package storeutil

import "github.com/prometheus/client_golang/prometheus"

// GroupMetrics tell how well a store's group commits group: how many writes wait for a writer, how many each group
// took, and how often one write's failure made the others of its group run again alone.
type GroupMetrics struct {
	waiting prometheus.GaugeFunc
	writes  prometheus.Histogram
	split   prometheus.Counter
}

// NewGroupMetrics returns a store's group commit metrics, registered nowhere yet (see Collectors); waiting reads
// how many writes wait in the store's queue.
func NewGroupMetrics(waiting func() int) GroupMetrics {
	return GroupMetrics{
		waiting: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "parley_runtime_store_writes_waiting",
			Help: "Writes waiting for a store's writer to take them: a queue that stays long means the writers cannot keep up.",
		}, func() float64 { return float64(waiting()) }),
		writes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_runtime_store_group_writes",
			Help:    "Writes a store's writer took together into one transaction (group commit); 1 when it found no other waiting.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		split: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_store_groups_split_total",
			Help: "Groups of writes rolled back because one of them failed, whose writes then ran each alone.",
		}),
	}
}

// Grouped records a group of n writes taken together.
func (m GroupMetrics) Grouped(n int) { m.writes.Observe(float64(n)) }

// Split records a group rolled back to run its writes alone.
func (m GroupMetrics) Split() { m.split.Inc() }

// Collectors are the metrics, for a registry.
func (m GroupMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.waiting, m.writes, m.split}
}
