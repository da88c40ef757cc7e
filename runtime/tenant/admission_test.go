package tenant

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// admissions records the bundles an Admission was asked about, and fails while failing is set.
type admissions struct {
	mu      sync.Mutex
	asked   []string // merchant/uid
	failing bool
}

func (a *admissions) admit(b *Bundle) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, b.MerchantID+"/"+b.UID)
	if a.failing {
		return errors.New("the store does not answer")
	}
	return nil
}

func (a *admissions) set(failing bool) {
	a.mu.Lock()
	a.failing = failing
	a.mu.Unlock()
}

func (a *admissions) took() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := strings.Join(a.asked, " ")
	a.asked = nil
	return out
}

func uidDoc(t *testing.T, id, uid, hash string) []byte {
	t.Helper()
	b := validBundle()
	b.MerchantID, b.UID, b.Source, b.Webhooks = id, uid, id+"/shop", nil
	b.APIKeys = []APIKey{{ID: id + "-k", Type: KeyPublishable, SHA256: hash}}
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAdmission: a merchant is admitted before it is first served under a UID, and only then; a bundle whose
// admission fails is held back, with the earlier bundle of its source when that was another Merchant's (its keys
// must not reach the new Merchant's data), and served once a retry admits it; a bundle refused for its ID asks
// nothing.
func TestAdmission(t *testing.T) {
	r := newTestRegistry(t)
	var a admissions
	r.SetAdmission(a.admit)
	k1, k2 := strings.Repeat("a1", 32), strings.Repeat("b2", 32)

	if err := r.Set("s", uidDoc(t, "shop", "u1", k1)); err != nil {
		t.Fatal(err)
	}
	if err := r.Set("s", uidDoc(t, "shop", "u1", k2)); err != nil { // an update of the same Merchant
		t.Fatal(err)
	}
	if got := a.took(); got != "shop/u1" {
		t.Errorf("asked about %q, want shop/u1 once", got)
	}
	if err := r.Set("rival", uidDoc(t, "shop", "u9", strings.Repeat("c3", 32))); !errors.Is(err, ErrMerchantIDTaken) {
		t.Errorf("a rival's bundle: %v", err)
	}
	if got := a.took(); got != "" {
		t.Errorf("a bundle refused for its ID was admitted: %q", got)
	}

	a.set(true)
	if err := r.Set("s", uidDoc(t, "shop", "u2", k2)); err == nil {
		t.Fatal("a bundle whose admission failed was taken")
	}
	if _, ok := r.Merchant("shop"); ok || keyOwner(r, k2) != "" || r.Held() != 1 {
		t.Errorf("while the new Merchant is not admitted, the old one's bundle is served (%v) or its key works (%q); held %d",
			ok, keyOwner(r, k2), r.Held())
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.RetryHeld(ctx, 5*time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if _, ok := r.Merchant("shop"); ok {
		t.Fatal("served while the admission fails")
	}
	a.set(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, ok := r.Merchant("shop"); ok && b.UID == "u2" && keyOwner(r, k2) == "shop" && r.Held() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the held bundle was not served once its admission succeeded")
		}
		time.Sleep(5 * time.Millisecond)
	}

	a.set(true)
	if err := r.Set("s", uidDoc(t, "shop", "u3", k2)); err == nil {
		t.Fatal("a bundle whose admission failed was taken")
	}
	r.Delete("s")
	if r.Held() != 0 {
		t.Error("a deleted source's bundle is still held")
	}
	if testutil.ToFloat64(r.metrics.held) < 2 {
		t.Errorf("held bundles counted %v, want at least 2", testutil.ToFloat64(r.metrics.held))
	}
}
