// Package sqlite is the embedded store.Store: one SQLite file in WAL mode, written through a single
// connection with BEGIN IMMEDIATE transactions and read through a pool of read-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/prometheus/client_golang/prometheus"
	sqlite "modernc.org/sqlite"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

//go:embed migrations/*.sql
var migrations embed.FS

// containsFoldFunc is the SQL function for case-insensitive substring search (Unicode-aware, unlike LIKE).
const containsFoldFunc = "parley_contains_fold"

// Store is the SQLite store.Store. It is safe for concurrent use.
type Store struct {
	// Reads are the reads both stores share, made with the reader.
	storeutil.Reads
	writer *writer // one connection: writes queue in Go instead of failing with SQLITE_BUSY
	reader *db
	// checkpoints copies the write-ahead log into the database file, off the writer's path.
	checkpoints *checkpointer
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it and its directory if missing) the database file at path and brings its schema up to
// date.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := open(ctx, path, checkpointing{every: checkpointEvery, maxLogBytes: maxLogBytes})
	if err != nil {
		return nil, fmt.Errorf("opening sqlite store %s: %w", path, err)
	}
	return s, nil
}

// open is Open with the background checkpoints as c says.
func open(ctx context.Context, path string, c checkpointing) (*Store, error) {
	if path == "" {
		return nil, errors.New("empty path")
	}
	if err := registerFunctions(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("creating directory: %w", err)
	}
	writer, err := openDB(ctx, dsn(abs, true), 1)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, writer); err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	reader, err := openDB(ctx, dsn(abs, false), max(4, runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	checkpoints, err := openDB(ctx, dsn(abs, true), 1)
	if err != nil {
		return nil, errors.Join(err, reader.Close(), writer.Close())
	}
	r := newDB(reader)
	w := newWriter(newDB(writer))
	return &Store{Reads: reads(r), writer: w, reader: r, checkpoints: startCheckpointer(checkpoints, w, c)}, nil
}

// busyTimeout is how long a connection waits for a lock another holds before its statement fails.
const busyTimeout = 5 * time.Second

// dsn builds the driver's data source name. The writer takes the write lock when a transaction begins
// (BEGIN IMMEDIATE), switches the file to WAL and overwrites what it deletes; readers cannot write.
func dsn(path string, write bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if write {
		// A deletion overwrites what it deletes, in the database file and in the log, instead of leaving it in
		// free pages: erased personal data must not be readable in the file.
		q.Add("_pragma", "secure_delete(1)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "wal_autocheckpoint(0)") // see checkpointer
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return "file:" + escapePath(path) + "?" + q.Encode()
}

// escapePath is path as the path of a file: URI.
func escapePath(path string) string { return (&url.URL{Path: path}).EscapedPath() }

func openDB(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	p, err := migrator(db)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	return nil
}

// migrator is the provider of the store's migrations on db.
func migrator(db *sql.DB) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("loading migrations: %w", err)
	}
	return p, nil
}

var (
	registerOnce sync.Once
	registerErr  error
)

// registerFunctions adds the store's SQL functions to the driver, once per process.
func registerFunctions() error {
	registerOnce.Do(func() {
		registerErr = sqlite.RegisterDeterministicScalarFunction(containsFoldFunc, 2, containsFold)
	})
	return registerErr
}

// containsFold implements parley_contains_fold(haystack, needle); NULL arguments do not match.
func containsFold(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	haystack, ok1 := args[0].(string)
	needle, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return int64(0), nil
	}
	if storeutil.ContainsFold(haystack, needle) {
		return int64(1), nil
	}
	return int64(0), nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.reader.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite store: %w", err)
	}
	if err := s.writer.db.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite store: %w", err)
	}
	return nil
}

// Collectors are the store's metrics, for a registry: its group commits' (storeutil.GroupMetrics).
func (s *Store) Collectors() []prometheus.Collector { return s.writer.metrics.Collectors() }

// Close closes the database.
func (s *Store) Close() error {
	s.writer.close()
	if err := errors.Join(s.reader.Close(), s.checkpoints.close(), s.writer.db.Close()); err != nil {
		return fmt.Errorf("closing sqlite store: %w", err)
	}
	return nil
}

// write runs fn in a write transaction, committed when fn returns nil and rolled back otherwise.
func (s *Store) write(ctx context.Context, fn func(tx *txn) error) error {
	return s.writer.write(ctx, fn)
}

// Write runs fn in a write transaction. Writes are queued to the one writing connection and committed in groups;
// when a group fails, each of its callbacks is run again alone.
//
// A write that deleted personal data asks the checkpointer to empty the log once it has committed: asked from
// inside the transaction, the checkpoint could run before the deletion's own frames were in the log and leave
// them there.
func (s *Store) Write(ctx context.Context, fn func(store.Tx) error) error {
	erased := false
	err := s.writer.write(ctx, func(tx *txn) error {
		erased = false // a group that failed runs its callbacks again, alone
		return fn(writeTx{txn: tx, erased: func() { erased = true }})
	})
	if err == nil && erased {
		s.checkpoints.requestTruncate()
	}
	return err
}

// WriteExchange is Write: the one writing connection runs every write, exchanges or not, in its group commits.
func (s *Store) WriteExchange(ctx context.Context, fn func(store.Tx) error) error {
	return s.Write(ctx, fn)
}

// writeTx is a write transaction's statements (store.Tx).
type writeTx struct {
	*txn
	// erased records that the transaction deleted personal data, whose older versions the log still holds until
	// it is emptied (see checkpointer.truncate): Write asks for that once the transaction has committed.
	erased func()
}

// read runs fn in a read-only transaction, which sees one snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(tx *txn) error) error {
	return s.reader.read(ctx, fn)
}

// reads are the store's shared reads, read with r.
func reads(r *db) storeutil.Reads {
	snapshot := func(ctx context.Context, fn func(storeutil.QueryFunc) error) error {
		return r.read(ctx, func(tx *txn) error { return fn(tx.rows) })
	}
	return storeutil.Reads{Dialect: dialect{}, Query: r.rows, Snapshot: snapshot, ScanConversation: scanConversation,
		ScanMessage: scanMessage, ScanKnowledge: scanKnowledge, ScanLead: scanLead, ScanDelivery: scanDelivery,
		ScanAttempt: scanAttempt}
}

// dialect is SQLite's form of the listing queries.
type dialect struct{}

// Placeholder is ?: SQLite needs no types.
func (dialect) Placeholder(int, string) string { return "?" }

// Value stores times as unix milliseconds and bools as 0 or 1.
func (dialect) Value(v any) any {
	switch v := v.(type) {
	case time.Time:
		return storeutil.Millis(v)
	case bool:
		return boolInt(v)
	}
	return v
}

// ContainsFold calls the registered function: SQLite's LIKE folds ASCII only.
func (dialect) ContainsFold(column string) string { return containsFoldFunc + "(" + column + ", ?)" }

// HasTag reads the JSON array of tags.
func (dialect) HasTag(column string) string {
	return "EXISTS (SELECT 1 FROM json_each(" + column + ") t WHERE t.value = ?)"
}

// Millis is the column itself: SQLite keeps times as unix milliseconds.
func (dialect) Millis(column string) string { return column }

// boolInt converts a Go bool to SQLite's 0 or 1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
