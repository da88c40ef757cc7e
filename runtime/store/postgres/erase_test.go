//go:build integration

package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store/postgres"
)

// TestRecordEventsUseTheirIndexes: a deletion can find a conversation's or a lead's events through an index, not
// only by reading every event of the merchant (sequential scans are turned off to see that one exists: on a
// table this small the planner would rightly read it all).
func TestRecordEventsUseTheirIndexes(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	open(t, url) // migrates
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, q := range postgres.RecordEventsQueries {
		rows, err := conn.Query(ctx, `EXPLAIN `+q, "m1", "c1")
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "events_by_") {
			t.Errorf("%s: plan\n%s\nwant a scan of an events_by_ index", q, plan)
		}
	}
}

// TestListingsReadTheirIndexesInOrder: each listing, newest first, first page and next, can read its index in
// its order rather than sort the merchant's rows (the indexes ascend since migration 29, so that a new row is
// appended, and are read backwards). Sequential scans and sorts are turned off to see that such a path exists: on
// tables this small the planner would rightly sort.
func TestListingsReadTheirIndexesInOrder(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	open(t, url) // migrates
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off; SET enable_sort = off`); err != nil {
		t.Fatal(err)
	}
	for _, after := range []bool{false, true} {
		for index, query := range postgres.ListingQueries("m1", after) {
			q, args := query()
			rows, err := conn.Query(ctx, `EXPLAIN `+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Index Scan Backward using "+index+" ") || strings.Contains(plan, "Sort") {
				t.Errorf("the listing of %s (after a cursor: %t): plan\n%s\nwant a backward scan of it, without a sort", index, after, plan)
			}
		}
	}
}
