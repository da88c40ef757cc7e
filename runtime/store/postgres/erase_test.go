//go:build integration

package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func TestDeletion(t *testing.T) {
	storetest.RunDeletion(t, func(t *testing.T) (store.Store, storetest.Dump) {
		url := server.Database(t)
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(t.Context()) })
		return s, func(t *testing.T, merchantID string) []string { return dump(t, conn, merchantID) }
	})
}

func TestSubject(t *testing.T) {
	storetest.RunSubject(t, func(t *testing.T) (store.Store, storetest.Dump) {
		url := server.Database(t)
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(t.Context()) })
		return s, func(t *testing.T, merchantID string) []string { return dump(t, conn, merchantID) }
	})
}

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) (store.Store, storetest.Dump) {
		url := server.Database(t)
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(t.Context()) })
		return s, func(t *testing.T, merchantID string) []string { return dump(t, conn, merchantID) }
	})
}

// dump returns every row the merchant has in every table with a merchant_id column, as storetest.Dump says.
func dump(t *testing.T, conn *pgx.Conn, merchantID string) []string {
	t.Helper()
	ctx := t.Context()
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name = 'merchant_id' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT * FROM `+pgx.Identifier{table}.Sanitize()+` WHERE merchant_id = $1`, merchantID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString(table + "|")
			for _, v := range vals {
				switch x := v.(type) {
				case []byte:
					v = string(x)
				case time.Time:
					v = x.UTC().Format(time.RFC3339Nano)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			out = append(out, b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

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
