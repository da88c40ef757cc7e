package storeutil

import (
	"errors"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
)

func TestNormalizeQuestion(t *testing.T) {
	for in, want := range map[string]string{
		"What's the price?":           "whats the price",
		"  Où   est\tla boutique ?! ": "où est la boutique",
		"¿Qué?":                       "qué",
		"?!…":                         "",
		"100 € / month":               "100 € month",
	} {
		if got := NormalizeQuestion(in); got != want {
			t.Errorf("NormalizeQuestion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCursor(t *testing.T) {
	c := Cursor{Kind: KindKnowledge, MerchantID: "m1", CreatedAt: 1234, ID: "k1"}
	got, err := DecodeCursor(EncodeCursor(c), KindKnowledge, "m1")
	if err != nil || got != c {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, c)
	}
	for name, tc := range map[string]struct{ s, kind, merchant string }{
		"other kind":     {EncodeCursor(c), KindConversations, "m1"},
		"other merchant": {EncodeCursor(c), KindKnowledge, "m2"},
		"no ID":          {EncodeCursor(Cursor{Kind: KindKnowledge, MerchantID: "m1"}), KindKnowledge, "m1"},
		"not base64":     {"***", KindKnowledge, "m1"},
	} {
		if _, err := DecodeCursor(tc.s, tc.kind, tc.merchant); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: error %v, want ErrInvalidCursor", name, err)
		}
	}
}

func TestPageSize(t *testing.T) {
	for limit, want := range map[int]int{-1: 20, 0: 20, 1: 1, 100: 100, 101: 100} {
		if got := PageSize(limit); got != want {
			t.Errorf("PageSize(%d) = %d, want %d", limit, got, want)
		}
	}
}
