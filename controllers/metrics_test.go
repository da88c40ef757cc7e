package controllers

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// One series per Merchant: a plan change replaces it, forgetting removes it, other Merchants' stay.
func TestMerchantMetricsSeries(t *testing.T) {
	m, err := newMerchantMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m.set("a", "shop", "basic", true)
	m.set("b", "shop", "basic", false)
	m.set("a", "shop", "pro", true)
	if n := testutil.CollectAndCount(m.ready); n != 2 {
		t.Errorf("%d series after a plan change, want 2", n)
	}
	if v := testutil.ToFloat64(m.ready.WithLabelValues("a", "shop", "pro")); v != 1 {
		t.Errorf("a/shop on pro = %v, want 1", v)
	}
	m.forget("a", "shop")
	m.forget("a", "shop")
	if n := testutil.CollectAndCount(m.ready); n != 1 {
		t.Errorf("%d series after forgetting a/shop, want 1", n)
	}
	if v := testutil.ToFloat64(m.ready.WithLabelValues("b", "shop", "basic")); v != 0 {
		t.Errorf("b/shop on basic = %v, want 0", v)
	}
}
