package postgres

import (
	"context"
	"errors"
	"sync"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// maxGroup is the most writes run in one transaction.
const maxGroup = 64

// errClosed is returned by writes after Close.
var errClosed = errors.New("the store is closed")

// writeRequest is one caller's write, waiting for a writer.
type writeRequest struct {
	ctx  context.Context //nolint:containedctx // the caller's, for its statements
	fn   func(store.Tx) error
	done chan error
}

// writers run the store's exchanges (WriteExchange), each writer one transaction at a time, committing the
// exchanges that queued up while it ran the previous ones as one transaction (group commit): under light load each
// is its own transaction; under heavy load one transaction, and a few statements (see deferredWrites), serve many.
type writers struct {
	metrics  storeutil.GroupMetrics
	requests chan writeRequest
	quit     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
}

func startWriters(s *Store, n int) *writers {
	w := &writers{metrics: storeutil.NewGroupMetrics(), requests: make(chan writeRequest), quit: make(chan struct{})}
	for range n {
		w.wg.Go(func() { w.loop(s) })
	}
	return w
}

// write hands fn to a writer and returns its outcome.
func (w *writers) write(ctx context.Context, fn func(store.Tx) error) error {
	req := writeRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case w.requests <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return errClosed
	}
	return storeutil.Repanic(<-req.done)
}

// close stops the writers after the writes in progress.
func (w *writers) close() {
	w.once.Do(func() { close(w.quit) })
	w.wg.Wait()
}

func (w *writers) loop(s *Store) {
	for {
		var first writeRequest
		select {
		case first = <-w.requests:
		case <-w.quit:
			return
		}
		group := w.collect([]writeRequest{first})
		w.metrics.Grouped(len(group))
		results := make([]error, len(group))
		together := len(group) > 1 && s.writeGroup(group, results)
		if len(group) > 1 && !together {
			w.metrics.Split()
		}
		if !together {
			// One write's failure must not undo the others: each runs again on its own.
			for i, r := range group {
				if results[i] == nil {
					results[i] = s.writeAlone(r.ctx, r.fn)
				}
			}
		}
		for i, r := range group {
			r.done <- results[i]
		}
	}
}

// collect adds the writes waiting in the queue to group, up to maxGroup.
func (w *writers) collect(group []writeRequest) []writeRequest {
	for len(group) < maxGroup {
		select {
		case r := <-w.requests:
			group = append(group, r)
		default:
			return group
		}
	}
	return group
}

// writeGroup runs the writes of group in one transaction, but for those whose callers gave up, whose results it
// records. It returns false, with nothing written, when anything failed: the failure may be any one write's, such
// as a month's claim past its ceiling in the commit, and each then runs alone.
func (s *Store) writeGroup(group []writeRequest, results []error) bool {
	ctx := context.Background() // the transaction belongs to no single caller
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	defer c.Release()
	p := begin(c.Conn())
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if err := storeutil.Call(r.fn, store.Tx(writeTx{p})); err != nil {
			p.rollback(ctx)
			clear(results)
			return false
		}
	}
	if err := p.commit(ctx); err != nil {
		p.rollback(ctx)
		clear(results)
		return false
	}
	return true
}
