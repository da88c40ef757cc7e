package postgres

import (
	"context"
	"errors"
	"sync"

	"github.com/parley-dev/parley/runtime/store"
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

// writers run the store's writes, each writer one transaction at a time, committing the writes that queued up
// while it ran the previous ones as one transaction (group commit): under light load each write is its own
// transaction; under heavy load one transaction, and a few statements (see deferredWrites), serve many exchanges.
type writers struct {
	requests chan writeRequest
	quit     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
}

func startWriters(s *Store, n int) *writers {
	w := &writers{requests: make(chan writeRequest), quit: make(chan struct{})}
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
	return <-req.done
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
		if len(group) == 1 {
			first.done <- s.writeAlone(first.ctx, first.fn)
			continue
		}
		if err := s.writeGroup(group); err == nil {
			for _, r := range group {
				r.done <- nil
			}
			continue
		}
		// One write's failure must not undo the others: each runs again on its own.
		for _, r := range group {
			r.done <- s.writeAlone(r.ctx, r.fn)
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

// writeGroup runs the writes of group in one transaction; any failure rolls it all back.
func (s *Store) writeGroup(group []writeRequest) error {
	ctx := context.Background()
	for _, r := range group {
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
	}
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	p := begin(c.Conn())
	for _, r := range group {
		if err := r.fn(writeTx{p}); err != nil {
			p.rollback(ctx)
			return err
		}
	}
	if err := p.commit(ctx); err != nil {
		p.rollback(ctx)
		return err
	}
	return nil
}
