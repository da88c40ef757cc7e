package heapfloor

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live, floor int64
		want        int
	}{
		{live: 10 << 20, floor: 64 << 20, want: 540},          // 10 MiB + 540% = 64 MiB
		{live: 16 << 20, floor: 64 << 20, want: 300},          // exactly the floor
		{live: 32 << 20, floor: 64 << 20, want: 100},          // twice the live heap is the floor already
		{live: 200 << 20, floor: 64 << 20, want: 100},         // a large heap is left as GOGC=100 leaves it
		{live: 3, floor: 10, want: 234},                       // rounded up: the target is never under the floor
		{live: 0, floor: 64 << 20, want: math.MaxInt32},       // nothing live yet: no overflow
		{live: -1, floor: 1 << 62, want: math.MaxInt32},       // nonsense from the runtime: still a valid percent
		{live: 1 << 20, floor: 1 << 20, want: defaultPercent}, // the floor under twice the live heap
	} {
		if got := Percent(tc.live, tc.floor); got != tc.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tc.live, tc.floor, got, tc.want)
		}
	}
}

// gogc reads the collector's GOGC percent as the runtime reports it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGOGC collects until the percent the keeper sets after a collection satisfies ok.
func waitGOGC(t *testing.T, ok func(uint64) bool) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		p := gogc()
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed at %d", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The keeper raises GOGC for a heap far under the floor after a collection, and restores the default once its
// context ends. Not parallel: GOGC is the process's.
func TestKeepRaisesAndRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(defaultPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	ctx, cancel := context.WithCancel(t.Context())
	Keep(ctx, 1<<30)
	if p := waitGOGC(t, func(p uint64) bool { return p > defaultPercent }); p < 500 {
		t.Errorf("GOGC %d for a test's heap under a 1 GiB floor, want far above the default", p)
	}
	cancel()
	waitGOGC(t, func(p uint64) bool { return p == defaultPercent })
}

// Under a soft memory limit the floor is at most half of it, and $GOGC set by the user is left alone.
func TestKeepBounds(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(defaultPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	live := make([]byte, 8<<20)
	debug.SetMemoryLimit(32 << 20) // a floor of 16 MiB at most: twice the live heap already
	ctx, cancel := context.WithCancel(t.Context())
	Keep(ctx, 1<<30)
	collect(5)
	if p := gogc(); p != defaultPercent {
		t.Errorf("GOGC %d for 8 MiB live under a 32 MiB memory limit, want %d", p, defaultPercent)
	}
	runtime.KeepAlive(live)
	cancel()
	collect(2)

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	Keep(t.Context(), 1<<30)
	collect(5)
	if p := gogc(); p != 150 {
		t.Errorf("GOGC %d with $GOGC=150, want 150", p)
	}
}

// collect runs n collections, giving the keeper's hook time to run after each.
func collect(n int) {
	for range n {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
