package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// mustWrite runs query with args in a write transaction of s.
func mustWrite(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	if err := s.write(t.Context(), func(tx *txn) error {
		_, err := tx.ExecContext(t.Context(), query, args...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// Writes that queue up share a transaction; each must still succeed or fail alone, and a caller that gives up
// must not undo the others.
func TestGroupCommitKeepsWritesApart(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	mustWrite(t, s, `CREATE TABLE t (n INTEGER PRIMARY KEY)`)
	errOdd := errors.New("odd numbers fail")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := ctx
			if i%10 == 4 {
				c = cancelled
			}
			errs[i] = s.write(c, func(tx *txn) error {
				if _, err := tx.ExecContext(c, `INSERT INTO t (n) VALUES (?)`, i); err != nil {
					return err
				}
				if i%2 == 1 {
					return errOdd // after writing: the row must be rolled back
				}
				return nil
			})
		})
	}
	wg.Wait()
	want := 0
	for i, err := range errs {
		switch {
		case i%10 == 4:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("write %d with a cancelled context: %v", i, err)
			}
		case i%2 == 1:
			if !errors.Is(err, errOdd) {
				t.Errorf("write %d: %v, want its own error", i, err)
			}
		case err != nil:
			t.Errorf("write %d: %v", i, err)
		default:
			want++
		}
	}
	var got, odd int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE n % 2 = 1) FROM t`).Scan(&got, &odd); err != nil {
		t.Fatal(err)
	}
	if got != want || odd != 0 {
		t.Errorf("%d rows stored (%d odd), want %d and no odd one", got, odd, want)
	}
}

func TestWriteAfterClose(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.write(t.Context(), func(*txn) error { return nil }); !errors.Is(err, storeutil.ErrClosed) {
		t.Errorf("write after Close: %v, want storeutil.ErrClosed", err)
	}
}

// With automatic checkpoints off on the writer, only the background checkpointer moves committed pages from the
// write-ahead log into the database file, and Close leaves the log empty.
func TestBackgroundCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size(path)
	if err := s.write(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE t (b BLOB)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
			INSERT INTO t SELECT randomblob(1024) FROM n`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * checkpointEvery)
	for size(path) < before+500*1024 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes %s after the write; the log was not checkpointed", size(path), 3*checkpointEvery)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := size(path + "-wal"); n != 0 {
		t.Errorf("the write-ahead log holds %d bytes after Close", n)
	}
}
