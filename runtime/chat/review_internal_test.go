package chat

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

func TestListQuestion(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	item := store.Knowledge{ID: "kn_1", MerchantID: "m1", Title: "Vouchers", Content: "At checkout.",
		Questions: []string{"Can I pay by voucher?"}, File: "faq.csv", CreatedAt: at, UpdatedAt: at, UseCount: 3}
	full := item
	full.Questions = nil
	for i := range MaxQuestions {
		full.Questions = append(full.Questions, fmt.Sprintf("q%d", i))
	}
	for _, tc := range []struct {
		name      string
		item      store.Knowledge
		list      string
		want      []string // the item's questions after
		changed   bool
		wantError bool
	}{
		{"nothing to list", item, "  ", item.Questions, false, false},
		{"a new question, white space folded", item, " Do you take\tgift cards? ", []string{"Can I pay by voucher?", "Do you take gift cards?"}, true, false},
		{"a question listed already, in another case", item, "can i PAY by voucher?", item.Questions, false, false},
		{"no item", store.Knowledge{}, "Do you take gift cards?", nil, false, true},
		{"an item with all its questions", full, "Do you take gift cards?", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := listQuestion(tc.item, tc.list)
			if tc.wantError {
				if !errors.Is(err, ErrInvalidFix) {
					t.Fatalf("listQuestion = %+v, %v; want ErrInvalidFix", got, err)
				}
				return
			}
			if err != nil || changed != tc.changed || !slices.Equal(got.Questions, tc.want) {
				t.Fatalf("listQuestion = %+v, %v, %v; want questions %q, changed %v", got, changed, err, tc.want, tc.changed)
			}
			// Everything but the questions is the item's: its times are the caller's to change.
			if got.ID != tc.item.ID || got.MerchantID != tc.item.MerchantID || got.Title != tc.item.Title || got.Content != tc.item.Content ||
				got.File != tc.item.File || !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) || got.UseCount != tc.item.UseCount {
				t.Errorf("listQuestion changed more than the questions: %+v, was %+v", got, tc.item)
			}
		})
	}
}
