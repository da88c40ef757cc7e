// Package postgres is the store.Store that replicas share: PostgreSQL through a pgx connection pool, with its
// schema migrated by embedded goose migrations under an advisory lock, so replicas starting together migrate once.
//
// The ceilings are exact under concurrency, across replicas: a new conversation claims a slot of a per-merchant,
// per-month counter row with a conditional upsert, and a new knowledge item one of a per-merchant counter row, in
// the transaction that writes it. PostgreSQL serialises the writers of one row, so the last slot is taken once.
//
// Under load, the exchanges that queue up while the store's writers are busy share a transaction (group commit),
// and are written a few statements a group (see writers and deferredWrites).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL store.Store. It is safe for concurrent use, and any number of Stores, in one process or
// many, may share a database.
type Store struct {
	// Reads are the reads both stores share, made from the pool.
	storeutil.Reads
	pool    *pgxpool.Pool
	writers *writers
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value connection string) and brings its
// schema up to date. Errors never contain the URL's password.
func Open(ctx context.Context, url string) (*Store, error) {
	s, err := open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("opening postgres store: %w", err)
	}
	return s, nil
}

func open(ctx context.Context, url string) (*Store, error) {
	if url == "" {
		return nil, errors.New("empty database URL")
	}
	// pgx redacts the password from the errors of ParseConfig and of connecting.
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing the database URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the connection pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting: %w", err)
	}
	if err := migrate(ctx, cfg.ConnConfig, latest); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{Reads: reads(pool), pool: pool}
	// Half the pool writes, so that reads always find a connection: 2 with pgx's default pool on 2 cores, which
	// made the most exchanges a second of 1, 2 and 4 (BenchmarkRecordExchange).
	s.writers = startWriters(s, max(2, int(cfg.MaxConns)/2))
	return s, nil
}

// latest is the version of the last migration, for migrate.
const latest = math.MaxInt64

// migrate applies the embedded migrations up to version (latest: all), holding a session advisory lock so that
// concurrent replicas wait for one another.
func migrate(ctx context.Context, cfg *pgx.ConnConfig, version int64) (err error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// Another replica migrating holds the lock for well under a second: try every second, for five minutes.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("creating the migration lock: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer func() { err = errors.Join(err, db.Close()) }()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithDisableGlobalRegistry(true),
		goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("loading migrations: %w", err)
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pinging postgres store: %w", err)
	}
	return nil
}

// Collectors are the store's metrics, for a registry: its group commits' (storeutil.GroupMetrics).
func (s *Store) Collectors() []prometheus.Collector { return s.writers.metrics.Collectors() }

// Close closes the connection pool, waiting for connections in use to be released.
func (s *Store) Close() error {
	s.writers.close()
	s.pool.Close()
	return nil
}

// maxWriteRuns bounds how many times Write runs a callback that keeps losing a race to other transactions.
const maxWriteRuns = 5

// Write runs fn in a read-committed transaction of its own, committed when fn returns nil and rolled back
// otherwise. A run that lost a race to a concurrent transaction, of this replica or another, is rolled back and fn
// is run again, up to maxWriteRuns times in all: see retryable. The transaction's statements are pipelined (see
// pipeline).
func (s *Store) Write(ctx context.Context, fn func(store.Tx) error) error {
	return storeutil.Repanic(s.writeAlone(ctx, fn))
}

// WriteExchange is Write on one of the store's writers: under load the exchanges waiting for a writer share its
// transaction (see writers), and should any of them fail, each runs again in a transaction of its own, so that one
// exchange's failure never undoes another.
func (s *Store) WriteExchange(ctx context.Context, fn func(store.Tx) error) error {
	return s.writers.queue.Write(ctx, fn)
}

