package ratelimit

import (
	"testing"
	"time"
)

func TestKeyed(t *testing.T) {
	k := NewKeyed(2)
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := k.Allow(t.Context(), "a", 3, time.Hour, now); !ok {
			t.Fatalf("request %d refused within the limit", i+1)
		}
	}
	ok, wait := k.Allow(t.Context(), "a", 3, time.Hour, now)
	if ok || wait < 19*time.Minute || wait > 20*time.Minute {
		t.Fatalf("past the limit: %v, retry after %v; want refused for 20 minutes", ok, wait)
	}
	for range 2 {
		if ok, _ := k.Allow(t.Context(), "b", 3, time.Hour, now); !ok {
			t.Error("another key shares a's bucket")
		}
	}
	if ok, _ := k.Allow(t.Context(), "a", 3, time.Hour, now.Add(20*time.Minute)); !ok {
		t.Error("a token did not come back after a third of the period")
	}
	// Two keys are tracked; a third is let through uncounted, not refused, and not remembered.
	for range 5 {
		if ok, _ := k.Allow(t.Context(), "c", 3, time.Hour, now.Add(20*time.Minute)); !ok {
			t.Fatal("a key past maxKeys was refused")
		}
	}
	if len(k.buckets) != 2 {
		t.Errorf("%d buckets, want at most 2", len(k.buckets))
	}
	// Buckets full again are forgotten.
	k.Allow(t.Context(), "d", 3, time.Hour, now.Add(3*time.Hour))
	if _, ok := k.buckets["a"]; ok || len(k.buckets) != 1 {
		t.Errorf("buckets after the period: %v", k.buckets)
	}
}
