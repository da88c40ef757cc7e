package sqlite

import (
	"context"
	"database/sql"
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
}

func startCheckpointer(db *sql.DB, w *writer, cfg checkpointing) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, writer: w, cancel: cancel, done: make(chan struct{})}
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
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
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
