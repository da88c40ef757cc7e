package controllers

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// merchantMetrics exports one series per Merchant, removed when the Merchant goes, so that
// `count by (plan) (parley_merchant_ready == 1)` answers "how many ready merchants per plan".
type merchantMetrics struct {
	ready *prometheus.GaugeVec
	// plans remembers the plan label of each Merchant's series, so that a series is removed by its exact labels:
	// a search by partial labels walks every series, 10,000 of them at each reconcile.
	mu    sync.Mutex
	plans map[types.NamespacedName]string
}

func newMerchantMetrics(reg prometheus.Registerer) (*merchantMetrics, error) {
	m := &merchantMetrics{ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "parley_merchant_ready",
		Help: "1 when the Merchant's tenant bundle is published, 0 otherwise, labelled by the Merchant's plan.",
	}, []string{"namespace", "merchant", "plan"}), plans: map[types.NamespacedName]string{}}
	if err := reg.Register(m.ready); err != nil {
		// A manager built again in the same process (tests, restarts) shares the series already registered.
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return nil, err
		}
		m.ready = already.ExistingCollector.(*prometheus.GaugeVec)
		// Series of a previous manager are unknown to this one: start from none, as a new process does.
		m.ready.Reset()
	}
	return m, nil
}

func (m *merchantMetrics) set(namespace, name, plan string, ready bool) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	m.mu.Lock()
	defer m.mu.Unlock()
	// A plan change must not leave the old plan's series behind.
	if old, ok := m.plans[key]; ok && old != plan {
		m.ready.DeleteLabelValues(namespace, name, old)
	}
	m.plans[key] = plan
	v := 0.0
	if ready {
		v = 1
	}
	m.ready.WithLabelValues(namespace, name, plan).Set(v)
}

func (m *merchantMetrics) forget(namespace, name string) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if plan, ok := m.plans[key]; ok {
		m.ready.DeleteLabelValues(namespace, name, plan)
		delete(m.plans, key)
	}
}
