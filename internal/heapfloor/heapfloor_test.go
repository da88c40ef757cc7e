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

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, overhead, floor, ceiling int64
		want                           int64
	}{
		{live: 10 * mib, overhead: 8 * mib, floor: 64 * mib, ceiling: math.MaxInt64, want: 72 * mib},   // the floor
		{live: 32 * mib, overhead: 8 * mib, floor: 64 * mib, ceiling: math.MaxInt64, want: 72 * mib},   // twice live is the floor
		{live: 200 * mib, overhead: 8 * mib, floor: 64 * mib, ceiling: math.MaxInt64, want: 408 * mib}, // as GOGC=100
		{live: 200 * mib, overhead: 8 * mib, floor: 64 * mib, ceiling: 300 * mib, want: 300 * mib},     // the ceiling wins
		{live: 0, overhead: 0, floor: 64 * mib, ceiling: math.MaxInt64, want: 64 * mib},                // nothing live yet
		{live: -1, overhead: -1, floor: 64 * mib, ceiling: 1 << 30, want: 64 * mib},                    // nonsense from the runtime
		{live: math.MaxInt64, overhead: 1, floor: 64 * mib, ceiling: 1 << 40, want: 1 << 40},           // no overflow
		{live: 1 << 61, overhead: math.MaxInt64, floor: 64 * mib, ceiling: 1 << 40, want: 1 << 40},     // no overflow
	} {
		if got := Limit(tc.live, tc.overhead, tc.floor, tc.ceiling); got != tc.want {
			t.Errorf("Limit(%d, %d, %d, %d) = %d, want %d", tc.live, tc.overhead, tc.floor, tc.ceiling, got, tc.want)
		}
	}
}

// gogc reads the collector's GOGC percent, -1 when it is off.
func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// waitLimit collects until the soft memory limit the keeper sets after a collection satisfies ok.
func waitLimit(t *testing.T, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		limit := debug.SetMemoryLimit(-1)
		if ok(limit) {
			return limit
		}
		if time.Now().After(deadline) {
			t.Fatalf("the soft memory limit stayed at %d", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The keeper turns GOGC off and holds the soft memory limit at the floor for a heap far under it, follows a
// heap that grows past half the floor, and restores GOGC and the limit once its context ends. Not parallel:
// GOGC and the limit are the process's.
func TestKeepFollowsTheHeapAndRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(defaultPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	const floor = 64 << 20
	ctx, cancel := context.WithCancel(t.Context())
	Keep(ctx, floor)
	if p := gogc(); p >= 0 {
		t.Errorf("GOGC %d under the keeper, want off", p)
	}
	small := waitLimit(t, func(l int64) bool { return l >= floor && l < floor+floor/2 })

	live := make([]byte, 96<<20)
	big := waitLimit(t, func(l int64) bool { return l >= 2*int64(len(live)) })
	if big > 2*int64(len(live))+floor/2 {
		t.Errorf("a limit of %d MiB for 96 MiB live, want twice live and the runtime's overhead", big>>20)
	}
	runtime.KeepAlive(live)
	t.Logf("limits: %d MiB for a test's heap, %d MiB for 96 MiB live", small>>20, big>>20)

	cancel()
	waitLimit(t, func(int64) bool { return gogc() == defaultPercent }) // the keeper restores GOGC last
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("a limit of %d once the keeper stopped, want none", l)
	}
}

// Under a soft memory limit the floor is at most half of it and the limit is never raised past it; $GOGC set by
// the user is left alone.
func TestKeepBounds(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(defaultPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	const ceiling = 256 << 20
	debug.SetMemoryLimit(ceiling) // a floor of 128 MiB at most
	ctx, cancel := context.WithCancel(t.Context())
	Keep(ctx, 1<<30)
	if l := waitLimit(t, func(l int64) bool { return l < ceiling }); l < ceiling/2 {
		t.Errorf("a limit of %d MiB under a ceiling of 256 MiB, want at least half of it", l>>20)
	}
	live := make([]byte, 192<<20)
	if l := waitLimit(t, func(l int64) bool { return l == ceiling }); l != ceiling {
		t.Errorf("a limit of %d MiB for 192 MiB live, want the ceiling", l>>20)
	}
	runtime.KeepAlive(live)
	cancel()
	waitLimit(t, func(l int64) bool { return gogc() == defaultPercent }) // the keeper restores GOGC last

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	Keep(t.Context(), 1<<30)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p, l := gogc(), debug.SetMemoryLimit(-1); p != 150 || l != math.MaxInt64 {
		t.Errorf("GOGC %d and a limit of %d with $GOGC=150, want 150 and none", p, l)
	}
}
