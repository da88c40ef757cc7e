package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// seedMarked records n conversations of the merchant, each with a question holding a marker and an e-mail
// address and a lead of that address, with an event for the lead in the outbox, and returns the markers.
func seedMarked(t *testing.T, s store.Store, merchantID, prefix string, n int) []string {
	t.Helper()
	ctx := t.Context()
	var markers []string
	for i := range n {
		marker := fmt.Sprintf("%s%03d", prefix, i)
		email := strings.ToLower(marker) + "@mail.example"
		ex := exchange(marker, "my name is "+marker+", write to "+email+" "+strings.Repeat("padding ", 40))
		ex.MerchantID = merchantID
		if _, err := storetest.WriteExchange(ctx, s, ex); err != nil {
			t.Fatal(err)
		}
		lead := store.Lead{ID: "lead-" + marker, MerchantID: merchantID, ConversationID: ex.ConversationID,
			VisitorID: ex.VisitorID, Contact: store.Contact{Email: email}, Source: store.LeadFromChat, CreatedAt: at, UpdatedAt: at}
		// The lead's event as chat writes it, through the event package, so that its payload names its records.
		events, err := event.Build(merchantID, store.Outbox{EventIDs: []string{"evt-" + marker + "-1"},
			Subscribers: map[string][]store.Endpoint{event.LeadCreated: {{WebhookID: "crm", URL: "https://crm.example/hook"}}}},
			event.LeadSaved(lead, true))
		if err != nil || len(events) != 1 {
			t.Fatalf("building the lead's event: %d events, %v", len(events), err)
		}
		ev := events[0]
		if err := s.Write(ctx, func(tx store.Tx) error {
			if err := tx.InsertLead(ctx, lead); err != nil {
				return err
			}
			if err := tx.MarkHasLead(ctx, merchantID, ex.ConversationID); err != nil {
				return err
			}
			if err := tx.InsertEvent(ctx, merchantID, ev); err != nil {
				return err
			}
			return tx.InsertDelivery(ctx, merchantID, ev, ev.Endpoints[0])
		}); err != nil {
			t.Fatal(err)
		}
		markers = append(markers, marker, email)
	}
	return markers
}

// checkpoint copies the whole log into the database file and empties it, from a connection of its own, as the
// store's checkpointer does in the background and at Close.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	// The store's own checkpointer may be copying the log at the same moment: a TRUNCATE checkpoint waits for it
	// through the busy handler instead of answering busy at once.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// A reader of the store's (its own checkpointer, a pooled read) can still hold an old snapshot, which a
	// TRUNCATE checkpoint answers with busy rather than waiting for: it is asked again until it completes.
	var busy, frames, copied int
	for range 100 {
		if err := db.QueryRowContext(t.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		if busy == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("checkpoint: still busy after 5 s")
}

// awaitGone waits until neither the database file nor its log holds any of gone, as the checkpoint a deletion
// asks for once it has committed makes it, and returns the text they hold then. The log may hold frames again by
// then (the writer restarts it after a checkpoint), but only frames written after the deletion.
func awaitGone(t *testing.T, path string, gone []string) string {
	t.Helper()
	var left int
	for range 1000 {
		text := fileText(t, path)
		left = 0
		for _, m := range gone {
			if strings.Contains(text, m) {
				left++
			}
		}
		if left == 0 {
			return text
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("10 s after the deletion the file and its log still hold %d of its %d strings", left, len(gone))
	return ""
}

// fileText returns the bytes of the database file and of its log, as `strings` reads them.
func fileText(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestErasedTextLeavesTheFile: after a conversation's deletion and after a merchant's erasure, neither the
// database file nor its log (once checkpointed) holds any of the erased text, while another merchant's text is
// still there; and the erasure gives the freed pages back, so the file shrinks.
func TestErasedTextLeavesTheFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	deleted := seedMarked(t, s, "shop", "DELETEDMARKER", 1)
	erased := seedMarked(t, s, "gone", "ERASEDMARKER", 200)
	kept := seedMarked(t, s, "kept", "KEPTMARKER", 5)
	checkpoint(t, path) // the text is in the database file, as it is once the runtime has run a while
	text := fileText(t, path)
	for _, m := range slices.Concat(deleted, erased, kept) {
		if !strings.Contains(text, m) {
			t.Fatalf("%q is not in the file before the erasure: the test reads the wrong file", m)
		}
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	if err := s.Write(ctx, func(tx store.Tx) error {
		_, err := tx.DeleteConversation(ctx, "shop", deleted[0])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, path, deleted)

	if err := s.Write(ctx, func(tx store.Tx) error {
		_, err := tx.EraseMerchant(ctx, "gone")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	text = awaitGone(t, path, erased)
	for _, m := range kept {
		if !strings.Contains(text, m) {
			t.Errorf("another merchant's %q is gone from the file", m)
		}
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() >= before.Size()/2 {
		t.Errorf("the file has %d bytes after the erasure, %d before: the freed pages were not given back", after.Size(), before.Size())
	}
}

// TestMigrationSwitchesToIncrementalVacuum: migration 16 switches a database made before it to incremental
// vacuum, keeping its rows.
func TestMigrationSwitchesToIncrementalVacuum(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(ctx, path, 15)
	if err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 0 {
		t.Fatalf("auto_vacuum before migration 16: %d, %v; want 0 (NONE)", mode, err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO conversations (merchant_id, id, created_at, updated_at, first_message)
		VALUES ('m1', 'c1', 0, 0, 'hello')`); err != nil {
		t.Fatal(err)
	}
	s := migrateRest(t, db, path)
	if ok, err := s.ConversationExists(ctx, "m1", "c1"); err != nil || !ok {
		t.Errorf("the conversation after the migration: %v, %v", ok, err)
	}
	if err := openReadOnly(t, path).QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum after migration 16: %d, %v; want 2 (INCREMENTAL)", mode, err)
	}
}

// TestRecordEventsUseTheirIndexes: a deletion finds a conversation's or a lead's events through an index, not by
// reading every event of the merchant.
func TestRecordEventsUseTheirIndexes(t *testing.T) {
	db := migratedReadOnly(t)
	for _, q := range sqlite.RecordEventsQueries {
		plan := queryPlan(t, db, q, []any{"m1", "c1"})
		if !strings.Contains(plan, "USING INDEX events_by_") {
			t.Errorf("%s: plan %q, want a search of an events_by_ index", q, plan)
		}
	}
}
