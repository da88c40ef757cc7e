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
	record("user-a", Base)
	record("user-a", Base.Add(time.Hour))
	record("user-a", Base.Add(time.Minute)) // a sign-out that arrives late
	record("user-b", Base)
	for subject, want := range map[string]time.Time{"user-a": Base.Add(time.Hour), "user-b": Base, "user-c": {}} {
		got, err := s.SignedOutAt(ctx, subject)
		if err != nil || !got.Equal(want) {
			t.Errorf("SignedOutAt(%s) = %v, %v; want %v", subject, got, err, want)
		}
	}
}

// signIns redeems each dashboard sign-in once: a second redemption of the same state is refused until the
// sign-in expires, other states are not affected, and an expired record is forgotten.
func (h harness) signIns(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	redeem := func(state string, expires, now time.Time) bool {
		t.Helper()
		var fresh bool
		err := s.Write(ctx, func(tx store.Tx) (err error) {
			fresh, err = tx.RedeemSignIn(ctx, state, expires, now)
			return err
		})
		if err != nil {
			t.Fatalf("RedeemSignIn(%s): %v", state, err)
		}
		return fresh
	}
	expires := Base.Add(10 * time.Minute)
	for _, tt := range []struct {
		state string
		now   time.Time
		want  bool
	}{
		{"state-a", Base, true},
		{"state-a", Base.Add(time.Minute), false},
		{"state-b", Base.Add(time.Minute), true},
		{"state-a", expires.Add(-time.Millisecond), false},
		// Past its expiry the record is forgotten; the sign-in's own cookie has expired by then.
		{"state-a", expires, true},
	} {
		if got := redeem(tt.state, expires, tt.now); got != tt.want {
			t.Errorf("RedeemSignIn(%s) at %v = %v, want %v", tt.state, tt.now.Sub(Base), got, tt.want)
		}
	}
}
