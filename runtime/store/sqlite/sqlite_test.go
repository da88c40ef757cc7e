package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/parley-dev/parley/internal/testutil/rowdump"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func openTemp(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, openTemp)
}

var at = time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)

func exchange(conversationID, question string) store.Exchange {
	return store.Exchange{
		MerchantID: "m1", ConversationID: conversationID, VisitorID: "v1",
		Question: store.Message{ID: conversationID + "-q", Role: store.RoleVisitor, Text: question, CreatedAt: at},
		Answer: store.Message{ID: conversationID + "-a", Role: store.RoleAssistant, Text: "answer",
			CreatedAt: at.Add(time.Second), Answered: true},
	}
}

// TestReopen checks that data survives closing and reopening, and that a nested directory is created.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "nested", "dir", "parley.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.WriteExchange(ctx, s, exchange("c1", "hello")); err != nil {
		t.Fatal(err)
	}
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "T", Content: "C",
		Tags: []string{"a"}, CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	rev, err := s.KnowledgeRevision(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	c, msgs, err := s.GetConversation(ctx, "m1", "c1")
	if err != nil || c.MessageCount != 2 || len(msgs) != 2 || msgs[0].Text != "hello" {
		t.Errorf("after reopening: %+v, %+v, %v", c, msgs, err)
	}
	if k, err := s.GetKnowledge(ctx, "m1", "k1"); err != nil || k.Title != "T" {
		t.Errorf("knowledge after reopening: %+v, %v", k, err)
	}
	if got, err := s.KnowledgeRevision(ctx, "m1"); err != nil || got != rev {
		t.Errorf("revision after reopening = %d, %v; want %d", got, err, rev)
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", at); err != nil || n != 1 {
		t.Errorf("month count after reopening = %d, %v; want 1", n, err)
	}
}

// TestMigrationsRunOnce opens a database twice and checks that each migration was applied once, that the
// file is in WAL mode, and that the has_lead column exists for the leads feature.
func TestMigrationsRunOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	for range 2 {
		migrate(t, path)
	}
	db := openReadOnly(t, path)

	rows, err := db.QueryContext(ctx, `SELECT version_id, COUNT(*) FROM goose_db_version
		WHERE version_id > 0 AND is_applied GROUP BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	versions := 0
	for rows.Next() {
		var version, n int64
		if err := rows.Scan(&version, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("migration %d applied %d times", version, n)
		}
		versions++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if versions == 0 {
		t.Error("no migration recorded")
	}

	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var hasLead int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('conversations')
		WHERE name = 'has_lead'`).Scan(&hasLead); err != nil || hasLead != 1 {
		t.Errorf("conversations.has_lead: %d, %v", hasLead, err)
	}
}

// TestTwoHandles opens one file twice, as two processes would, and starts conversations through both at
// once: writers queue instead of failing, and the monthly ceiling stays exact.
func TestTwoHandles(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	var handles [3]*sqlite.Store
	for i := range handles {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		handles[i] = s
	}
	const writers = 60
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			ex := exchange(fmt.Sprint("c", i), "hello")
			ex.MonthlyLimit = 5
			_, err := storetest.WriteExchange(ctx, handles[i%len(handles)], ex)
			errs <- err
		}()
	}
	created := 0
	for range writers {
		switch err := <-errs; {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrQuotaExceeded):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if created != 5 {
		t.Errorf("%d conversations created, want 5", created)
	}
	if n, err := handles[1].ConversationsThisMonth(ctx, "m1", at); err != nil || n != 5 {
		t.Errorf("month count = %d, %v; want 5", n, err)
	}
}

// TestQueryUnicodeCase checks that the Query filters fold case beyond ASCII.
func TestQueryUnicodeCase(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := t.Context()
	if _, err := storetest.WriteExchange(ctx, s, exchange("c1", "ÉTÉ À PARIS")); err != nil {
		t.Fatal(err)
	}
	list, _, err := s.ListConversations(ctx, "m1", store.ConversationFilter{Query: "été à"})
	if err != nil || len(list) != 1 {
		t.Errorf("ListConversations(été à) = %+v, %v; want c1", list, err)
	}
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Größe", Content: "x",
		CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	items, _, err := s.ListKnowledge(ctx, "m1", store.KnowledgeFilter{Query: "GRÖ"})
	if err != nil || len(items) != 1 {
		t.Errorf("ListKnowledge(GRÖ) = %+v, %v; want k1", items, err)
	}
}

