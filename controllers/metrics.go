package controllers

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// merchantMetrics exports one series per Merchant, removed when the Merchant goes, so that
// `count by (plan) (parley_merchant_ready == 1)` answers "how many ready merchants per plan".
type merchantMetrics struct {
	ready *prometheus.GaugeVec
}

func newMerchantMetrics(reg prometheus.Registerer) (*merchantMetrics, error) {
	m := &merchantMetrics{ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "parley_merchant_ready",
		Help: "1 when the Merchant's tenant bundle is published, 0 otherwise, labelled by the Merchant's plan.",
	}, []string{"namespace", "merchant", "plan"})}
	if err := reg.Register(m.ready); err != nil {
		// A manager built again in the same process (tests, restarts) shares the series already registered.
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return nil, err
		}
		m.ready = already.ExistingCollector.(*prometheus.GaugeVec)
	}
	return m, nil
}

func (m *merchantMetrics) set(namespace, name, plan string, ready bool) {
	// A plan change must not leave the old plan's series behind.
	m.forget(namespace, name)
	v := 0.0
	if ready {
		v = 1
	}
	m.ready.WithLabelValues(namespace, name, plan).Set(v)
}

func (m *merchantMetrics) forget(namespace, name string) {
	m.ready.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "merchant": name})
}
