//go:build integration

package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store/postgres"
)

// explain is PostgreSQL's plan of query with args bound, a step a line.
func explain(t *testing.T, conn *pgx.Conn, query string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `EXPLAIN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestRecordEventsUseTheirIndexes: a deletion can find a conversation's or a lead's events through an index, not
// only by reading every event of the merchant (sequential scans are turned off to see that one exists: on a
// table this small the planner would rightly read it all).
func TestRecordEventsUseTheirIndexes(t *testing.T) {
	conn := migratedConn(t, `SET enable_seqscan = off`)
	for _, q := range postgres.RecordEventsQueries {
		if plan := explain(t, conn, q, "m1", "c1"); !strings.Contains(plan, "events_by_") {
			t.Errorf("%s: plan\n%s\nwant a scan of an events_by_ index", q, plan)
		}
	}
}

// TestListingsReadTheirIndexesInOrder: each listing, newest first, first page and next, can read its index in
// its order rather than sort the merchant's rows (the indexes ascend since migration 29, so that a new row is
// appended, and are read backwards). Sequential scans and sorts are turned off to see that such a path exists: on
// tables this small the planner would rightly sort.
func TestListingsReadTheirIndexesInOrder(t *testing.T) {
	conn := migratedConn(t, `SET enable_seqscan = off`, `SET enable_sort = off`)
	for _, after := range []bool{false, true} {
		for index, q := range postgres.ListingQueries("m1", after) {
			if plan := explain(t, conn, q.SQL, q.Args...); !strings.Contains(plan, "Index Scan Backward using "+index+" ") || strings.Contains(plan, "Sort") {
				t.Errorf("the listing of %s (after a cursor: %t): plan\n%s\nwant a backward scan of it, without a sort", index, after, plan)
			}
		}
	}
}
