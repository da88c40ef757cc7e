package ratelimit

import (
	"context"
	"testing"
	"time"
)

// allowOne asks l for one token of key's bucket of n per period.
func allowOne(ctx context.Context, l KeyedLimiter, key string, n int, period time.Duration, now time.Time) (bool, time.Duration) {
	refused, wait := l.Allow(ctx, []Quota{{Key: key, N: n, Period: period}}, now)
	return refused < 0, wait
}

func TestKeyed(t *testing.T) {
	k := NewKeyed(2)
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := allowOne(t.Context(), k, "a", 3, time.Hour, now); !ok {
			t.Fatalf("request %d refused within the limit", i+1)
		}
	}
	ok, wait := allowOne(t.Context(), k, "a", 3, time.Hour, now)
	if ok || wait < 19*time.Minute || wait > 20*time.Minute {
		t.Fatalf("past the limit: %v, retry after %v; want refused for 20 minutes", ok, wait)
	}
	for range 2 {
		if ok, _ := allowOne(t.Context(), k, "b", 3, time.Hour, now); !ok {
			t.Error("another key shares a's bucket")
		}
	}
	if ok, _ := allowOne(t.Context(), k, "a", 3, time.Hour, now.Add(20*time.Minute)); !ok {
		t.Error("a token did not come back after a third of the period")
	}
	// Two keys are tracked; a third is let through uncounted, not refused, and not remembered.
	for range 5 {
		if ok, _ := allowOne(t.Context(), k, "c", 3, time.Hour, now.Add(20*time.Minute)); !ok {
			t.Fatal("a key past maxKeys was refused")
		}
	}
	if len(k.buckets) != 2 {
		t.Errorf("%d buckets, want at most 2", len(k.buckets))
	}
	// Buckets full again are forgotten.
	allowOne(t.Context(), k, "d", 3, time.Hour, now.Add(3*time.Hour))
	if _, ok := k.buckets["a"]; ok || len(k.buckets) != 1 {
		t.Errorf("buckets after the period: %v", k.buckets)
	}
}

// Quotas asked together are taken all or nothing: an event the second quota refuses spends nothing of the first,
// and the refusing quota is named with its own wait.
func TestKeyedAllOrNothing(t *testing.T) {
	k := NewKeyed(10)
	testAllOrNothing(t, k, time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
}

func testAllOrNothing(t *testing.T, l KeyedLimiter, now time.Time) {
	t.Helper()
	visitor := Quota{Key: "shop\x00v\x00visitor", N: 5, Period: time.Hour}
	address := Quota{Key: "shop\x00a\x00192.0.2.1", N: 2, Period: time.Hour}
	for i := range 2 {
		if refused, _ := l.Allow(t.Context(), []Quota{visitor, address}, now); refused != -1 {
			t.Fatalf("event %d refused by quota %d within both limits", i+1, refused)
		}
	}
	for range 3 {
		refused, wait := l.Allow(t.Context(), []Quota{visitor, address}, now)
		if refused != 1 || wait < 29*time.Minute || wait > 30*time.Minute {
			t.Fatalf("past the address's 2: refused by %d, retry after %s; want 1 and 30 minutes", refused, wait)
		}
	}
	// The three refused events took nothing from the visitor's 5: three are left.
	for i := range 3 {
		if ok, _ := allowOne(t.Context(), l, visitor.Key, visitor.N, visitor.Period, now); !ok {
			t.Fatalf("the visitor's token %d of 5 was spent by an event its address refused", i+3)
		}
	}
	refused, wait := l.Allow(t.Context(), []Quota{visitor, address}, now)
	if refused != 0 || wait < 11*time.Minute || wait > 12*time.Minute {
		t.Errorf("both quotas empty: refused by %d, retry after %s; want the first, 0, and 12 minutes", refused, wait)
	}
	if refused, _ := l.Allow(t.Context(), nil, now); refused != -1 {
		t.Errorf("no quotas: refused by %d", refused)
	}
}
