package chat

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSeedItems(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	item := KnowledgeInput{Title: "Returns", Content: "Within 60 days."}
	for _, tc := range []struct {
		name  string
		seeds []Seed
		want  []string // IDs; nil for ErrInvalidSeed
	}{
		{"none", nil, []string{}},
		{"in order", []Seed{{"returns", item}, {"shipping-us", item}, {"z9", item}}, []string{"kn_returns", "kn_shipping-us", "kn_z9"}},
		{"an empty key", []Seed{{"", item}}, nil},
		{"a key not a slug", []Seed{{"Returns", item}}, nil},
		{"a key with a slash", []Seed{{"a/b", item}}, nil},
		{"the longest key", []Seed{{strings.Repeat("k", 61), item}}, []string{"kn_" + strings.Repeat("k", 61)}},
		{"a key too long for the API's IDs", []Seed{{strings.Repeat("k", 62), item}}, nil},
		{"a key named twice", []Seed{{"returns", item}, {"returns", item}}, nil},
		{"an item without content", []Seed{{"returns", KnowledgeInput{Title: "Returns"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := seedItems(tc.seeds, "m1", now)
			if tc.want == nil {
				if !errors.Is(err, ErrInvalidSeed) {
					t.Fatalf("seedItems = %v, %v; want ErrInvalidSeed", items, err)
				}
				return
			}
			if err != nil || len(items) != len(tc.want) {
				t.Fatalf("seedItems = %v, %v; want %v", items, err, tc.want)
			}
			for i, k := range items {
				// Newest first lists them in the seeds' order.
				created := now.Truncate(time.Millisecond).Add(-time.Duration(i) * time.Millisecond)
				if k.ID != tc.want[i] || k.MerchantID != "m1" || !k.CreatedAt.Equal(created) || !k.UpdatedAt.Equal(created) || k.Title != "Returns" {
					t.Errorf("item %d = %+v, want %s created at %s", i, k, tc.want[i], created)
				}
			}
		})
	}
}
