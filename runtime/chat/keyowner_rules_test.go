package chat

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

func TestDecideKey(t *testing.T) {
	live := store.APIKey{MerchantID: "victim", ID: "k1"}
	revoked := live
	revoked.RevokedAt = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		stored         store.APIKey
		found          bool
		bundleMerchant string
		inBundle       bool
		want           keySource
		wantStolen     bool
	}{
		{name: "no record", want: keyUnknown},
		{name: "a bundle key alone", bundleMerchant: "victim", inBundle: true, want: keyFromBundle},
		{name: "a self-service key alone", stored: live, found: true, want: keyFromStore},
		{name: "a revoked self-service key", stored: revoked, found: true, want: keyRevoked},
		{name: "another merchant's bundle copies a self-service key", stored: live, found: true,
			bundleMerchant: "intruder", inBundle: true, want: keyFromStore, wantStolen: true},
		{name: "another merchant's bundle copies a revoked self-service key", stored: revoked, found: true,
			bundleMerchant: "intruder", inBundle: true, want: keyRevoked, wantStolen: true},
		{name: "the merchant's own bundle declares its self-service key", stored: live, found: true,
			bundleMerchant: "victim", inBundle: true, want: keyFromBundle},
		{name: "the merchant's own bundle declares its revoked self-service key", stored: revoked, found: true,
			bundleMerchant: "victim", inBundle: true, want: keyRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, stolen := decideKey(tc.stored, tc.found, tc.bundleMerchant, tc.inBundle)
			if got != tc.want || stolen != tc.wantStolen {
				t.Errorf("decideKey = %v, stolen %v; want %v, stolen %v", got, stolen, tc.want, tc.wantStolen)
			}
		})
	}
}
