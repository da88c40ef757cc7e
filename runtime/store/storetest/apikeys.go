package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// apiKeys: self-service keys are found by hash, revoked ones too (a revoked key's hash stays its merchant's),
// alone or many at once, listed per merchant, and one merchant cannot revoke another's.
func (h harness) apiKeys(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	write := func(fn func(store.Tx) error) error { return s.Write(ctx, fn) }
	a1 := store.APIKey{MerchantID: "alpha", ID: "k1", Type: "secret", SHA256: HashOf("a1"), CreatedAt: Base}
	a2 := store.APIKey{MerchantID: "alpha", ID: "k2", Type: "publishable", SHA256: HashOf("a2"), CreatedAt: Base.Add(time.Minute)}
	b1 := store.APIKey{MerchantID: "beta", ID: "k1", Type: "secret", SHA256: HashOf("b1"), CreatedAt: Base}
	for _, k := range []store.APIKey{a1, a2, b1} {
		if err := write(func(tx store.Tx) error { return tx.InsertAPIKey(ctx, k) }); err != nil {
			t.Fatalf("InsertAPIKey %s/%s: %v", k.MerchantID, k.ID, err)
		}
	}
	dup := a1
	dup.ID = "k3"
	if err := write(func(tx store.Tx) error { return tx.InsertAPIKey(ctx, dup) }); err == nil {
		t.Error("a second key with the same hash was stored")
	}
	got, err := s.APIKeyByHash(ctx, a1.SHA256)
	if err != nil || got != a1 {
		t.Fatalf("APIKeyByHash: %+v %v, want %+v", got, err, a1)
	}
	list, err := s.ListAPIKeys(ctx, "alpha")
	if err != nil || len(list) != 2 || list[0].ID != "k2" || list[1].ID != "k1" {
		t.Fatalf("ListAPIKeys: %+v %v", list, err)
	}

	used := Base.Add(time.Hour)
	if err := write(func(tx store.Tx) error { return tx.TouchAPIKey(ctx, "alpha", "k1", used) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.APIKeyByHash(ctx, a1.SHA256); !got.LastUsedAt.Equal(used) {
		t.Errorf("LastUsedAt %v, want %v", got.LastUsedAt, used)
	}

	revoke := func(merchant, id string) error {
		return write(func(tx store.Tx) error { return tx.RevokeAPIKey(ctx, merchant, id, used) })
	}
	if err := revoke("beta", "k2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("beta revoking alpha's k2: %v", err)
	}
	if err := revoke("alpha", "k1"); err != nil {
		t.Fatalf("revoking: %v", err)
	}
	if err := revoke("alpha", "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	if got, err := s.APIKeyByHash(ctx, a1.SHA256); err != nil || got.MerchantID != "alpha" || !got.RevokedAt.Equal(used) {
		t.Errorf("a revoked key by its hash: %+v %v, want alpha's, revoked at %v", got, err, used)
	}
	if got, err := s.APIKeyByHash(ctx, b1.SHA256); err != nil || got.MerchantID != "beta" {
		t.Errorf("beta's k1 after alpha's k1 was revoked: %+v %v", got, err)
	}
	list, _ = s.ListAPIKeys(ctx, "alpha")
	if len(list) != 2 || !list[1].RevokedAt.Equal(used) || !list[0].RevokedAt.IsZero() {
		t.Errorf("ListAPIKeys after revoking: %+v", list)
	}
	if _, err := s.APIKeyByHash(ctx, HashOf("unknown")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown hash: %v", err)
	}

	many, err := s.APIKeysByHash(ctx, []string{b1.SHA256, HashOf("unknown"), a1.SHA256, a1.SHA256})
	if err != nil {
		t.Fatalf("APIKeysByHash: %v", err)
	}
	byHash := map[string]store.APIKey{}
	for _, k := range many {
		byHash[k.SHA256] = k
	}
	if len(many) != 2 || byHash[b1.SHA256].MerchantID != "beta" || !byHash[a1.SHA256].RevokedAt.Equal(used) {
		t.Errorf("APIKeysByHash: %+v, want beta's k1 and alpha's revoked k1", many)
	}
	if none, err := s.APIKeysByHash(ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("APIKeysByHash of no hash: %+v %v", none, err)
	}
	// A hash is matched whole, never as a pattern.
	if none, err := s.APIKeysByHash(ctx, []string{"%", a1.SHA256[:10]}); err != nil || len(none) != 0 {
		t.Errorf("APIKeysByHash of partial hashes: %+v %v", none, err)
	}
}

// HashOf returns a 64-character hex string standing for a hash.
func HashOf(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 64)
	for i := range out {
		out[i] = digits[(int(s[i%len(s)])+i)%16]
	}
	return string(out)
}
