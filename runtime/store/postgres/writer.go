package postgres

import (
	"context"
	"sync"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// maxGroup is the most writes run in one transaction.
const maxGroup = 64

// writers run the store's exchanges (WriteExchange), each writer one transaction at a time, committing the
// exchanges that queued up while it ran the previous ones as one transaction (group commit): under light load each
// is its own transaction; under heavy load one transaction, and a few statements (see deferredWrites), serve many.
type writers struct {
	queue   *storeutil.WriteQueue[store.Tx]
	metrics storeutil.GroupMetrics
	wg      sync.WaitGroup
}

func startWriters(s *Store, n int) *writers {
	q := storeutil.NewWriteQueue[store.Tx]()
	w := &writers{queue: q, metrics: storeutil.NewGroupMetrics(q.Waiting)}
	for range n {
		w.wg.Go(func() { w.loop(s) })
	}
	return w
}

// close stops the writers after the writes in progress.
func (w *writers) close() {
	w.queue.Close()
	w.wg.Wait()
}

func (w *writers) loop(s *Store) {
	for {
		var first storeutil.Write[store.Tx]
		select {
		case first = <-w.queue.Requests():
		case <-w.queue.Closed():
			return
		}
		group := w.queue.Collect([]storeutil.Write[store.Tx]{first}, maxGroup)
		storeutil.RunGroup(group, w.metrics, s.writeGroup, func(r storeutil.Write[store.Tx]) error {
			return s.writeAlone(r.Ctx, r.Fn)
		})
	}
}

// writeGroup runs the writes of group in one transaction, but for those whose callers gave up, whose results it
// records. It returns false, with nothing written, when anything failed: the failure may be any one write's, such
// as a month's claim past its ceiling in the commit, and each then runs alone.
func (s *Store) writeGroup(group []storeutil.Write[store.Tx], results []error) bool {
	ctx := context.Background() // the transaction belongs to no single caller
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	defer c.Release()
	p := begin(c.Conn())
	for i, r := range group {
		if err := r.Ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if err := storeutil.Call(r.Fn, store.Tx(writeTx{p})); err != nil {
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
