package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// maxBatch is the most writes committed in one transaction.
const maxBatch = 64

// writer runs every write of the store on its single connection, committing the writes that queued up while
// the previous commit ran as one transaction (group commit; see commit). Under light load each write is its own
// transaction; under heavy load one commit, the costly part of a small write (a chat exchange dirties about ten
// pages, each written to the log by its own system call), serves many.
type writer struct {
	db      *db
	queue   *storeutil.WriteQueue[*txn]
	metrics storeutil.GroupMetrics
	stopped chan struct{}
	// restart asks the writer to restart the write-ahead log once no write waits (see restartLog), with the
	// count of changes the checkpoint that copied the whole log saw.
	restart chan int64
	// bound asks the writer to copy the rest of the write-ahead log and restart it in its next turn (see
	// boundLog).
	bound chan struct{}
}

func newWriter(d *db) *writer {
	q := storeutil.NewWriteQueue[*txn]()
	w := &writer{db: d, queue: q, metrics: storeutil.NewGroupMetrics(q.Waiting),
		stopped: make(chan struct{}), restart: make(chan int64, 1), bound: make(chan struct{}, 1)}
	go w.loop()
	return w
}

// write runs fn in a write transaction and returns once it is committed or rolled back. Once fn has started it
// runs to completion even if ctx is cancelled, so that cancelling one caller never interrupts a transaction that
// others' writes share.
func (w *writer) write(ctx context.Context, fn func(tx *txn) error) error {
	return w.queue.Write(ctx, fn)
}

// close stops the writer after the write in progress.
func (w *writer) close() {
	w.queue.Close()
	<-w.stopped
}

// requestRestart asks the writer to restart the write-ahead log when no write waits, after a checkpoint that began
// when the writer's count of changes was changes and copied the whole log; it does not wait.
func (w *writer) requestRestart(changes int64) {
	select {
	case w.restart <- changes:
	default: // asked already
	}
}

// requestBound asks the writer to copy the rest of the write-ahead log and restart it in its next turn, even if
// writes wait; it does not wait.
func (w *writer) requestBound() {
	select {
	case w.bound <- struct{}{}:
	default: // asked already
	}
}

func (w *writer) loop() {
	defer close(w.stopped)
	for {
		first, ok := w.next()
		if !ok {
			return
		}
		batch := w.queue.Collect([]storeutil.Write[*txn]{first}, maxBatch)
		// Yield once before committing: under load, the handlers already running reach the queue meanwhile and
		// share this commit instead of paying one each (the commit's page writes are most of a write's cost);
		// when nothing else is runnable the yield returns at once, so an idle store adds no delay.
		runtime.Gosched()
		batch = w.queue.Collect(batch, maxBatch)
		w.commit(batch)
		w.db.prepareWanted(context.Background())
		select {
		case <-w.bound:
			w.boundLog()
		default:
		}
	}
}

// totalChanges is SQLite's count of the rows the writer's statements have changed (total_changes()), for the
// checkpointer to tell whether anything was written since it last looked: some writes, such as the webhook
// dispatcher's claims every second, mostly change nothing. It is read in the writer's turn, after the writes
// queued before it, and costs the writer nothing when not asked.
func (w *writer) totalChanges(ctx context.Context) (int64, error) {
	var n int64
	err := w.write(ctx, func(tx *txn) error { return tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n) })
	return n, err
}

// next waits for the next write and returns it, or false once the writer is closed. Meanwhile it restarts the
// log when the checkpointer asks; a write already waiting goes first.
func (w *writer) next() (storeutil.Write[*txn], bool) {
	for {
		select {
		case r := <-w.queue.Requests():
			return r, true
		default:
		}
		select {
		case r := <-w.queue.Requests():
			return r, true
		case changes := <-w.restart:
			// Rows changed since the checkpoint began are in frames it did not copy: SQLite would not restart
			// the log, and the restart's transaction would write a frame for nothing.
			var now int64
			err := w.db.QueryRowContext(context.Background(), `SELECT total_changes()`).Scan(&now)
			if err == nil && now == changes {
				w.restartLog()
			}
		case <-w.bound:
			w.boundLog()
		case <-w.queue.Closed():
			return storeutil.Write[*txn]{}, false
		}
	}
}

