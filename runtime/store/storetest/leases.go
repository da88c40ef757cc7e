package storetest

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// leases: one holder at a time holds a lease until it ends; its holder renews it; another takes it once it ended.
// Leases of the same name are distinct between merchants, and a merchant's erasure deletes its leases, not
// another's nor the runtime's own.
func (h harness) leases(t *testing.T) {
	t.Run("OneHolder", h.leaseHolders)
	t.Run("Erased", h.leasesErased)
}

// claimLease claims the merchant's lease name for holder for a minute at at.
func claimLease(t *testing.T, s store.Store, merchantID, name, holder string, at time.Time) bool {
	t.Helper()
	return writeLease(t, s, merchantID, name, holder, at, time.Minute)
}

// releaseLease ends holder's lease at at, as its holder does when done.
func releaseLease(t *testing.T, s store.Store, merchantID, name, holder string, at time.Time) bool {
	t.Helper()
	return writeLease(t, s, merchantID, name, holder, at, 0)
}

func writeLease(t *testing.T, s store.Store, merchantID, name, holder string, at time.Time, ttl time.Duration) bool {
	t.Helper()
	var ok bool
	if err := s.Write(t.Context(), func(tx store.Tx) error {
		var err error
		ok, err = tx.ClaimLease(t.Context(), merchantID, name, holder, at, ttl)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func (h harness) leaseHolders(t *testing.T) {
	s := h.store(t)
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
		if got := claimLease(t, s, "", "sweep", step.holder, Base.Add(step.at)); got != step.want {
			t.Errorf("%s claiming at %s: %v, want %v", step.holder, step.at, got, step.want)
		}
	}
}

func (h harness) leasesErased(t *testing.T) {
	s := h.store(t)
	for _, merchantID := range []string{"", "m1", "m2"} {
		if !claimLease(t, s, merchantID, "embed", "a", Base) {
			t.Fatalf("a could not take merchant %q's lease: the same name is another merchant's lease", merchantID)
		}
	}
	if err := s.Write(t.Context(), func(tx store.Tx) error {
		_, err := tx.EraseMerchant(t.Context(), "m1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// a's release of the erased merchant's lease, its work ending after the erasure, writes no lease back.
	if released := releaseLease(t, s, "m1", "embed", "a", Base.Add(time.Second)); released {
		t.Error("a's release of erased merchant m1's lease wrote a lease for m1")
	}
	// While a's leases last, b takes only the erased merchant's: its row went with its data.
	for merchantID, want := range map[string]bool{"": false, "m1": true, "m2": false} {
		if got := claimLease(t, s, merchantID, "embed", "b", Base.Add(time.Second)); got != want {
			t.Errorf("after m1's erasure, b claiming merchant %q's lease: %v, want %v", merchantID, got, want)
		}
	}
	// A release ends its holder's lease only: b's release of m2's, which a holds, changes nothing; a's ends it.
	if releaseLease(t, s, "m2", "embed", "b", Base.Add(2*time.Second)) || claimLease(t, s, "m2", "embed", "b", Base.Add(2*time.Second)) {
		t.Error("b released or took m2's lease, which a holds")
	}
	if !releaseLease(t, s, "m2", "embed", "a", Base.Add(2*time.Second)) || !claimLease(t, s, "m2", "embed", "b", Base.Add(2*time.Second)) {
		t.Error("a could not release m2's lease for b to take")
	}
}