// TestOpenErrors checks that bad paths are refused with the path in the error.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := sqlite.Open(ctx, ""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "parley.db") // a directory that is a file
	if _, err := sqlite.Open(ctx, bad); err == nil {
		t.Errorf("Open(%s) succeeded", bad)
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte("this is not a database, just some text that is long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, notDB); err == nil {
		t.Error("Open of a non-database file succeeded")
	}
}

// TestEraseCoversEveryTable: every table with a merchant_id column is one EraseMerchant deletes from, so that a
// table added later cannot keep a deleted merchant's data.
func TestEraseCoversEveryTable(t *testing.T) {
	tables := rowdump.SQLiteMerchantTables(t, migratedReadOnly(t))
	if got, want := slices.Sorted(slices.Values(sqlite.MerchantTables)), tables; !slices.Equal(got, want) {
		t.Errorf("EraseMerchant deletes from %v; the tables with a merchant_id are %v", got, want)
	}
}

// TestMigrationMovesUseCounts checks that migration 5 moves the items' use counts out of their rows and keeps
// them.
func TestMigrationMovesUseCounts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(ctx, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO knowledge (merchant_id, id, title, content, created_at, updated_at, use_count)
		VALUES ('m1', 'k1', 'T', 'C', 0, 0, 5), ('m1', 'k2', 'T', 'C', 0, 0, 0), ('m2', 'k1', 'T', 'C', 0, 0, 2)`); err != nil {
		t.Fatal(err)
	}
	s := migrateRest(t, db, path)
	for _, c := range []struct {
		merchant, id string
		want         int
	}{{"m1", "k1", 5}, {"m1", "k2", 0}, {"m2", "k1", 2}} {
		k, err := s.GetKnowledge(ctx, c.merchant, c.id)
		if err != nil || k.UseCount != c.want {
			t.Errorf("%s/%s: UseCount %d, %v; want %d", c.merchant, c.id, k.UseCount, err, c.want)
		}
	}
}

// TestMigrationKeepsMessages: migration 8 rebuilds the messages table without its unique index; every row keeps
// its values and its seq, new messages follow them, and an unanswered question is still found by its answer.
func TestMigrationKeepsMessages(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(ctx, path, 7)
	if err != nil {
		t.Fatal(err)
	}
	ms := at.UnixMilli()
	if _, err := db.ExecContext(ctx, `INSERT INTO conversations (merchant_id, id, visitor_id, created_at, updated_at, message_count, first_message, unanswered)
		VALUES ('m1', 'c1', 'v1', ?, ?, 2, 'Can I pay by card?', 1)`, ms, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO messages (seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
		VALUES (7, 'm1', 'c1', 'q1', 'visitor', 'Can I pay by card?', 'can i pay by card', '', ?, '[]', 1, 0),
		       (9, 'm1', 'c1', 'a1', 'assistant', 'I do not know.', '', 'q1', ?, '[]', 0, 42)`, ms, ms); err != nil {
		t.Fatal(err)
	}
	s := migrateRest(t, db, path)
	ex := store.Exchange{MerchantID: "m1", ConversationID: "c1", VisitorID: "v1",
		Question: store.Message{ID: "q2", Role: store.RoleVisitor, Text: "Thanks", CreatedAt: at.Add(time.Minute), Answered: true},
		Answer:   store.Message{ID: "a2", Role: store.RoleAssistant, Text: "You are welcome.", CreatedAt: at.Add(time.Minute), Answered: true}}
	if _, err := storetest.WriteExchange(ctx, s, ex); err != nil {
		t.Fatal(err)
	}
	_, msgs, err := s.GetConversation(ctx, "m1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, fmt.Sprintf("%s %s %q %v", m.ID, m.Role, m.Text, m.Answered))
	}
	want := []string{`q1 visitor "Can I pay by card?" true`, `a1 assistant "I do not know." false`,
		`q2 visitor "Thanks" true`, `a2 assistant "You are welcome." true`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages after the migration:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	o, err := s.Overview(ctx, "m1", at.Add(-time.Hour), at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.UnansweredQuestions) != fmt.Sprint([]store.QuestionCount{{Question: "can i pay by card", Count: 1}}) {
		t.Errorf("unanswered questions: %+v", o.UnansweredQuestions)
	}

	ro := openReadOnly(t, path)
	var indexes []string
	rows, err := ro.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'messages' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	if fmt.Sprint(indexes) != "[messages_by_conversation]" {
		t.Errorf("indexes of messages: %v, want messages_by_conversation alone", indexes)
	}
	var seq, tokens int
	if err := ro.QueryRowContext(ctx, `SELECT seq, tokens FROM messages WHERE id = 'a1'`).Scan(&seq, &tokens); err != nil || seq != 9 || tokens != 42 {
		t.Errorf("a1: seq %d, tokens %d, %v; want 9 and 42", seq, tokens, err)
	}
	var parent, onDelete string
	if err := ro.QueryRowContext(ctx, `SELECT "table", on_delete FROM pragma_foreign_key_list('messages')`).Scan(&parent, &onDelete); err != nil ||
		parent != "conversations" || onDelete != "CASCADE" {
		t.Errorf("messages' foreign key: %q ON DELETE %q, %v; want conversations ON DELETE CASCADE", parent, onDelete, err)
	}
}

