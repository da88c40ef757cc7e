package storetest

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// leases: one holder at a time holds a lease until it ends; its holder renews it; another takes it once it ended.
func (h harness) leases(t *testing.T) {
	s := h.store(t)
	claim := func(holder string, at time.Time) bool {
		t.Helper()
		var ok bool
		if err := s.Write(t.Context(), func(tx store.Tx) error {
			var err error
			ok, err = tx.ClaimLease(t.Context(), "sweep", holder, at, time.Minute)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, step := range []struct {
		holder string
		at     time.Duration
		want   bool
	}{
		{"a", 0, true},
		{"b", 30 * time.Second, false},
		{"a", 50 * time.Second, true}, // renewed until 1m50s
		{"b", 90 * time.Second, false},
		{"b", 110 * time.Second, true},
		{"a", 111 * time.Second, false},
	} {
		if got := claim(step.holder, Base.Add(step.at)); got != step.want {
			t.Errorf("%s claiming at %s: %v, want %v", step.holder, step.at, got, step.want)
		}
	}
}
