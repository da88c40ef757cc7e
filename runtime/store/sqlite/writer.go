package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// maxBatch is the most writes committed in one transaction.
const maxBatch = 64

// errClosed is returned by writes after Close.
var errClosed = errors.New("the store is closed")

// writeRequest is one caller's write transaction, waiting for the writer.
type writeRequest struct {
	ctx  context.Context
	fn   func(tx *txn) error
	done chan error
}

// writer runs every write of the store on its single connection, committing the writes that queued up while
// the previous commit ran as one transaction (group commit). Each write runs inside its own savepoint, so one
// that fails is rolled back alone; a commit that fails fails every write of its batch. Under light load each
// write is its own transaction; under heavy load one commit, the costly part of a small write, serves many.
type writer struct {
	db       *db
	requests chan writeRequest
	quit     chan struct{}
	stopped  chan struct{}
	once     sync.Once
}

func newWriter(d *db) *writer {
	w := &writer{db: d, requests: make(chan writeRequest), quit: make(chan struct{}), stopped: make(chan struct{})}
	go w.loop()
	return w
}

// write runs fn in a write transaction and returns once it is committed or rolled back. Once fn has started it
// runs to completion even if ctx is cancelled, so that cancelling one caller never interrupts a transaction that
// others' writes share.
func (w *writer) write(ctx context.Context, fn func(tx *txn) error) error {
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

// close stops the writer after the write in progress.
func (w *writer) close() {
	w.once.Do(func() { close(w.quit) })
	<-w.stopped
}

func (w *writer) loop() {
	defer close(w.stopped)
	for {
		var first writeRequest
		select {
		case first = <-w.requests:
		case <-w.quit:
			return
		}
		batch := []writeRequest{first}
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-w.requests:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		w.commit(batch)
		w.db.prepareWanted(context.Background())
	}
}

// commit runs a batch of writes in one transaction and tells each its outcome.
func (w *writer) commit(batch []writeRequest) {
	results := make([]error, len(batch))
	err := w.run(batch, results)
	for i, r := range batch {
		if err != nil && results[i] == nil {
			results[i] = err
		}
		r.done <- results[i]
	}
}

// run executes the batch, recording each write's own error in results, and returns an error that fails them all.
func (w *writer) run(batch []writeRequest, results []error) error {
	ctx := context.Background() // the transaction belongs to no single caller
	tx, err := w.db.begin(ctx, nil)
	if err != nil {
		return err
	}
	single := len(batch) == 1
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if single {
			results[i] = r.fn(tx)
			continue
		}
		if err := w.savepoint(ctx, tx, r.fn, &results[i]); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if single && results[0] != nil {
		if err := tx.Rollback(); err != nil {
			return fmt.Errorf("rolling back: %w", err)
		}
		return nil
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// savepoint runs fn inside a savepoint, rolled back when fn fails (its error goes to result). The returned error
// means the transaction itself is broken.
func (w *writer) savepoint(ctx context.Context, tx *txn, fn func(tx *txn) error, result *error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
		return fmt.Errorf("starting savepoint: %w", err)
	}
	if *result = fn(tx); *result != nil {
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
			return fmt.Errorf("rolling back to savepoint: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `RELEASE write`); err != nil {
		return fmt.Errorf("releasing savepoint: %w", err)
	}
	return nil
}
