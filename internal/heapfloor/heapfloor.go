// Package heapfloor keeps the Go garbage collector from collecting a small heap more often than a heap of a
// given size would be collected.
//
// With GOGC at its default the collector runs whenever the heap has grown by its live size: a runtime whose
// live heap is 10 MB and which allocates 200 MB a second under load collects twenty times a second, 7 to 9% of
// its CPU in `make bench`. Raising GOGC for every heap would raise a large heap in proportion too; a floor only
// lets a small heap grow to the floor before the next collection, and leaves a heap above half the floor
// collected as GOGC=100 would. The soft memory limit (contract.SetMemoryLimit) still wins over the floor.
//
// The floor is kept with the soft memory limit, not with GOGC: after each collection the limit is set to what
// the next collection may let the heap grow to. A limit that has not caught up with a heap that grew errs
// toward collecting early; a GOGC raised for a small heap and not yet lowered would let a heap that has grown
// since grow past its floor by that percent (twenty exports at once took the runtime to 308 MiB that way).
package heapfloor

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// defaultPercent is GOGC's default, which Keep restores when it stops.
const defaultPercent = 100

// The runtime metrics Keep reads after each collection.
const (
	liveHeap = "/gc/heap/live:bytes"
	// total less released is what the soft memory limit is compared with.
	total    = "/memory/classes/total:bytes"
	released = "/memory/classes/heap/released:bytes"
	// objects, unused and free are the heap's part of it; the rest (stacks, the runtime's metadata) is overhead.
	objects = "/memory/classes/heap/objects:bytes"
	unused  = "/memory/classes/heap/unused:bytes"
	free    = "/memory/classes/heap/free:bytes"
)

// Keep turns GOGC off and sets the soft memory limit after every collection so that the next one runs when the
// heap reaches the floor or twice its live size, whichever is larger, but never past the limit Keep found, until
// ctx ends; then it restores GOGC's default and that limit. The floor is at most half the limit it found, so
// that a small container's heap is not held near its limit. Keep does nothing when floor is not positive or
// $GOGC is set, which wins.
func Keep(ctx context.Context, floor int64) {
	ceiling := debug.SetMemoryLimit(-1)
	floor = min(floor, ceiling/2)
	if floor <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	k := &keeper{ctx: ctx, floor: floor, ceiling: ceiling, sample: []metrics.Sample{
		{Name: liveHeap}, {Name: total}, {Name: released}, {Name: objects}, {Name: unused}, {Name: free}}}
	k.update()
	debug.SetGCPercent(-1)
	k.arm()
}

// keeper holds what the hook that runs after each collection needs.
type keeper struct {
	ctx     context.Context
	floor   int64
	ceiling int64 // the soft memory limit before Keep
	sample  []metrics.Sample
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
		debug.SetMemoryLimit(k.ceiling)
		debug.SetGCPercent(defaultPercent)
		return
	}
	k.update()
	k.arm()
}

// update sets the soft memory limit from what the last collection found.
func (k *keeper) update() {
	metrics.Read(k.sample)
	var v [6]int64 // one per sample
	for i, s := range k.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = int64(min(s.Value.Uint64(), math.MaxInt64))
		}
	}
	live, inUse, heap := v[0], v[1]-v[2], v[3]+v[4]+v[5]
	debug.SetMemoryLimit(Limit(live, inUse-heap, k.floor, k.ceiling))
}

// Limit is the soft memory limit that makes the collection after one that found live bytes live run when the
// heap reaches floor or twice live, whichever is larger: that heap plus overhead, what the runtime holds besides
// its heap (goroutine stacks, its own metadata), but never more than ceiling.
func Limit(live, overhead, floor, ceiling int64) int64 {
	live, overhead = max(live, 0), max(overhead, 0)
	heap := floor
	if live > floor/2 {
		heap = live * 2
		if heap/2 != live { // overflow
			return ceiling
		}
	}
	if heap > math.MaxInt64-overhead {
		return ceiling
	}
	return min(heap+overhead, ceiling)
}
