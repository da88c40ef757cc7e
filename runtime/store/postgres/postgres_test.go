//go:build integration

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/internal/testutil/rowdump"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// server is the package's throwaway PostgreSQL; each test gets its own database of it.
var server *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(s *pgtest.Server) { server = s }))
}

// open opens a store on url, closed when t ends.
func open(t *testing.T, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// migratedConn connects to a new database the store has migrated, with the settings given (SET statements) for
// the connection; it is closed when t ends.
func migratedConn(t *testing.T, settings ...string) *pgx.Conn {
	t.Helper()
	url := server.Database(t)
	open(t, url) // migrates
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	for _, set := range settings {
		if _, err := conn.Exec(t.Context(), set); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		t.Helper()
		s, err := postgres.Open(t.Context(), server.Database(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

var at = time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)

func exchange(merchantID, conversationID, question string, limit int) store.Exchange {
	return store.Exchange{
		MerchantID: merchantID, ConversationID: conversationID, VisitorID: "v1", MonthlyLimit: limit,
		Question: store.Message{ID: conversationID + "-q", Role: store.RoleVisitor, Text: question, CreatedAt: at},
		Answer: store.Message{ID: conversationID + "-a", Role: store.RoleAssistant, Text: "answer",
			CreatedAt: at.Add(time.Second), Answered: true},
	}
}

// replicas opens n stores on one database, as n replicas of the runtime would, opened at once so that their
// migrations race too.
func replicas(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	url := server.Database(t)
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("opening replica %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	return stores
}

// race calls fn(i) for i in [0, n) from n goroutines released together and returns how many succeeded and how
// many failed with target; any other error fails the test.
func race(t *testing.T, n int, target error, fn func(i int) error) (ok, refused int) {
	t.Helper()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, target):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return ok, refused
}

// TestMonthlyCeilingAcrossReplicas has two replicas race, from many goroutines, for the last conversations of
// a month: the ceiling is never passed, and both replicas agree on the count.
func TestMonthlyCeilingAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	rs := replicas(t, 2)
	const limit, before = 25, 20
	for i := range before {
		if _, err := storetest.WriteExchange(ctx, rs[i%2], exchange("m1", fmt.Sprint("early-", i), "hello", limit)); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 { // the ceiling stays put once reached
		ok, refused := race(t, 60, store.ErrQuotaExceeded, func(i int) error {
			ex := exchange("m1", fmt.Sprintf("late-%d-%d", round, i), "hello", limit)
			ex.NewConversation = i%4 < 2 // a store writes the conversations the runtime named without an upsert
			_, err := storetest.WriteExchange(context.Background(), rs[i%2], ex)
			return err
		})
		wantOK := 0
		if round == 0 {
			wantOK = limit - before
		}
		if ok != wantOK || refused != 60-wantOK {
			t.Errorf("round %d: %d created and %d refused, want %d and %d", round, ok, refused, wantOK, 60-wantOK)
		}
	}
	for i, r := range rs {
		if n, err := r.ConversationsThisMonth(ctx, "m1", at); err != nil || n != limit {
			t.Errorf("replica %d: ConversationsThisMonth = %d, %v; want %d", i, n, err, limit)
		}
		list, _, err := r.ListConversations(ctx, "m1", store.ConversationFilter{Limit: 100})
		if err != nil || len(list) != limit {
			t.Errorf("replica %d lists %d conversations, %v; want %d", i, len(list), err, limit)
		}
	}
	// Running conversations go on through either replica, and another merchant has its own ceiling.
	for i, r := range rs {
		more := exchange("m1", "early-0", "more", limit)
		more.Question.ID, more.Answer.ID = fmt.Sprint("more-q-", i), fmt.Sprint("more-a-", i)
		res, err := storetest.WriteExchange(ctx, r, more)
		if err != nil || res.Created {
			t.Errorf("replica %d continuing a conversation: %+v, %v", i, res, err)
		}
	}
	if _, err := storetest.WriteExchange(ctx, rs[1], exchange("m2", "c1", "hello", 1)); err != nil {
		t.Errorf("another merchant refused: %v", err)
	}
}

// TestQueryUnicodeCase checks that the Query filters fold case beyond ASCII and take % and _ literally.
func TestQueryUnicodeCase(t *testing.T) {
	ctx := t.Context()
	s := open(t, server.Database(t))
	if _, err := storetest.WriteExchange(ctx, s, exchange("m1", "c1", "ÉTÉ À PARIS", 0)); err != nil {
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
	items, _, err = s.ListKnowledge(ctx, "m1", store.KnowledgeFilter{Query: "Gr_"})
	if err != nil || len(items) != 0 {
		t.Errorf("ListKnowledge(Gr_) = %+v, %v; want nothing (_ is literal)", items, err)
	}
}

// TestMigrations checks that replicas opening one database together apply each migration once, and that data
// survives reopening.
func TestMigrations(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	rs := make([]*postgres.Store, 4)
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i := range rs {
		wg.Go(func() { rs[i], errs[i] = postgres.Open(ctx, url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	if _, err := storetest.WriteExchange(ctx, rs[0], exchange("m1", "c1", "hello", 0)); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, url)
	if c, msgs, err := s.GetConversation(ctx, "m1", "c1"); err != nil || c.MessageCount != 2 || len(msgs) != 2 {
		t.Errorf("after reopening: %+v, %d messages, %v", c, len(msgs), err)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT version_id, COUNT(*) FROM goose_db_version
		WHERE version_id > 0 AND is_applied GROUP BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
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
}

// TestOpenErrors checks that bad URLs are refused, and that the password never appears in the error.
func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	if _, err := postgres.Open(ctx, ""); err == nil {
		t.Error(`Open("") succeeded`)
	}
	for _, url := range []string{
		"postgres://parley:s3cr3t-pw@127.0.0.1:1/parley?sslmode=disable&connect_timeout=5", // nothing listens on port 1
		"postgres://parley:s3cr3t-pw@127.0.0.1:1/parley?sslmode=bogus",
		"postgres://parley:s3cr3t-pw@[::1/parley",
		strings.Replace(server.URL("no_such_database"), "postgres@", "postgres:s3cr3t-pw@", 1),
	} {
		_, err := postgres.Open(ctx, url)
		if err == nil {
			t.Errorf("Open(%s) succeeded", url)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestEraseCoversEveryTable: every table with a merchant_id column is one EraseMerchant deletes from, so that a
// table added later cannot keep a deleted merchant's data.
func TestEraseCoversEveryTable(t *testing.T) {
	tables := rowdump.PostgresMerchantTables(t, migratedConn(t))
	if got := slices.Sorted(slices.Values(postgres.MerchantTables)); !slices.Equal(got, tables) {
		t.Errorf("EraseMerchant deletes from %v; the tables with a merchant_id are %v", got, tables)
	}
}

// TestMigrationMovesUseCounts checks that migration 5 moves the items' use counts out of their rows and keeps
// them.
func TestMigrationMovesUseCounts(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	if err := postgres.MigrateTo(ctx, url, 4); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO knowledge (merchant_id, id, title, content, created_at, updated_at, use_count)
		VALUES ('m1', 'k1', 'T', 'C', now(), now(), 5), ('m1', 'k2', 'T', 'C', now(), now(), 0),
			('m2', 'k1', 'T', 'C', now(), now(), 2)`); err != nil {
		t.Fatal(err)
	}
	s := open(t, url)
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

// TestMigrationNamesLeasesWithinMerchants: migration 28 keeps the held leases, a merchant's as its own
// (storetest.CheckLeasesMigrated).
func TestMigrationNamesLeasesWithinMerchants(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	if err := postgres.MigrateTo(ctx, url, 27); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO leases (name, holder, until) VALUES ('embed/m1', 'a', $1),
		('retention-sweep', 'a', $1)`, storetest.Base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	storetest.CheckLeasesMigrated(t, open(t, url))
}

// TestMigrationCountsConversationUse: migration 30 fills the answers and tokens of the conversations stored before
// it (storetest.CheckConversationUseMigrated).
func TestMigrationCountsConversationUse(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	if err := postgres.MigrateTo(ctx, url, 29); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO conversations (merchant_id, id, visitor_id, created_at, updated_at, message_count)
		VALUES ('m1', 'c1', 'v1', $1, $1, 4), ('m1', 'c2', 'v1', $1, $1, 0), ('m2', 'c1', 'v1', $1, $1, 2)`, storetest.Base); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO messages (merchant_id, conversation_id, id, role, text, created_at, tokens)
		VALUES ('m1', 'c1', 'q1', 'visitor', 'Hi', $1, 0), ('m1', 'c1', 'a1', 'assistant', 'Hello', $1, 40),
		('m1', 'c1', 't1', 'agent', 'Ann here', $1, 0), ('m1', 'c1', 'a2', 'assistant', 'Bye', $1, 2),
		('m2', 'c1', 'q1', 'visitor', 'Hi', $1, 0), ('m2', 'c1', 'a1', 'assistant', 'Hello', $1, 7)`, storetest.Base); err != nil {
		t.Fatal(err)
	}
	storetest.CheckConversationUseMigrated(t, open(t, url))
}

// TestMigrationMakesLineBreaksLF: migration 12 rewrites the CR line breaks of items stored before Validate kept
// them as LF (storetest.CheckLineBreaksMigrated).
func TestMigrationMakesLineBreaksLF(t *testing.T) {
	ctx := t.Context()
	url := server.Database(t)
	if err := postgres.MigrateTo(ctx, url, 11); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	before, _ := storetest.LineBreakItems(at)
	for _, k := range before {
		if _, err := conn.Exec(ctx, `INSERT INTO knowledge (merchant_id, id, title, content, url, tags, questions, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, k.MerchantID, k.ID, k.Title, k.Content, k.URL, k.Tags,
			store.JoinQuestions(k.Questions), k.CreatedAt, k.UpdatedAt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO knowledge_state (merchant_id, revision, items) VALUES ('m1', 3, 3), ('m2', 5, 1)`); err != nil {
		t.Fatal(err)
	}
	storetest.CheckLineBreaksMigrated(t, open(t, url), at)
}