// writeAlone runs fn in a transaction of its own, as Write does, and returns a panic in fn as a storeutil.Panic.
func (s *Store) writeAlone(ctx context.Context, fn func(store.Tx) error) error {
	for run := 1; ; run++ {
		err := s.write(ctx, fn)
		if err == nil || run == maxWriteRuns || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

// write runs fn in one transaction, on a connection of the pool.
func (s *Store) write(ctx context.Context, fn func(store.Tx) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquiring a connection: %w", err)
	}
	defer c.Release()
	p := begin(c.Conn())
	if err := storeutil.Call(fn, store.Tx(writeTx{p})); err != nil {
		p.rollback(ctx)
		return err
	}
	if err := p.commit(ctx); err != nil {
		p.rollback(ctx)
		return err
	}
	return nil
}

// retryable reports whether err means that the transaction lost a race and that running it again, on the data
// the winner committed, can succeed: a serialisation failure, a deadlock (the runtime's own writes lock a
// conversation before its lead, in one order, so this is a defence for what the runtime does not foresee), or a lead of the
// same visitor and conversation inserted by another transaction since FindLead found none (run again, FindLead
// finds it and the contact is merged into it).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case serializationFailure, deadlockDetected:
		return true
	case uniqueViolation:
		return pgErr.ConstraintName == "leads_by_conversation"
	}
	return false
}

// refusal is the store's error for a statement the database refused by a rule of the store's (a constraint
// that the store's methods count on), or err.
func refusal(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != checkViolation {
		return err
	}
	switch pgErr.ConstraintName {
	case "monthly_conversations_within_ceiling":
		return store.ErrQuotaExceeded
	case "conversations_within_message_cap":
		return store.ErrConversationFull
	}
	return err
}

// The SQLSTATE codes of the errors retryable and refusal look for.
const (
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
	uniqueViolation      = "23505"
	checkViolation       = "23514"
)

// writeTx is a write transaction's statements (store.Tx).
type writeTx struct{ *pipeline }

var _ store.Tx = writeTx{}

// read runs fn in a read-only repeatable-read transaction, which sees one snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// stamp is t as stored: truncated to the millisecond, in UTC.
func stamp(t time.Time) time.Time {
	return storeutil.FromMillis(storeutil.Millis(t))
}

// mustAffect turns a statement that changed no row into store.ErrNotFound.
func mustAffect(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// reads are the store's shared reads, read from pool.
func reads(pool *pgxpool.Pool) storeutil.Reads {
	snapshot := func(ctx context.Context, fn func(storeutil.QueryFunc) error) error {
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
			func(tx pgx.Tx) error { return fn(queryFunc(tx)) })
	}
	return storeutil.Reads{Dialect: dialect{}, Query: queryFunc(pool), Snapshot: snapshot, ScanConversation: scanConversation,
		ScanMessage: scanMessage, ScanKnowledge: scanKnowledge, ScanLead: scanLead, ScanDelivery: scanDelivery,
		ScanAttempt: scanAttempt}
}

// queryFunc runs queries on a pool or in a transaction.
func queryFunc(q querier) storeutil.QueryFunc {
	return func(ctx context.Context, query string, args []any) (storeutil.Rows, func(), error) {
		rows, err := q.Query(ctx, query, args...)
		return rows, func() { rows.Close() }, err
	}
}

// dialect is PostgreSQL's form of the listing queries.
type dialect struct{}

// Placeholder is $n, cast where PostgreSQL cannot infer the type (row comparisons, function arguments).
func (dialect) Placeholder(n int, typ string) string {
	p := "$" + strconv.Itoa(n)
	switch typ {
	case "timestamp":
		return p + "::timestamptz"
	case "text":
		return p + "::text"
	}
	return p
}

// Value stores times with millisecond precision.
func (dialect) Value(v any) any {
	if t, ok := v.(time.Time); ok {
		return stamp(t)
	}
	return v
}

// ContainsFold compares with the database's ctype, Unicode-aware in a UTF-8 locale; strpos, unlike LIKE, takes %
// and _ literally.
func (dialect) ContainsFold(column string) string {
	return "strpos(lower(" + column + "), lower(?)) > 0"
}

// Millis converts the timestamptz, kept to the millisecond (stamp), to unix milliseconds.
func (dialect) Millis(column string) string {
	return "FLOOR(EXTRACT(EPOCH FROM " + column + ") * 1000)::bigint"
}

// HasTag reads the text[] of tags.
func (dialect) HasTag(column string) string { return "? = ANY(" + column + ")" }
