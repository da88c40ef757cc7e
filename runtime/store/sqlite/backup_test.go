package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/rowdump"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// dumpAll returns every row of every table of the database at path, sorted.
func dumpAll(t *testing.T, path string) []string {
	t.Helper()
	db := openReadOnly(t, path)
	defer db.Close()
	return rowdump.SQLite(t, db, "")
}

// TestBackupChangeRestore backs up a store in use, changes it, restores the backup into the stopped store's
// file, and finds every row as it was at the backup.
func TestBackupChangeRestore(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	data := filepath.Join(dir, "data", "parley.db")
	s, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	seedMarked(t, s, "m1", "KEEP", 5)
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Returns", Content: "30 days",
		CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}

	backupFile := filepath.Join(dir, "backups", "one.db")
	info, err := sqlite.Backup(ctx, data, backupFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(backupFile)
	if err != nil || info.Size != st.Size() || info.SchemaVersion < 1 || info.Path != backupFile {
		t.Fatalf("Backup = %+v; the file: %v, %v", info, st, err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the backup's mode is %v; it holds personal data", st.Mode().Perm())
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "backups", "*.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := dumpAll(t, data)

	// Change everything a mistake could: new rows, a deleted knowledge item, an erased merchant.
	s, err = sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	seedMarked(t, s, "m1", "LATER", 2)
	if err := s.Write(ctx, func(tx store.Tx) error { return tx.DeleteKnowledge(ctx, "m1", "k1") }); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx store.Tx) error { _, err := tx.EraseMerchant(ctx, "m1"); return err }); err != nil {
		t.Fatal(err)
	}

	if _, err := sqlite.Restore(ctx, backupFile, data, time.Now()); !errors.Is(err, sqlite.ErrInUse) {
		t.Fatalf("Restore while the store is open = %v, want ErrInUse", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	changed := dumpAll(t, data)
	if slices.Equal(changed, want) {
		t.Fatal("the change changed nothing")
	}

	kept, err := sqlite.Restore(ctx, backupFile, data, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpAll(t, data); !slices.Equal(got, want) {
		t.Errorf("after the restore:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if kept != data+".before-restore-20260310T120000Z" {
		t.Errorf("the replaced database was kept as %q", kept)
	}
	if got := dumpAll(t, kept); !slices.Equal(got, changed) {
		t.Error("the replaced database was not kept as it was")
	}

	// The restored store opens and serves.
	s, err = sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if k, err := s.GetKnowledge(ctx, "m1", "k1"); err != nil || k.Content != "30 days" {
		t.Errorf("the restored knowledge: %+v, %v", k, err)
	}
}

// TestBackupUnderWrites backs up while a writer commits, and finds in the backup a whole number of the writer's
// transactions: a consistent snapshot.
func TestBackupUnderWrites(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	data := filepath.Join(dir, "parley.db")
	s, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seedMarked(t, s, "m1", "SEED", 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := storetest.WriteExchange(ctx, s, exchange(fmt.Sprintf("w%05d", i), "question")); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range 3 {
		file := filepath.Join(dir, fmt.Sprintf("b%d.db", i))
		if _, err := sqlite.Backup(ctx, data, file); err != nil {
			t.Fatal(err)
		}
		db := openReadOnly(t, file)
		var conversations, messages int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages)`).Scan(&conversations, &messages); err != nil {
			t.Fatal(err)
		}
		_ = db.Close()
		if messages != 2*conversations {
			t.Errorf("backup %d holds %d conversations and %d messages: not one snapshot", i, conversations, messages)
		}
	}
	close(stop)
	wg.Wait()
}

func TestVerifyRefuses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	data := filepath.Join(dir, "parley.db")
	s, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	seedMarked(t, s, "m1", "ROW", 30)
	good := filepath.Join(dir, "good.db")
	if _, err := sqlite.Backup(ctx, data, good); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A page in the middle overwritten: the integrity check finds it.
	damaged := bytes.Clone(raw)
	copy(damaged[len(damaged)/2:], bytes.Repeat([]byte{0xA5}, 4096))
	// A SQLite database that is not Parley's.
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	// A database migrated past what this version knows.
	newer := filepath.Join(dir, "newer.db")
	if _, err := sqlite.Backup(ctx, data, newer); err != nil {
		t.Fatal(err)
	}
	db, err = sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"missing":    {filepath.Join(dir, "nothing.db"), "no such file"},
		"directory":  {dir, "not a regular file"},
		"not sqlite": {write("text.db", []byte("just some text, not a database at all")), "not a database"},
		"truncated":  {write("truncated.db", raw[:len(raw)/3]), ""},
		"damaged":    {write("damaged.db", damaged), ""},
		"not parley": {other, "not a Parley database"},
		"newer":      {newer, "newer Parley"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := sqlite.Verify(ctx, tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify = %v, want an error containing %q", err, tc.want)
			}
			// Restore checks first and leaves the database as it was.
			before := dumpAll(t, data)
			if _, err := sqlite.Restore(ctx, tc.path, data, time.Now()); err == nil {
				t.Error("Restore accepted it")
			}
			if after := dumpAll(t, data); !slices.Equal(before, after) {
				t.Error("a refused restore changed the database")
			}
		})
	}
	if _, err := sqlite.Verify(ctx, good); err != nil {
		t.Errorf("Verify of a good backup: %v", err)
	}
}

// TestBackupRefusesNoSource checks that a missing database is an error, not a backup of an empty one.
func TestBackupRefusesNoSource(t *testing.T) {
	dir := t.TempDir()
	if _, err := sqlite.Backup(context.Background(), filepath.Join(dir, "none.db"), filepath.Join(dir, "b.db")); err == nil {
		t.Error("Backup of a missing database succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("left behind: %v", entries)
	}
}
