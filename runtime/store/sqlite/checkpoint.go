package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// checkpointEvery is how often the write-ahead log is copied back into the database file.
const checkpointEvery = time.Second

// maxLogBytes bounds the write-ahead log under writes that never pause (see boundLog). The log may pass it by what
// is written between two checkpoints.
const maxLogBytes = 256 << 20

// boundWait is how long bounding the log waits for readers of older snapshots before it leaves the log to the
// next try: every write waits meanwhile.
const boundWait = 100 * time.Millisecond

// checkpointing is when the checkpointer runs.
type checkpointing struct {
	// every is the time between background checkpoints.
	every time.Duration
	// maxLogBytes is the size of the log past which the writer copies the rest of it and restarts it in its own
	// turn (see boundLog); no bound when 0.
	maxLogBytes int64
}

// checkpointer copies the write-ahead log into the database file from its own connection, in the background.
// SQLite would otherwise do it inside the commit that fills the log, and the writes queued behind that commit
// would wait for its fsync: the source of the slowest answers under load.
//
// Once a checkpoint has copied the whole log, it has the writer restart the log while no write waits (see
// restartLog).
type checkpointer struct {
	db     *sql.DB
	writer *writer
	cancel context.CancelFunc
	done   chan struct{}
	// truncates asks for the log to be emptied (see truncate).
	truncates chan struct{}
}

func startCheckpointer(db *sql.DB, w *writer, cfg checkpointing) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, writer: w, cancel: cancel, done: make(chan struct{}), truncates: make(chan struct{}, 1)}
	go c.loop(ctx, cfg)
	return c
}

func (c *checkpointer) loop(ctx context.Context, cfg checkpointing) {
	defer close(c.done)
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	// seen is the writer's count of changed rows when the last checkpoint began; settled, that the checkpoint
	// copied every frame of the log. While both hold there is nothing to copy but the restart's frame, which
	// must stay uncopied: a log fully copied is restarted by the next write, in its caller's time.
	var seen int64
	settled := false
	var pageSize int64
	if err := c.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		pageSize = 4096 // SQLite's default; a wrong guess moves only when the log is bounded
	}
	// truncating is a request to empty the log that has not succeeded yet.
	truncating := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.truncates:
			truncating = true
		case <-tick.C:
		}
		if truncating {
			truncating = !c.truncate(ctx)
			settled = false
			continue
		}
		n, err := c.writer.totalChanges(ctx)
		if err != nil {
			settled = false // checkpoint regardless
		}
		if settled && n == seen {
			continue
		}
		// PASSIVE never waits for readers or the writer; what it cannot copy now, the next run does. A failure
		// is retried the same way, and the log only grows meanwhile.
		var busy, frames, copied int
		if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
			settled = false
			continue
		}
		seen, settled = n, busy == 0 && copied == frames
		switch {
		case cfg.maxLogBytes > 0 && int64(frames)*pageSize > cfg.maxLogBytes:
			// One more pass copies what the writer added during this one, so that little is left for the
			// writer's turn.
			_, _ = c.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
			c.writer.requestBound()
		case restartLog(busy, frames, copied):
			c.writer.requestRestart(n)
		}
	}
}

// restartLog reports whether the log should be restarted now, after a checkpoint that found it holding frames
// and copied copied of them into the database file (busy when it could not run).
//
// SQLite restarts the log (writes it again from its first frame) in the first write transaction that begins
// after a checkpoint has copied every frame, and that write first syncs the log's new header to disk: an fsync
// in the writer, which every write queued behind it waits for. An fsync on ext4 commits the file system's
// journal, everything every process changed since its last commit, and took from 1 ms to over 300 ms on the
// benchmark machine: the quarter-second stalls of `make bench`, whose fixed-rate run starts on an idle store
// with a fully copied log. Restarting right after the checkpoint, while no write waits, leaves that fsync to a
// write nobody waits for.
func restartLog(busy, frames, copied int) bool {
	return busy == 0 && frames > 0 && copied == frames
}

// requestTruncate asks the checkpointer to empty the log soon; it does not wait. A deletion calls it: secure_delete
// overwrites the deleted rows in the pages it writes, but the log's older frames of those pages still hold them,
// and a restarted log is written again from its start without being cut, so frames past what is written again
// would keep them.
func (c *checkpointer) requestTruncate() {
	select {
	case c.truncates <- struct{}{}:
	default: // asked already
	}
}

// truncate copies the whole log into the database file and cuts the log to nothing, and reports whether it did.
// It waits for readers of older snapshots, and holds new writes back meanwhile, for boundWait at the most; the
// loop tries again at its next tick otherwise. Deletions are rare, so is the fsync that the next write then pays
// for the new log's header.
func (c *checkpointer) truncate(ctx context.Context) bool {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, boundWait.Milliseconds())); err != nil {
		return false
	}
	defer func() {
		_, _ = conn.ExecContext(context.Background(), fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeout.Milliseconds()))
	}()
	var busy, frames, copied int
	err = conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied)
	return err == nil && busy == 0
}

// close stops the background checkpoints and copies the whole log into the database file, emptying it.
func (c *checkpointer) close() error {
	c.cancel()
	<-c.done
	_, err := c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`)
	if closeErr := c.db.Close(); err == nil {
		err = closeErr
	}
	return err
}
