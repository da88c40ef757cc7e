package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// maxStatements bounds the prepared statements kept per database handle. The store's queries are a fixed set of
// texts (filters vary the text only among a few shapes; values are always bound), so the bound is never reached
// in practice; past it, statements are simply not cached.
const maxStatements = 256

// db is a database handle that prepares each query text once and reuses the statement: SQLite takes longer to
// parse most of the store's statements than to run them.
//
// A statement can only be prepared outside a transaction: the writer has a single connection, which the
// transaction holds. So a query first seen inside a transaction runs unprepared and is prepared when the
// transaction ends; database/sql then reuses the statement on the transaction's connection (Tx.StmtContext).
type db struct {
	*sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// wanted are queries seen inside transactions, to prepare once the connection is free.
	wanted map[string]struct{}
	// conversationInserts, conversationUpserts, messageInserts and citationCounts are the texts of flush's
	// statements by number of rows or items (see statementText).
	conversationInserts, conversationUpserts, messageInserts [maxRows + 1]string
	citationCounts                                           [maxCitations + 1]string
	// deferred are the deferred writes of the write transaction in progress (see flush), kept here so that their
	// slices and maps are made once: the writer's handle runs one write transaction at a time.
	deferred deferredWrites
}

func newDB(d *sql.DB) *db {
	return &db{DB: d, stmts: map[string]*sql.Stmt{}, wanted: map[string]struct{}{}}
}

// stmt returns the prepared statement of query, preparing it now. It must not be called inside a transaction.
func (d *db) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	d.mu.Lock()
	st, ok := d.stmts[query]
	full := len(d.stmts) >= maxStatements
	d.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := d.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.stmts[query]; ok { // prepared meanwhile by another caller
		_ = st.Close()
		return prev, nil
	}
	d.stmts[query] = st
	return st, nil
}

// lookup returns the prepared statement of query if there is one, and otherwise notes it for prepareWanted.
func (d *db) lookup(query string) *sql.Stmt {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, ok := d.stmts[query]
	if !ok && len(d.stmts)+len(d.wanted) < maxStatements {
		d.wanted[query] = struct{}{}
	}
	return st
}

// prepareWanted prepares the queries lookup did not find. Called after a transaction, when no connection is held.
func (d *db) prepareWanted(ctx context.Context) {
	d.mu.Lock()
	if len(d.wanted) == 0 {
		d.mu.Unlock()
		return
	}
	queries := make([]string, 0, len(d.wanted))
	for q := range d.wanted {
		queries = append(queries, q)
	}
	clear(d.wanted)
	d.mu.Unlock()
	for _, q := range queries {
		// A statement that fails to prepare fails when run, and is reported there.
		_, _ = d.stmt(ctx, q)
	}
}

// QueryContext runs a query outside a transaction with its prepared statement.
func (d *db) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return d.DB.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// rows runs a query and returns its rows and the function that closes them, for storeutil.Reads.
func (d *db) rows(ctx context.Context, query string, args []any) (storeutil.Rows, func(), error) {
	rows, err := d.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { _ = rows.Close() }, nil
}

// read runs fn in a read-only transaction, which sees one snapshot of the database.
func (d *db) read(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := d.begin(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer d.prepareWanted(ctx)
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// QueryRowContext runs a query outside a transaction with its prepared statement.
func (d *db) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := d.stmt(ctx, query)
	if err != nil || st == nil {
		// Without a statement the unprepared query reports the error, or runs.
		return d.DB.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// Close closes the prepared statements and the database.
func (d *db) Close() error {
	d.mu.Lock()
	for _, st := range d.stmts {
		_ = st.Close()
	}
	clear(d.stmts)
	d.mu.Unlock()
	return d.DB.Close()
}

// begin starts a transaction whose statements are the handle's prepared ones.
func (d *db) begin(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	tx, err := d.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("beginning transaction: %w", err)
	}
	t := &txn{Tx: tx, db: d, uninterruptible: opts == nil || !opts.ReadOnly}
	if t.uninterruptible {
		d.deferred.reset() // what a transaction rolled back left
		t.deferred = &d.deferred
	}
	return t, nil
}

// txn is a transaction that runs the prepared statements of its db.
type txn struct {
	*sql.Tx
	db *db
	// uninterruptible write transactions run their statements to completion whatever their context: SQLite
	// rolls back the whole transaction when a write statement is interrupted, and a write transaction holds the
	// writes of several callers (see writer).
	uninterruptible bool
	// stmts are the transaction's forms of db's statements, made once per transaction rather than once per
	// statement run: a group commit runs the same few statements for every write it holds.
	stmts map[*sql.Stmt]*sql.Stmt
	// deferred are the rows the transaction's exchanges wrote and it has not yet (see flush); nil in a read-only
	// transaction.
	deferred *deferredWrites
	// flushErr is why writing the deferred rows before a statement failed; the transaction does not commit.
	flushErr error
}

// context is the context the transaction's statements run under: ctx, or for an uninterruptible transaction
// none that can be cancelled.
func (t *txn) context(ctx context.Context) context.Context {
	if t.uninterruptible {
		return context.Background()
	}
	return ctx
}

// stmt returns the prepared statement of query for this transaction, or nil if it has none yet.
func (t *txn) stmt(ctx context.Context, query string) *sql.Stmt {
	st := t.db.lookup(query)
	if st == nil {
		return nil
	}
	if ts, ok := t.stmts[st]; ok {
		return ts
	}
	if t.stmts == nil {
		t.stmts = map[*sql.Stmt]*sql.Stmt{}
	}
	ts := t.StmtContext(ctx, st)
	t.stmts[st] = ts
	return ts
}

// ExecContext runs a statement in the transaction, after writing the deferred rows (see flush).
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	return t.execDeferring(ctx, query, args...)
}

// execDeferring runs a statement in the transaction and leaves the deferred rows unwritten: for the statements
// of a chat exchange that touch no row a deferred write does (its events and their deliveries), for
// ClaimMonthlySlot, which counts with the month's deferred claims, and for flush itself.
func (t *txn) execDeferring(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = t.context(ctx)
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction, after writing the deferred rows.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	ctx = t.context(ctx)
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query returning one row in the transaction, after writing the deferred rows; should
// that fail, the transaction does not commit (sql.Row cannot carry the error).
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	_ = t.flush(ctx)
	return t.queryRowDeferring(ctx, query, args...)
}

// queryRowDeferring runs a query returning one row in the transaction and leaves the deferred rows unwritten
// (see execDeferring).
func (t *txn) queryRowDeferring(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.context(ctx)
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// Commit writes the deferred rows and commits the transaction; if they fail, it rolls back.
func (t *txn) Commit() error {
	if err := t.flush(context.Background()); err != nil {
		return errors.Join(err, t.Rollback())
	}
	return t.Tx.Commit()
}

// rows runs a query in the transaction and returns its rows and the function that closes them.
func (t *txn) rows(ctx context.Context, query string, args []any) (storeutil.Rows, func(), error) {
	rows, err := t.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { _ = rows.Close() }, nil
}
