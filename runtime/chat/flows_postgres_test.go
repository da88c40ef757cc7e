//go:build integration

package chat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/internal/testutil/rowdump"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// pg is the package's throwaway PostgreSQL, for the flows run over it: started by the first of them.
var pg pgtest.Lazy

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

func TestFlowsPostgres(t *testing.T) {
	runFlows(t, func(t *testing.T) store.Store {
		s, err := postgres.Open(t.Context(), pg.Server(t).Database(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestDeletionPostgres(t *testing.T) { runDeletion(t, openPostgres) }

func TestSubjectPostgres(t *testing.T) { runSubject(t, openPostgres) }

func TestRetentionPostgres(t *testing.T) { runRetention(t, openPostgres) }

// BenchmarkSweepUnderChatPostgres measures chat's p99 while the retention sweep deletes 1,000,000 old messages:
//
//	go test -tags integration ./runtime/chat -run '^$' -bench SweepUnderChatPostgres -benchtime 1x -timeout 30m
func BenchmarkSweepUnderChatPostgres(b *testing.B) {
	sweepUnderChat(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(b.Context(), pg.Server(b).Database(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// openPostgres opens a new, empty PostgreSQL store and the dump of its rows, read past the store.
func openPostgres(t *testing.T) (store.Store, dump) {
	t.Helper()
	url := pg.Server(t).Database(t)
	s, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return s, func(t *testing.T, merchantID string) []string { return rowdump.Postgres(t, conn, merchantID) }
}

// TestKnowledgeCeilingAcrossReplicas has two replicas race to create items past the plan's ceiling, and to
// delete and create at once: the merchant never holds more items than the ceiling.
func TestKnowledgeCeilingAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	rs := replicas(t, 2)
	const limit = 7
	item := func(id string) store.Knowledge {
		return store.Knowledge{ID: id, MerchantID: "m1", Title: "Title " + id, Content: "Content", CreatedAt: storetest.Base, UpdatedAt: storetest.Base}
	}
	ok, refused := race(t, 40, store.ErrKnowledgeLimit, func(i int) error {
		return chat.CreateKnowledge(context.Background(), rs[i%2], item(fmt.Sprint("k", i)), chat.KnowledgeLimits{MaxItems: limit})
	})
	if ok != limit || refused != 40-limit {
		t.Errorf("%d created and %d refused, want %d and %d", ok, refused, limit, 40-limit)
	}
	all, err := rs[1].AllKnowledge(ctx, "m1")
	if err != nil || len(all) != limit {
		t.Fatalf("%d items stored, %v; want %d", len(all), err, limit)
	}
	// Deletes free slots that concurrent creations take, never more than were freed.
	ok, _ = race(t, 30, store.ErrKnowledgeLimit, func(i int) error {
		if i < 3 {
			return chat.DeleteKnowledge(context.Background(), rs[i%2], "m1", all[i].ID)
		}
		return chat.CreateKnowledge(context.Background(), rs[i%2], item(fmt.Sprint("new", i)), chat.KnowledgeLimits{MaxItems: limit})
	})
	all, err = rs[0].AllKnowledge(ctx, "m1")
	if err != nil || len(all) > limit || ok-3 > 3 {
		t.Errorf("after deletes and creations: %d items (%v), %d created; want at most %d items", len(all), err, ok-3, limit)
	}
	// The count the ceiling is checked against is the real one: the merchant fills up to the ceiling exactly.
	for i := len(all); i < limit; i++ {
		if err := chat.CreateKnowledge(ctx, rs[i%2], item(fmt.Sprint("fill", i)), chat.KnowledgeLimits{MaxItems: limit}); err != nil {
			t.Fatalf("filling slot %d: %v", i, err)
		}
	}
	if err := chat.CreateKnowledge(ctx, rs[0], item("over"), chat.KnowledgeLimits{MaxItems: limit}); !errors.Is(err, store.ErrKnowledgeLimit) {
		t.Errorf("item past the ceiling: %v, want ErrKnowledgeLimit", err)
	}
}

// TestLeadAcrossReplicas has two replicas save the lead of one visitor and conversation at once, from contact
// forms and from exchanges: one lead is created, every write succeeds, and no field given is lost.
func TestLeadAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	rs := replicas(t, 2)
	if _, err := chat.RecordExchange(ctx, rs[0], visitorExchange("c1", "hello")); err != nil {
		t.Fatal(err)
	}
	const n = 24
	created := make([]bool, n)
	ok, _ := race(t, n, nil, func(i int) error {
		c := store.Contact{Email: fmt.Sprintf("v%d@example.com", i)}
		switch i {
		case 0:
			c.Name = "Ana"
		case 1:
			c.Phone = "+1 555 0100"
		case 2:
			c.Consent = true
		}
		if i%2 == 1 { // an exchange carrying the contact
			ex := visitorExchange("c1", "reach me")
			ex.Question.ID, ex.Answer.ID = fmt.Sprint("q", i), fmt.Sprint("a", i)
			ex.Contact, ex.LeadID = &c, fmt.Sprint("lead", i)
			res, err := chat.RecordExchange(context.Background(), rs[i%2], ex)
			if err == nil && res.Lead != nil {
				created[i] = res.Lead.ID == ex.LeadID
			}
			return err
		}
		res, err := chat.SaveLead(context.Background(), rs[i%2], store.LeadInput{MerchantID: "m1",
			ConversationID: "c1", VisitorID: "v1", ID: fmt.Sprint("lead", i), Contact: c, At: storetest.Base})
		created[i] = res.Created
		return err
	})
	if ok != n {
		t.Fatalf("%d of %d writes succeeded", ok, n)
	}
	leads, _, err := rs[1].ListLeads(ctx, "m1", store.LeadFilter{})
	if err != nil || len(leads) != 1 {
		t.Fatalf("leads = %+v, %v; want one", leads, err)
	}
	l := leads[0]
	if l.Name != "Ana" || l.Phone != "+1 555 0100" || !l.Consent || l.Email == "" {
		t.Errorf("lead = %+v, want every field given", l)
	}
	if c, _, err := rs[0].GetConversation(ctx, "m1", "c1"); err != nil || !c.HasLead {
		t.Errorf("conversation = %+v, %v; want it marked as having a lead", c, err)
	}
	creators := 0
	for _, c := range created {
		if c {
			creators++
		}
	}
	if creators != 1 {
		t.Errorf("%d writes created the lead, want 1", creators)
	}
}

// TestKnowledgeRevisionAcrossReplicas checks that a knowledge write through one replica changes the revision
// another replica reads, at once, and that the other replica then reads the new knowledge.
func TestKnowledgeRevisionAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	rs := replicas(t, 2)
	writer, reader := rs[0], rs[1]
	rev := func() int64 {
		t.Helper()
		r, err := reader.KnowledgeRevision(ctx, "m1")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := rev(); r != 0 {
		t.Fatalf("initial revision %d, want 0", r)
	}
	k := store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Shipping", Content: "Two days.", CreatedAt: storetest.Base, UpdatedAt: storetest.Base}
	seen := map[int64]bool{0: true}
	for _, step := range []struct {
		name  string
		write func() error
		check func() bool
	}{
		{"create", func() error { return chat.CreateKnowledge(ctx, writer, k, chat.KnowledgeLimits{MaxItems: 10}) }, func() bool {
			got, err := reader.GetKnowledge(ctx, "m1", "k1")
			return err == nil && got.Content == "Two days."
		}},
		{"update", func() error {
			k.Content = "Three days."
			return chat.UpdateKnowledge(ctx, writer, k, 0)
		}, func() bool {
			all, err := reader.AllKnowledge(ctx, "m1")
			return err == nil && len(all) == 1 && all[0].Content == "Three days."
		}},
		{"delete", func() error { return chat.DeleteKnowledge(ctx, writer, "m1", "k1") }, func() bool {
			_, err := reader.GetKnowledge(ctx, "m1", "k1")
			return errors.Is(err, store.ErrNotFound)
		}},
	} {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		r := rev()
		if seen[r] {
			t.Errorf("after %s through one replica the other reads the revision %d, seen before", step.name, r)
		}
		seen[r] = true
		if !step.check() {
			t.Errorf("after %s the other replica does not read the change", step.name)
		}
	}
	if r, err := reader.KnowledgeRevision(ctx, "m2"); err != nil || r != 0 {
		t.Errorf("another merchant's revision = %d, %v; want 0", r, err)
	}
}

// TestExchangeAndFormTakeLocksInOneOrder races, on many conversations, a chat message carrying contact details
// with the contact form of the same visitor and conversation: both lock the conversation before its lead, so
// PostgreSQL detects no deadlock at all (a deadlock would be retried, hiding it from the callers, so the test
// reads the database's deadlock count once the stores' connections are closed and their statistics written).
func TestExchangeAndFormTakeLocksInOneOrder(t *testing.T) {
	ctx := t.Context()
	url := pg.Server(t).Database(t)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	const conversations = 60
	for c := range conversations {
		if _, err := chat.RecordExchange(ctx, st, visitorExchange(fmt.Sprint("c", c), "hello")); err != nil {
			t.Fatal(err)
		}
	}
	ok, _ := race(t, 2*conversations, nil, func(i int) error {
		conv := fmt.Sprint("c", i/2)
		c := store.Contact{Email: fmt.Sprintf("v%d@example.com", i), Consent: true}
		if i%2 == 0 {
			ex := visitorExchange(conv, "reach me")
			ex.Question.ID, ex.Answer.ID = fmt.Sprint("q", i), fmt.Sprint("a", i)
			ex.Contact, ex.LeadID = &c, fmt.Sprint("lead", i)
			_, err := chat.RecordExchange(context.Background(), st, ex)
			return err
		}
		_, err := chat.SaveLead(context.Background(), st, store.LeadInput{MerchantID: "m1",
			ConversationID: conv, VisitorID: "v1", ID: fmt.Sprint("lead", i), Contact: c, At: storetest.Base})
		return err
	})
	if ok != 2*conversations {
		t.Fatalf("%d of %d writes succeeded", ok, 2*conversations)
	}
	_ = st.Close() // a backend writes its statistics when it ends
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var deadlocks int64
	if err := conn.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&deadlocks); err != nil {
		t.Fatal(err)
	}
	if deadlocks != 0 {
		t.Errorf("PostgreSQL detected %d deadlocks", deadlocks)
	}
}

// replicas opens n stores on one database, as n replicas of the runtime would.
func replicas(t *testing.T, n int) []store.Store {
	t.Helper()
	url := pg.Server(t).Database(t)
	stores := make([]store.Store, n)
	for i := range stores {
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatalf("opening replica %d: %v", i, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	return stores
}

// race calls fn(i) for i in [0, n) from n goroutines released together and returns how many succeeded and how
// many failed with target; any other error fails the test.
func race(t *testing.T, n int, target error, fn func(i int) error) (ok, refused int) {
	t.Helper()
	return storetest.CountErrors(t, storetest.RunConcurrently(n, fn), target)
}

// visitorExchange is an exchange of merchant m1's visitor v1 in the conversation.
func visitorExchange(conversationID, question string) store.Exchange {
	ex := storetest.Exchange("m1", conversationID, storetest.Base, question, "answer")
	ex.VisitorID = "v1"
	return ex
}