// restartLog writes the smallest transaction there is, page 1's user version set to the 0 it always is (the
// store's migrations are goose's, which keeps its versions in a table): SQLite restarts a log whose every frame
// the checkpoint copied in the first write transaction after, and syncs the log's new header to disk in it (see
// the checkpointer). It changes no row, so the checkpointer leaves its one frame in the log, and no caller's write
// finds the log fully copied and restarts it again. A failure leaves the restart to the next write, as SQLite
// does by itself.
func (w *writer) restartLog() {
	ctx := context.Background()
	_ = w.runAlone(storeutil.Write[*txn]{Ctx: ctx, Fn: func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `PRAGMA user_version = 0`)
		return err
	}})
}

// boundLog copies what is left of the write-ahead log into the database file and restarts the log, in the
// writer's turn. Under writes that never pause, no background checkpoint finds the whole log copied, and SQLite
// never restarts it: it would grow by every write (to 940 MB in the 12 s of `make bench`'s chat run). So once it
// passes maxLogBytes the writes queued meanwhile wait for the frames the last checkpoint left and two fsyncs, the
// database file's and the restarted log's header (see restartLog): a pause of up to about 40 ms on the benchmark
// machine, once every 3 s at `make bench`'s 13,000 chats a second. The log's file keeps its size, to be written
// again from its start: cutting it back (journal_size_limit) made the restart's write 65 ms instead of 0.3. It
// waits for readers on older snapshots for boundWait at the most, and otherwise leaves the log to the
// checkpointer's next request.
func (w *writer) boundLog() {
	ctx := context.Background()
	if _, err := w.db.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, boundWait.Milliseconds())); err != nil {
		return
	}
	var busy, frames, copied int
	err := w.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &frames, &copied)
	_, _ = w.db.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeout.Milliseconds()))
	if err == nil && busy == 0 {
		w.restartLog()
	}
}

// commit runs a batch of writes and tells each its outcome (see storeutil.RunGroup). Failures are rare (a
// conversation over the monthly ceiling, a duplicate), so the common case pays one commit for the whole batch and
// nothing per write.
func (w *writer) commit(batch []storeutil.Write[*txn]) {
	storeutil.RunGroup(batch, w.metrics, w.runTogether, w.runAlone)
}

// runTogether runs the batch in one transaction. It records the writes whose callers gave up, and the commit's
// error, in results; it returns false, with nothing written, when a write failed and the rest must run alone.
func (w *writer) runTogether(batch []storeutil.Write[*txn], results []error) bool {
	ctx := context.Background() // the transaction belongs to no single caller
	tx, err := w.db.begin(ctx, nil)
	if err != nil {
		fillErr(results, err)
		return true
	}
	for i, r := range batch {
		if err := r.Ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if err := storeutil.Call(r.Fn, tx); err != nil {
			_ = tx.Rollback()
			return false
		}
	}
	// The deferred rows first (see flush): should they fail, the writes run alone, so that the failure is one
	// write's.
	if err := tx.flush(ctx); err != nil {
		_ = tx.Rollback()
		return false
	}
	if err := tx.Commit(); err != nil {
		fillErr(results, fmt.Errorf("committing transaction: %w", err))
	}
	return true
}

// runAlone runs one write in its own transaction.
func (w *writer) runAlone(r storeutil.Write[*txn]) error {
	if err := r.Ctx.Err(); err != nil {
		return err
	}
	tx, err := w.db.begin(context.Background(), nil)
	if err != nil {
		return err
	}
	if err := storeutil.Call(r.Fn, tx); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil {
			return errors.Join(err, fmt.Errorf("rolling back: %w", rbErr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// fillErr sets err as the result of every write that has none yet.
func fillErr(results []error, err error) {
	for i := range results {
		if results[i] == nil {
			results[i] = err
		}
	}
}
