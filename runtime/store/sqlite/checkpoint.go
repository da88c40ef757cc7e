package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// checkpointEvery is how often the write-ahead log is copied back into the database file.
const checkpointEvery = time.Second

// checkpointer copies the write-ahead log into the database file from its own connection, in the background.
// SQLite would otherwise do it inside the commit that fills the log, and the writes queued behind that commit
// would wait for its fsync: the source of the slowest answers under load.
type checkpointer struct {
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
}

func startCheckpointer(db *sql.DB) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, cancel: cancel, done: make(chan struct{})}
	go c.loop(ctx)
	return c
}

func (c *checkpointer) loop(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// PASSIVE never waits for readers or the writer; what it cannot copy now, the next run does. A
			// failure is retried the same way, and the log only grows meanwhile.
			_, _ = c.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
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
