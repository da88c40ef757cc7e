package storetest

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// signOuts records dashboard users' sign-outs: the latest is kept, an earlier one recorded after it does not
// move it back, and a user who never signed out has none.
func (h harness) signOuts(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	record := func(subject string, at time.Time) {
		t.Helper()
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.RecordSignOut(ctx, subject, at) }); err != nil {
			t.Fatalf("RecordSignOut(%s): %v", subject, err)
		}
	}
	record("user-a", base)
	record("user-a", base.Add(time.Hour))
	record("user-a", base.Add(time.Minute)) // a sign-out that arrives late
	record("user-b", base)
	for subject, want := range map[string]time.Time{"user-a": base.Add(time.Hour), "user-b": base, "user-c": {}} {
		got, err := s.SignedOutAt(ctx, subject)
		if err != nil || !got.Equal(want) {
			t.Errorf("SignedOutAt(%s) = %v, %v; want %v", subject, got, err, want)
		}
	}
}
