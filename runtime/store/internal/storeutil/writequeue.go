package storeutil

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by writes after the store is closed.
var ErrClosed = errors.New("the store is closed")

// Write is one caller's write transaction, waiting in a WriteQueue: its callback, run with a transaction of type T,
// and its caller's context.
type Write[T any] struct {
	Ctx  context.Context //nolint:containedctx // the caller's, for its callback's statements
	Fn   func(T) error
	done chan error
}

// Finish tells the waiting caller the write's outcome.
func (w Write[T]) Finish(err error) { w.done <- err }

// WriteQueue is where a store's callers leave their writes for the store's writer goroutines, each of which takes
// a write and those waiting behind it, to run them in one transaction (group commit; see Collect).
type WriteQueue[T any] struct {
	requests chan Write[T]
	closed   chan struct{}
	once     sync.Once
	waiting  atomic.Int64
}

// NewWriteQueue returns an open queue.
func NewWriteQueue[T any]() *WriteQueue[T] {
	return &WriteQueue[T]{requests: make(chan Write[T]), closed: make(chan struct{})}
}

// Write waits for a writer to take fn and returns its outcome, raising again on the caller's goroutine a panic in
// fn (see Call). A caller whose ctx ends before a writer takes the write gets ctx's error; once taken, it waits
// for the writer's outcome.
func (q *WriteQueue[T]) Write(ctx context.Context, fn func(T) error) error {
	w := Write[T]{Ctx: ctx, Fn: fn, done: make(chan error, 1)}
	q.waiting.Add(1)
	select {
	case q.requests <- w:
		q.waiting.Add(-1)
	case <-ctx.Done():
		q.waiting.Add(-1)
		return ctx.Err()
	case <-q.closed:
		q.waiting.Add(-1)
		return ErrClosed
	}
	return Repanic(<-w.done)
}

// Waiting is how many callers wait for a writer to take their write.
func (q *WriteQueue[T]) Waiting() int { return int(q.waiting.Load()) }

// Requests are the waiting writes, for the writers to take.
func (q *WriteQueue[T]) Requests() <-chan Write[T] { return q.requests }

// Closed is closed once the queue is: the writers stop taking writes.
func (q *WriteQueue[T]) Closed() <-chan struct{} { return q.closed }

// Collect adds the writes waiting to group, up to limit in all.
func (q *WriteQueue[T]) Collect(group []Write[T], limit int) []Write[T] {
	for len(group) < limit {
		select {
		case w := <-q.requests:
			group = append(group, w)
		default:
			return group
		}
	}
	return group
}

// RunGroup runs a group of writes a writer took together and tells each caller its outcome. The writes first run
// in one transaction (together), which records in results the outcome of those it did not run, such as a caller's
// that gave up, and reports false, with nothing written, when one of them failed; each write without an outcome
// then runs in a transaction of its own (alone), so that one write's failure never undoes another. A group of one
// runs alone at once. m counts the group, and the groups that fell apart.
func RunGroup[T any](group []Write[T], m GroupMetrics, together func([]Write[T], []error) bool, alone func(Write[T]) error) {
	m.Grouped(len(group))
	results := make([]error, len(group))
	if len(group) == 1 || !together(group, results) {
		if len(group) > 1 {
			m.Split()
		}
		for i, w := range group {
			if results[i] == nil {
				results[i] = alone(w)
			}
		}
	}
	for i, w := range group {
		w.Finish(results[i])
	}
}

// Close refuses new writes with ErrClosed; the writes already taken run to their end.
func (q *WriteQueue[T]) Close() { q.once.Do(func() { close(q.closed) }) }
