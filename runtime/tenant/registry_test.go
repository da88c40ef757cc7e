package tenant

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parley-dev/parley/internal/contract"
)

func newTestRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := NewRegistry(slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bundleDoc(t *testing.T, id string, title string, hashes ...string) []byte {
	t.Helper()
	b := validBundle()
	b.MerchantID, b.Source, b.Widget.Title, b.Webhooks = id, id+"/shop", title, nil
	b.APIKeys = nil
	for i, h := range hashes {
		b.APIKeys = append(b.APIKeys, APIKey{ID: id + "-k" + string(rune('0'+i)), Type: KeyPublishable, SHA256: h})
	}
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// keyOwner returns the merchant ID the registry sends a key hash to, or "" when none.
func keyOwner(r *Registry, hash string) string {
	b, _, ok := r.Key(hash, time.Now())
	if !ok {
		return ""
	}
	return b.MerchantID
}

// TestKeyHashCannotBeTakenOver plays the intruder: a second bundle carrying the victim's publishable key hash must
// not take the key, before or after its own updates, and deleting it must leave the victim's key working.
func TestKeyHashCannotBeTakenOver(t *testing.T) {
	r := newTestRegistry(t)
	victimKey, intruderKey := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	if err := r.Set("victim", bundleDoc(t, "victim", "Victim", victimKey)); err != nil {
		t.Fatal(err)
	}
	// The intruder's bundle is served with its own key, but the copied hash stays the victim's.
	if err := r.Set("intruder", bundleDoc(t, "intruder", "Intruder", intruderKey, victimKey)); err != nil {
		t.Fatalf("the intruder's own bundle must still be served: %v", err)
	}
	if got := keyOwner(r, victimKey); got != "victim" {
		t.Fatalf("the victim's key is sent to %q", got)
	}
	if got := keyOwner(r, intruderKey); got != "intruder" {
		t.Errorf("the intruder's own key is sent to %q", got)
	}
	if got := testutil.ToFloat64(r.metrics.keyConflicts); got != 1 {
		t.Errorf("key conflicts counted: %v, want 1", got)
	}
	b, _ := r.Merchant("intruder")
	for _, k := range b.APIKeys {
		if k.SHA256 == victimKey {
			t.Error("the intruder's served bundle lists the victim's key")
		}
	}

	// The victim updates its bundle: it keeps its key. The intruder updates again: still no takeover.
	if err := r.Set("victim", bundleDoc(t, "victim", "Victim 2", victimKey)); err != nil {
		t.Fatal(err)
	}
	if err := r.Set("intruder", bundleDoc(t, "intruder", "Intruder 2", victimKey)); err != nil {
		t.Fatal(err)
	}
	if got := keyOwner(r, victimKey); got != "victim" {
		t.Fatalf("after updates the victim's key is sent to %q", got)
	}

	// Deleting the intruder's bundle does not break the victim's key.
	r.Delete("intruder")
	if got := keyOwner(r, victimKey); got != "victim" {
		t.Fatalf("after the intruder left the victim's key is sent to %q", got)
	}
}

// TestKeyHashIsFreedWithItsOwner checks that a key hash its owner has dropped can be used by another merchant
// on that merchant's next bundle.
func TestKeyHashIsFreedWithItsOwner(t *testing.T) {
	r := newTestRegistry(t)
	key := strings.Repeat("c3", 32)
	if err := r.Set("first", bundleDoc(t, "first", "First", key)); err != nil {
		t.Fatal(err)
	}
	r.Delete("first")
	if err := r.Set("second", bundleDoc(t, "second", "Second", key)); err != nil {
		t.Fatal(err)
	}
	if got := keyOwner(r, key); got != "second" {
		t.Errorf("a freed key is sent to %q", got)
	}
}

func TestOwnedBy(t *testing.T) {
	r := newTestRegistry(t)
	b := validBundle()
	b.Owners = []Owner{{Email: "support@alpha.example"}, {Subject: "user-1"}}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Set("acme", data); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		subject, email  string
		verified, owned bool
	}{
		{"verified email", "x", "support@alpha.example", true, true},
		{"ASCII case differs", "x", "Support@ALPHA.example", true, true},
		{"unverified email", "x", "support@alpha.example", false, false},
		{"long s folds only in Unicode", "x", "\u017fupport@alpha.example", true, false},
		{"subject", "user-1", "", false, true},
		{"subject differs in case", "USER-1", "", false, false},
		{"nobody", "user-2", "other@alpha.example", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := len(r.OwnedBy(c.subject, c.email, c.verified)) == 1; got != c.owned {
				t.Errorf("owned = %v, want %v", got, c.owned)
			}
		})
	}
}

// TestRetirement: a retired bundle is no longer served and its keys are revoked at once; the retirement is
// recorded until the bundle is served again or deleted.
func TestRetirement(t *testing.T) {
	r := newTestRegistry(t)
	key := strings.Repeat("d4", 32)
	if err := r.Set("parley-tenant-acme", bundleDoc(t, "acme", "Acme", key)); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r.Retire("parley-tenant-acme", Retirement{MerchantID: "acme", At: at})
	if _, ok := r.Merchant("acme"); ok {
		t.Error("a retired merchant is still served")
	}
	if owner := keyOwner(r, key); owner != "" {
		t.Errorf("a retired merchant's key still leads to %q", owner)
	}
	if got := r.Retirements(); len(got) != 1 || got[0] != (Retirement{MerchantID: "acme", At: at}) {
		t.Errorf("Retirements() = %+v", got)
	}
	if err := r.Set("parley-tenant-acme", bundleDoc(t, "acme", "Acme", key)); err != nil {
		t.Fatal(err)
	}
	if got := r.Retirements(); len(got) != 0 {
		t.Errorf("a merchant served again is still retired: %+v", got)
	}
	r.Retire("parley-tenant-acme", Retirement{MerchantID: "acme", At: at})
	r.Delete("parley-tenant-acme")
	if got := r.Retirements(); len(got) != 0 {
		t.Errorf("the retirement of a deleted bundle is kept: %+v", got)
	}
}

func TestRetirementOf(t *testing.T) {
	labels := map[string]string{contract.LabelMerchantID: "acme"}
	at := map[string]string{contract.AnnotationRetiredAt: "2026-03-01T10:00:00Z"}
	for _, tc := range []struct {
		name        string
		labels, ann map[string]string
		want        Retirement
		wantErr     string
	}{
		{"valid", labels, at, Retirement{MerchantID: "acme", At: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}, ""},
		{"no merchant ID", nil, at, Retirement{}, "not a DNS label"},
		{"a merchant ID that is no DNS label", map[string]string{contract.LabelMerchantID: "Acme_Shop"}, at, Retirement{}, "not a DNS label"},
		{"no time", labels, nil, Retirement{}, contract.AnnotationRetiredAt},
		{"a time that does not parse", labels, map[string]string{contract.AnnotationRetiredAt: "yesterday"}, Retirement{}, contract.AnnotationRetiredAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RetirementOf(tc.labels, tc.ann)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("RetirementOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