// TestMigrationNamesLeasesWithinMerchants: migration 29 keeps the held leases, a merchant's as its own
// (storetest.CheckLeasesMigrated).
func TestMigrationNamesLeasesWithinMerchants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(t.Context(), path, 28)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `INSERT INTO leases (name, holder, until) VALUES ('embed/m1', 'a', ?1),
		('retention-sweep', 'a', ?1)`, storetest.Base.Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	storetest.CheckLeasesMigrated(t, migrateRest(t, db, path))
}

// TestMigrationCountsConversationUse: migration 31 fills the answers and tokens of the conversations stored before
// it (storetest.CheckConversationUseMigrated).
func TestMigrationCountsConversationUse(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(ctx, path, 30)
	if err != nil {
		t.Fatal(err)
	}
	ms := storetest.Base.UnixMilli()
	if _, err := db.ExecContext(ctx, `INSERT INTO conversations (merchant_id, id, visitor_id, created_at, updated_at, message_count)
		VALUES ('m1', 'c1', 'v1', ?1, ?1, 4), ('m1', 'c2', 'v1', ?1, ?1, 0), ('m2', 'c1', 'v1', ?1, ?1, 2)`, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO messages (merchant_id, conversation_id, id, role, text, created_at, tokens)
		VALUES ('m1', 'c1', 'q1', 'visitor', 'Hi', ?1, 0), ('m1', 'c1', 'a1', 'assistant', 'Hello', ?1, 40),
		('m1', 'c1', 't1', 'agent', 'Ann here', ?1, 0), ('m1', 'c1', 'a2', 'assistant', 'Bye', ?1, 2),
		('m2', 'c1', 'q1', 'visitor', 'Hi', ?1, 0), ('m2', 'c1', 'a1', 'assistant', 'Hello', ?1, 7)`, ms); err != nil {
		t.Fatal(err)
	}
	storetest.CheckConversationUseMigrated(t, migrateRest(t, db, path))
}

// TestMigrationMakesLineBreaksLF: migration 12 rewrites the CR line breaks of items stored before Validate kept
// them as LF (storetest.CheckLineBreaksMigrated), and items whose tags hold no CR keep their tags' JSON as the
// store wrote it.
func TestMigrationMakesLineBreaksLF(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := sqlite.MigrateTo(ctx, path, 11)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := storetest.LineBreakItems(at)
	tags := make([]string, len(before))
	for i, k := range before {
		b, err := json.Marshal(k.Tags) // as the store encodes them: encoding/json, which escapes CR and <
		if err != nil {
			t.Fatal(err)
		}
		tags[i] = string(b)
		if _, err := db.ExecContext(ctx, `INSERT INTO knowledge (merchant_id, id, title, content, url, tags, questions, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags[i],
			store.JoinQuestions(k.Questions), k.CreatedAt.UnixMilli(), k.UpdatedAt.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO knowledge_revisions (merchant_id, revision) VALUES ('m1', 3), ('m2', 5)`); err != nil {
		t.Fatal(err)
	}
	storetest.CheckLineBreaksMigrated(t, migrateRest(t, db, path), at)
	ro := openReadOnly(t, path)
	for i, k := range before[1:] { // no tag with a CR
		var stored string
		if err := ro.QueryRowContext(ctx, `SELECT tags FROM knowledge WHERE merchant_id = ? AND id = ?`, k.MerchantID, k.ID).Scan(&stored); err != nil ||
			stored != tags[i+1] {
			t.Errorf("%s/%s: tags stored as %s, %v; want %s", k.MerchantID, k.ID, stored, err, tags[i+1])
		}
	}
}

// TestConversationListingsUseIndexes checks that a conversation listing reads an index in its order, whatever
// its lead filter: conversations with a lead have a partial index of their own (migration 6), which a listing
// of them must use rather than walk every conversation.
func TestConversationListingsUseIndexes(t *testing.T) {
	db := migratedReadOnly(t)
	yes, no := true, false
	for _, c := range []struct {
		name   string
		filter store.ConversationFilter
		index  string
	}{
		{"all", store.ConversationFilter{}, "conversations_by_created"},
		{"with a lead", store.ConversationFilter{HasLead: &yes}, "conversations_with_lead"},
		{"without a lead", store.ConversationFilter{HasLead: &no}, "conversations_by_created"},
		{"with a lead, in a month", store.ConversationFilter{HasLead: &yes, From: at, To: at.AddDate(0, 1, 0)}, "conversations_with_lead"},
	} {
		query, args := sqlite.ConversationsQuery("m1", c.filter)
		plan := queryPlan(t, db, query, args)
		if !strings.Contains(plan, "USING INDEX "+c.index+" ") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("listing of conversations %s: plan %q, want a search of %s in its order", c.name, plan, c.index)
		}
	}
}

// TestListingsReadTheirIndexesInOrder: each listing, newest first, first page and next, reads its index backwards
// rather than sorting the merchant's rows (the indexes ascend since migration 30, so that a new row is appended).
func TestListingsReadTheirIndexesInOrder(t *testing.T) {
	db := migratedReadOnly(t)
	for _, after := range []bool{false, true} {
		for index, q := range sqlite.ListingQueries("m1", after) {
			plan := queryPlan(t, db, q.SQL, q.Args)
			if !strings.Contains(plan, "USING INDEX "+index+" ") || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("the listing of %s (after a cursor: %t): plan %q, want a search of it in its order", index, after, plan)
			}
		}
	}
}

// TestConversationTailUsesItsIndex: a chat turn's read of the latest messages walks messages_by_conversation
// backwards and stops after them, rather than sorting all the conversation's messages (migration 7).
func TestConversationTailUsesItsIndex(t *testing.T) {
	query, args := sqlite.TailQuery("m1", "c1")
	plan := queryPlan(t, migratedReadOnly(t), query, args)
	if !strings.Contains(plan, "USING INDEX messages_by_conversation ") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("the latest messages: plan %q, want a search of messages_by_conversation in its order", plan)
	}
}

// TestVisitorUseUsesItsIndex: a visitor's turn finds the visitor's conversations of the day through
// conversations_by_visitor (migration 14), rather than walking every conversation the merchant had that day, and
// reads no message: the conversations count their answers and tokens (migration 31).
func TestVisitorUseUsesItsIndex(t *testing.T) {
	query, args := sqlite.VisitorUseQuery("m1", "v1", at)
	plan := queryPlan(t, migratedReadOnly(t), query, args)
	if !strings.Contains(plan, "USING INDEX conversations_by_visitor ") || strings.Contains(plan, "messages") {
		t.Errorf("a visitor's day: plan %q, want a search of conversations_by_visitor alone", plan)
	}
}

// queryPlan is what EXPLAIN QUERY PLAN says of query with args bound, one step a line.
func queryPlan(t *testing.T, db *sql.DB, query string, args []any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// migratedReadOnly creates a database with every migration applied and opens it read-only, to inspect its schema
// and query plans.
func migratedReadOnly(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parley.db")
	migrate(t, path)
	return openReadOnly(t, path)
}

// migrate opens the database at path with the store, which applies the migrations it lacks, and closes it.
func migrate(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// migrateRest closes db, a connection of sqlite.MigrateTo holding rows written for a later migration, and opens
// the database at path with the store, which applies the migrations it lacks; the store is closed when t ends.
func migrateRest(t *testing.T, db *sql.DB, path string) *sqlite.Store {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openReadOnly opens the database at path read-only, past the store, closed when t ends.
func openReadOnly(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// queryStrings runs a query of one text column past the store and returns its rows.
func queryStrings(db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
