package sqlite

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// walCheckpoints is the checkpoint sequence number in the header of the write-ahead log at path, which SQLite
// increments each time it restarts the log from its first frame.
func walCheckpoints(t *testing.T, path string) uint32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var header [16]byte
	if _, err := f.ReadAt(header[:], 0); err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(header[12:])
}

// settledCheckpoints waits until the log's checkpoint count has not changed for quiet, and returns it.
func settledCheckpoints(t *testing.T, wal string, quiet time.Duration) uint32 {
	t.Helper()
	n, since := walCheckpoints(t, wal), time.Now()
	for deadline := time.Now().Add(5 * time.Second); time.Since(since) < quiet; time.Sleep(quiet / 10) {
		if time.Now().After(deadline) {
			t.Fatalf("the log kept restarting for 5s after the last write")
		}
		if m := walCheckpoints(t, wal); m != n {
			n, since = m, time.Now()
		}
	}
	return n
}

// Once the background checkpoint has copied the whole log, the log is restarted while the store is idle, not by
// the next caller's write, which would wait for the restart's fsync; and once restarted it is left alone.
func TestIdleLogRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	const every = 20 * time.Millisecond
	s, err := open(t.Context(), path, checkpointing{every: every})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	mustWrite(t, s, `CREATE TABLE t (n INTEGER PRIMARY KEY)`)
	wal := path + "-wal"
	for round := range 3 {
		before := walCheckpoints(t, wal)
		for i := range 50 {
			mustWrite(t, s, `INSERT INTO t (n) VALUES (?)`, round*100+i)
			// The first write after the idle restart appends to the restarted log. (Later ones may come after the
			// next checkpoint and restart, the writer being idle between them.)
			if n := walCheckpoints(t, wal); round > 0 && i == 0 && n != before {
				t.Fatalf("round %d: the first write restarted the log", round)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for walCheckpoints(t, wal) == before {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the log was not restarted within 5s of the last write", round)
			}
			time.Sleep(every)
		}
		// A restart in the middle of the round's writes may be followed by one for the writes after it: the
		// count is read once no restart has come for 10 periods.
		restarted := settledCheckpoints(t, wal, 10*every)
		// A write that changes nothing (the webhook dispatcher's claims, every second) is no reason to restart.
		mustWrite(t, s, `UPDATE t SET n = n WHERE n < 0`)
		time.Sleep(10 * every)
		if n := walCheckpoints(t, wal); n != restarted {
			t.Fatalf("round %d: an idle store restarted its log %d more times", round, n-restarted)
		}
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 150 {
		t.Fatalf("%d rows, want 150", n)
	}
}

func TestRestartLog(t *testing.T) {
	for _, c := range []struct {
		busy, frames, copied int
		want                 bool
	}{
		{0, 120, 120, true},
		{0, 120, 80, false}, // a reader holds frames back; the next checkpoint copies them
		{1, 120, 120, false},
		{0, 1, 1, true}, // a restart's own frame, copied with a write that came with the restart
		{0, 0, 0, false},
		{0, -1, -1, false}, // not in WAL mode
	} {
		if got := restartLog(c.busy, c.frames, c.copied); got != c.want {
			t.Errorf("restartLog(%d, %d, %d) = %v, want %v", c.busy, c.frames, c.copied, got, c.want)
		}
	}
}

// Under writes that never pause, no background checkpoint ever finds the whole log copied, so SQLite never
// restarts it: the log must still stay near its bound, not grow with every write, and nothing written is lost.
func TestLogBoundedUnderContinuousWrites(t *testing.T) {
	path := filepath.Join(memoryDir(t), "parley.db")
	const maxLog = 1 << 20
	s, err := open(t.Context(), path, checkpointing{every: 10 * time.Millisecond, maxLogBytes: maxLog})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	mustWrite(t, s, `CREATE TABLE t (n INTEGER PRIMARY KEY, pad TEXT)`)
	const writers, each = 4, 3000
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.write(ctx, func(tx *txn) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO t (n, pad) VALUES (?, ?)`, g*each+i, strings.Repeat("x", 2000))
					return err
				}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var largest int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(time.Millisecond):
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The rows come to 24 MB, and the log unbounded grows past 100 MB (every commit writes its pages again); it
	// may pass its bound by what is written between two checkpoints and while the writer empties it.
	if largest > 40*maxLog {
		t.Errorf("the log reached %d KiB under continuous writes; its bound is %d KiB", largest>>10, maxLog>>10)
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != writers*each {
		t.Fatalf("%d rows (%v), want %d", n, err, writers*each)
	}
}

// memoryDir is a temporary directory in memory (tmpfs) where the machine has one, else on disk. The log's bound
// is tested there: the test writes at memory speed, and on a shared disk a checkpoint's fsync can take long
// enough for the log to pass 100 MB first (seen on ext4, one run in three), which tests the disk, not the bound.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "parley-sqlite-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
