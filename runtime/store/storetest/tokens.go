package storetest

import (
	"testing"
	"time"
)

// modelTokens: the tokens of each answer add up per merchant and UTC month, and in the overview of its range.
func (h harness) modelTokens(t *testing.T) {
	s := h.store(t)
	march := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		merchant string
		at       time.Time
		tokens   int64
	}{
		{"m1", march, 120},
		{"m1", march.Add(10 * time.Minute), 30},
		{"m1", march.Add(2 * time.Hour), 1000}, // April
		{"m2", march, 7},
		{"m1", march, 0}, // an offline answer
	} {
		ex := exchange(tc.merchant, newID("c"), tc.at, "question", "answer")
		ex.Tokens = tc.tokens
		record(t, s, ex)
	}
	for _, tc := range []struct {
		merchant string
		month    time.Time
		want     int64
	}{{"m1", march, 150}, {"m1", march.Add(2 * time.Hour), 1000}, {"m2", march, 7}, {"m3", march, 0}} {
		got, err := s.TokensThisMonth(t.Context(), tc.merchant, tc.month)
		if err != nil || got != tc.want {
			t.Errorf("TokensThisMonth(%s, %s) = %d, %v; want %d", tc.merchant, tc.month.Format("2006-01"), got, err, tc.want)
		}
	}
	o, err := s.Overview(t.Context(), "m1", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || o.ModelTokens != 150 {
		t.Errorf("overview of March: %d model tokens, %v; want 150", o.ModelTokens, err)
	}
}
