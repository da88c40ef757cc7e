package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pipeline is a write transaction that saves round trips: BEGIN and the statements whose results the caller does
// not need (queue) wait, and go to the server in one batch with the next statement that has a result, or with
// the COMMIT. An exchange is then two round trips, the conversation's upsert and the rest with the COMMIT,
// instead of one per statement (see ClaimMonthlySlot). The server runs a batch's statements in order and stops at
// the first that fails, so the statements run as they would one by one; only the error of a queued one comes
// later, from the call that sends it or from the commit, and rolls the transaction back all the same.
type pipeline struct {
	conn *pgx.Conn
	// batch holds the statements not sent yet, and whats what each is about, for its error ("" for BEGIN).
	batch *pgx.Batch
	whats []string
	// sent reports whether anything was sent: until then there is no transaction to roll back.
	sent bool
	// deferred holds the exchanges' rows and counts until the next statement or the commit.
	deferred deferredWrites
}

// begin starts a read-committed transaction on conn, sent with its first statement.
func begin(conn *pgx.Conn) *pipeline {
	p := &pipeline{conn: conn, batch: &pgx.Batch{}}
	p.batch.Queue("BEGIN")
	p.whats = append(p.whats, "")
	return p
}

// queue adds a statement whose result the caller does not need, after the deferred rows; what says what it
// does, for its error.
func (p *pipeline) queue(what, sql string, args ...any) {
	p.flushRows()
	p.batch.Queue(sql, args...)
	p.whats = append(p.whats, what)
}

// send sends the waiting statements and then sql in one batch, and reads sql's result with read.
func (p *pipeline) send(ctx context.Context, read func(pgx.BatchResults) error, sql string, args ...any) error {
	p.queue("", sql, args...)
	return p.flush(ctx, read)
}

// flush sends the waiting statements in one batch, and reads the last one's result with read when it is not
// nil.
func (p *pipeline) flush(ctx context.Context, read func(pgx.BatchResults) error) error {
	b, whats := p.batch, p.whats
	if b.Len() == 0 {
		return nil
	}
	p.batch, p.whats = &pgx.Batch{}, nil
	if read != nil {
		whats = whats[:len(whats)-1]
	}
	p.sent = true
	br := p.conn.SendBatch(ctx, b)
	for _, what := range whats {
		if _, err := br.Exec(); err != nil {
			_ = br.Close() // the error is err
			if what == "" {
				return err
			}
			return fmt.Errorf("%s: %w", what, refusal(err))
		}
	}
	if read != nil {
		if err := read(br); err != nil {
			_ = br.Close()
			return err
		}
	}
	return br.Close()
}

// Exec runs sql after the waiting statements, in the same round trip.
func (p *pipeline) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := p.send(ctx, func(br pgx.BatchResults) (err error) {
		tag, err = br.Exec()
		return err
	}, sql, args...)
	return tag, err
}

// QueryRow returns the row of sql, run after the waiting statements, in the same round trip, when it is scanned.
func (p *pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return pipelineRow{p: p, ctx: ctx, sql: sql, args: args}
}

// Query sends the waiting statements, then runs sql: rows are read as they come, so sql is not batched.
func (p *pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	p.flushRows()
	if err := p.flush(ctx, nil); err != nil {
		return nil, err
	}
	return p.conn.Query(ctx, sql, args...)
}

// commit sends the waiting statements and the deferred writes with the COMMIT.
func (p *pipeline) commit(ctx context.Context) error {
	p.flushCounts()
	p.queue("committing", "COMMIT")
	return p.flush(ctx, nil)
}

// rollback ends a transaction that was begun and not committed. Its error is not reported: the pool closes a
// connection released inside a transaction rather than reusing it.
func (p *pipeline) rollback(ctx context.Context) {
	if p.sent && p.conn.PgConn().TxStatus() != 'I' {
		_, _ = p.conn.Exec(ctx, "ROLLBACK")
	}
}

// pipelineRow is a row of pipeline.QueryRow, sent when scanned.
type pipelineRow struct {
	p    *pipeline
	ctx  context.Context //nolint:containedctx // the context of the QueryRow call, used when the row is scanned
	sql  string
	args []any
}

func (r pipelineRow) Scan(dest ...any) error {
	return r.p.send(r.ctx, func(br pgx.BatchResults) error { return br.QueryRow().Scan(dest...) }, r.sql, r.args...)
}
