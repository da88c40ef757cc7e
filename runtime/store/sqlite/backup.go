package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// BackupInfo describes a checked backup file.
type BackupInfo struct {
	// Path is the backup's file.
	Path string
	// Size is its length in bytes.
	Size int64
	// SchemaVersion is the last store migration it holds.
	SchemaVersion int64
}

// ErrInUse is returned by Restore when a process has the database open.
var ErrInUse = errors.New("the database is in use: stop the runtime first")

// Backup writes a consistent copy of the database file src to dst, while src may be in use: VACUUM INTO reads
// one snapshot from a read-only connection of its own, so the runtime's writer never waits for it, and copies only
// live rows, so what was erased before the backup is not in it. The copy is written under a temporary name in
// dst's directory, synced, checked (Verify) and only then renamed to dst, so dst is either a whole checked
// backup or absent. An existing dst is replaced.
func Backup(ctx context.Context, src, dst string) (BackupInfo, error) {
	info, err := backup(ctx, src, dst)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backing up %s to %s: %w", src, dst, err)
	}
	return info, nil
}

func backup(ctx context.Context, src, dst string) (BackupInfo, error) {
	if _, err := os.Stat(src); err != nil {
		return BackupInfo{}, err // VACUUM INTO would back up a new, empty database
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return BackupInfo{}, fmt.Errorf("creating directory: %w", err)
	}
	tmp, err := tempName(dst)
	if err != nil {
		return BackupInfo{}, err
	}
	defer func() { _ = os.Remove(tmp) }() // gone once renamed
	db, err := openReadOnly(ctx, src)
	if err != nil {
		return BackupInfo{}, err
	}
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	if err = errors.Join(err, db.Close()); err != nil {
		return BackupInfo{}, err
	}
	// The backup holds personal data. SQLite does not sync what VACUUM INTO writes.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return BackupInfo{}, err
	}
	if err := syncFile(tmp); err != nil {
		return BackupInfo{}, err
	}
	info, err := Verify(ctx, tmp)
	if err != nil {
		return BackupInfo{}, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return BackupInfo{}, err
	}
	info.Path = dst
	return info, syncFile(dir)
}

// Verify checks that path is a whole SQLite database of this store that this version can open: its integrity
// check and foreign key check pass and its last migration is one this version knows.
func Verify(ctx context.Context, path string) (BackupInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("checking %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return BackupInfo{}, fmt.Errorf("checking %s: not a regular file", path)
	}
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("checking %s: %w", path, err)
	}
	version, err := verify(ctx, db)
	if err = errors.Join(err, db.Close()); err != nil {
		return BackupInfo{}, fmt.Errorf("checking %s: %w", path, err)
	}
	return BackupInfo{Path: path, Size: st.Size(), SchemaVersion: version}, nil
}

func verify(ctx context.Context, db *sql.DB) (int64, error) {
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return 0, fmt.Errorf("not a SQLite database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return 0, errors.Join(err, rows.Close())
		}
		problems = append(problems, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, fmt.Errorf("not a SQLite database: %w", err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return 0, fmt.Errorf("integrity check failed: %s", strings.Join(problems, "; "))
	}
	var table string
	err = db.QueryRowContext(ctx, `SELECT "table" FROM pragma_foreign_key_check LIMIT 1`).Scan(&table)
	switch {
	case err == nil:
		return 0, fmt.Errorf("foreign key check failed in table %s", table)
	case !errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("foreign key check: %w", err)
	}
	var version sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
		return 0, fmt.Errorf("not a Parley database (no migrations table): %w", err)
	}
	latest, err := latestMigration()
	if err != nil {
		return 0, err
	}
	switch {
	case !version.Valid || version.Int64 < 1:
		return 0, errors.New("not a Parley database (no migration applied)")
	case version.Int64 > latest:
		return 0, fmt.Errorf("written by a newer Parley: schema version %d, this version knows up to %d", version.Int64, latest)
	}
	return version.Int64, nil
}

// latestMigration is the version of the last migration this version of the store applies.
func latestMigration() (int64, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, n := range names {
		var v int64
		if _, err := fmt.Sscanf(n, "%d_", &v); err != nil {
			return 0, fmt.Errorf("migration %s has no version: %w", n, err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// Restore replaces the database file data with the backup from, after checking the backup (Verify) and that no
// process has data open (ErrInUse). The database it replaces is kept beside it, with its write-ahead log, under
// the name Restore returns ("" when there was none), for the operator to delete once the restore is confirmed.
// The backup is copied under a temporary name in data's directory and synced before it takes data's name, so a
// failure leaves data as it was.
func Restore(ctx context.Context, from, data string, now time.Time) (kept string, err error) {
	if kept, err = restore(ctx, from, data, now); err != nil {
		return "", fmt.Errorf("restoring %s from %s: %w", data, from, err)
	}
	return kept, nil
}

func restore(ctx context.Context, from, data string, now time.Time) (string, error) {
	if _, err := Verify(ctx, from); err != nil {
		return "", err
	}
	_, err := os.Stat(data)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if exists {
		if err := notInUse(ctx, data); err != nil {
			return "", err
		}
	}
	dir := filepath.Dir(data)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("creating directory: %w", err)
	}
	tmp, err := tempName(data)
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp) }() // gone once renamed
	if err := copyFile(from, tmp); err != nil {
		return "", err
	}
	kept := ""
	if exists {
		// The log and shared memory files move with their database: left behind, SQLite would apply the old
		// database's log to the restored one.
		kept = data + ".before-restore-" + now.UTC().Format("20060102T150405Z")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(data+suffix, kept+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("keeping the database it replaces: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, data); err != nil {
		return "", err
	}
	return kept, syncFile(dir)
}

// notInUse returns ErrInUse when another connection, of this process or another on this machine, has the database
// at path open. Every connection to a database in WAL mode holds a shared lock on its file while it is open, so
// the exclusive lock a connection in exclusive locking mode takes is refused at once.
func notInUse(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dsn := "file:" + escapePath(abs) + "?_pragma=busy_timeout(0)&_pragma=locking_mode(EXCLUSIVE)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, `BEGIN EXCLUSIVE; COMMIT`); err != nil {
		if strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked") {
			return ErrInUse
		}
		return fmt.Errorf("locking the database: %w", err)
	}
	return nil
}

// openReadOnly opens the database at path with one read-only connection.
func openReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return openDB(ctx, "file:"+escapePath(abs)+"?mode=ro&_pragma=busy_timeout(5000)", 1)
}

// tempName is a new name beside path for a file that takes path's name once whole.
func tempName(path string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s.tmp-%x", path, b), nil
}

// copyFile copies the file src to the new file dst and syncs it.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}

// syncFile flushes the file or directory at path to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
