// Package heapfloor keeps the Go garbage collector from collecting a small heap more often than a heap of a
// given size would be collected.
//
// With GOGC at its default the collector runs whenever the heap has grown by its live size: a runtime whose
// live heap is 10 MB and which allocates 200 MB a second under load collects twenty times a second, 7 to 9% of
// its CPU in `make bench`. Raising GOGC for every heap would raise a large heap in proportion too; a floor only
// lets a small heap grow to the floor before the next collection, and leaves a heap above half the floor
// collected as GOGC=100 would. The soft memory limit (contract.SetMemoryLimit) still wins over the floor.
package heapfloor

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// defaultPercent is GOGC's default, which the floor never goes under.
const defaultPercent = 100

// liveHeap is the runtime metric of the heap the last collection found live.
const liveHeap = "/gc/heap/live:bytes"

// Keep sets the collector's GOGC after every collection so that the next one runs when the heap reaches the
// floor or twice its live size, whichever is larger, until ctx ends; then it restores GOGC's default. The floor
// is at most half the soft memory limit, so that a small container's heap is not held near its limit. Keep does
// nothing when floor is not positive or $GOGC is set, which wins.
func Keep(ctx context.Context, floor int64) {
	floor = min(floor, debug.SetMemoryLimit(-1)/2)
	if floor <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	k := &keeper{ctx: ctx, floor: floor, set: defaultPercent, sample: []metrics.Sample{{Name: liveHeap}}}
	k.arm()
}

// keeper holds what the hook that runs after each collection needs.
type keeper struct {
	ctx    context.Context
	floor  int64
	set    int // the GOGC percent last set
	sample []metrics.Sample
}

// arm asks to be called after the next collection: the runtime runs an object's cleanup once a collection has
// found it unreachable, and this object is unreachable as soon as arm returns.
func (k *keeper) arm() {
	runtime.AddCleanup(new(sentinel), func(k *keeper) { k.collected() }, k)
}

// sentinel is an object only a collection frees. It has a pointer so that the allocator does not pack it with
// other small objects, which would delay its cleanup to when they die too.
type sentinel struct{ _ *byte }

// collected runs after each collection (in the runtime's cleanup goroutine, one at a time).
func (k *keeper) collected() {
	if k.ctx.Err() != nil {
		debug.SetGCPercent(defaultPercent)
		return
	}
	metrics.Read(k.sample)
	if k.sample[0].Value.Kind() == metrics.KindUint64 {
		live := int64(min(k.sample[0].Value.Uint64(), math.MaxInt64))
		if p := Percent(live, k.floor); p != k.set {
			debug.SetGCPercent(p)
			k.set = p
		}
	}
	k.arm()
}

// Percent is the GOGC percent that makes the collection after one that found live bytes live run when the heap
// reaches floor, but never less than GOGC's default: the heap target is live plus live times the percent over
// 100.
func Percent(live, floor int64) int {
	if live <= 0 {
		live = 1
	}
	if live >= floor/2 {
		return defaultPercent
	}
	return int(min(math.Ceil(float64(floor-live)*100/float64(live)), math.MaxInt32))
}
