package chat_test

import (
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
)

// The identity of the Merchant served under an ID against the one its data was written for. The stores' side is
// in storetest (Identities), run on SQLite and PostgreSQL.
func TestSuccessionOf(t *testing.T) {
	for _, tc := range []struct {
		name, held, uid string
		want            chat.Succession
	}{
		{"the same Merchant", "a", "a", chat.SuccessionKeep},
		{"a bundle without a UID (a file's, an older operator's)", "a", "", chat.SuccessionKeep},
		{"neither has one", "", "", chat.SuccessionKeep},
		{"data from before UIDs, or none", "", "a", chat.SuccessionAdopt},
		{"a Merchant created again under the same name", "a", "b", chat.SuccessionReplace},
	} {
		if got := chat.SuccessionOf(tc.held, tc.uid); got != tc.want {
			t.Errorf("%s: SuccessionOf(%q, %q) = %d, want %d", tc.name, tc.held, tc.uid, got, tc.want)
		}
	}
}
