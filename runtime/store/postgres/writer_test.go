//go:build integration

package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// busyWriters occupies each of the store's n writers with a write that waits until the returned function is
// called, so that the writes made meanwhile queue up and are run in groups.
func busyWriters(t *testing.T, s *postgres.Store, n int) (release func()) {
	t.Helper()
	return waitingWrites(t, s.WriteExchange, n)
}

// waitingWrites starts n writes through write, each started before the next, that wait until the returned
// function is called.
func waitingWrites(t *testing.T, write func(context.Context, func(store.Tx) error) error, n int) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		started := make(chan struct{})
		wg.Go(func() {
			if err := write(context.Background(), func(store.Tx) error {
				close(started)
				<-gate
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
		<-started // the next one then cannot join this one's group, and takes another writer
	}
	return func() {
		close(gate)
		wg.Wait()
	}
}

// openConnections has the store's n writers hold a connection each at once, so that the pool has opened them
// before a test counts round trips: whether a writer's group finds a connection to start up is the pool's affair.
func openConnections(t *testing.T, s *postgres.Store, n int) {
	t.Helper()
	busyWriters(t, s, n)()
}

// newExchange is the first exchange of a conversation named by the runtime, citing k1.
func newExchange(conversationID string) store.Exchange {
	ex := exchange("m1", conversationID, "How long is shipping?", 0)
	ex.NewConversation = true
	ex.Answer.Sources = []store.Source{{KnowledgeID: "k1", Title: "Shipping"}}
	return ex
}

// recordAll records exchanges at once, each from its own goroutine, while the writers are busy, and returns
// each one's error.
func recordAll(t *testing.T, s *postgres.Store, writers int, exchanges []store.Exchange) []error {
	t.Helper()
	release := busyWriters(t, s, writers)
	errs := make([]error, len(exchanges))
	var wg sync.WaitGroup
	for i, ex := range exchanges {
		wg.Go(func() {
			_, errs[i] = storetest.WriteExchange(context.Background(), s, ex)
		})
	}
	storetest.AwaitWaitingWrites(t, s.Collectors(), len(exchanges))
	release()
	wg.Wait()
	return errs
}

// TestGroupCommit: exchanges that queue up while the writers are busy are written in a few transactions, each in
// one round trip, not one an exchange; every one of them is stored and counted as if written alone.
func TestGroupCommit(t *testing.T) {
	ctx := t.Context()
	p := startProxy(t, server.Database(t))
	const writers = 2 // a pool of 4 connections
	s := open(t, p.url+"&pool_max_conns=4")
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Shipping", Content: "Two days.",
		CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	var exchanges []store.Exchange
	for i := range 20 {
		exchanges = append(exchanges, newExchange(fmt.Sprint("c", i)))
	}
	openConnections(t, s, writers)
	groups0, writes0, _ := storetest.GroupMetrics(t, s.Collectors())
	p.reset()
	for i, err := range recordAll(t, s, writers, exchanges) {
		if err != nil {
			t.Errorf("exchange %d: %v", i, err)
		}
	}
	// Each writer takes at most three round trips: its busy write, its group of the 20 queued exchanges, and the
	// statements' preparation on the connection's first group. Alone, each exchange would take one.
	if n := p.roundTrips(); n > 3*writers {
		t.Errorf("20 exchanges written in %d round trips, want at most %d", n, 3*writers)
	}
	groups, writes, split := storetest.GroupMetrics(t, s.Collectors())
	groups, writes = groups-groups0, writes-writes0
	if writes != 20+writers || groups > 2*writers || split != 0 {
		t.Errorf("parley_runtime_store_group_writes: %d writes in %d groups, %d split; want %d in at most %d, none split",
			writes, groups, split, 20+writers, 2*writers)
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", at); err != nil || n != 20 {
		t.Errorf("ConversationsThisMonth = %d, %v; want 20", n, err)
	}
	k, err := s.GetKnowledge(ctx, "m1", "k1")
	if err != nil || k.UseCount != 20 {
		t.Errorf("k1 cited %d times, %v; want 20", k.UseCount, err)
	}
	for _, ex := range exchanges {
		if _, msgs, err := s.GetConversation(ctx, "m1", ex.ConversationID); err != nil || len(msgs) != 2 {
			t.Errorf("conversation %s: %d messages, %v; want 2", ex.ConversationID, len(msgs), err)
		}
	}
}

// TestGroupFailure: a write that fails in a group (here at the commit: a conversation said to be new that exists)
// fails alone; the writes that shared its transaction are written again, each on its own.
func TestGroupFailure(t *testing.T) {
	ctx := t.Context()
	s := open(t, server.Database(t)+"&pool_max_conns=4")
	if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Shipping", Content: "Two days.",
		CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	taken := newExchange("first")
	if _, err := storetest.WriteExchange(ctx, s, taken); err != nil {
		t.Fatal(err)
	}
	var exchanges []store.Exchange
	for i := range 20 {
		ex := newExchange(fmt.Sprint("c", i))
		if i == 7 {
			ex.ConversationID = taken.ConversationID
		}
		exchanges = append(exchanges, ex)
	}
	for i, err := range recordAll(t, s, 2, exchanges) {
		if (err != nil) != (i == 7) {
			t.Errorf("exchange %d: %v", i, err)
		}
	}
	if _, _, split := storetest.GroupMetrics(t, s.Collectors()); split != 1 {
		t.Errorf("parley_runtime_store_groups_split_total = %d, want 1", split)
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", at); err != nil || n != 20 {
		t.Errorf("ConversationsThisMonth = %d, %v; want 20: the first and 19 of the group", n, err)
	}
	if k, err := s.GetKnowledge(ctx, "m1", "k1"); err != nil || k.UseCount != 20 {
		t.Errorf("k1 cited %d times, %v; want 20", k.UseCount, err)
	}
	if _, msgs, err := s.GetConversation(ctx, "m1", taken.ConversationID); err != nil || len(msgs) != 2 {
		t.Errorf("the conversation the failed exchange named: %d messages, %v; want 2", len(msgs), err)
	}
}

// TestEraseAfterExchangeInOneTransaction: the counts an exchange defers to the commit are erased with the rest of
// the merchant when the erasure comes later in the same transaction.
func TestEraseAfterExchangeInOneTransaction(t *testing.T) {
	ctx := t.Context()
	s := open(t, server.Database(t))
	ex := newExchange("c1")
	ex.Answer.Sources = nil
	ex.Tokens = 10
	err := s.Write(ctx, func(tx store.Tx) error {
		if _, err := tx.UpsertConversation(ctx, ex); err != nil {
			return err
		}
		if err := tx.InsertMessages(ctx, ex); err != nil {
			return err
		}
		if err := tx.AddMonthlyTokens(ctx, "m1", at, 10); err != nil {
			return err
		}
		if err := tx.ClaimMonthlySlot(ctx, "m1", at, 0); err != nil {
			return err
		}
		_, err := tx.EraseMerchant(ctx, "m1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", at); err != nil || n != 0 {
		t.Errorf("ConversationsThisMonth after the erasure = %d, %v; want 0", n, err)
	}
	if n, err := s.TokensThisMonth(ctx, "m1", at); err != nil || n != 0 {
		t.Errorf("TokensThisMonth after the erasure = %d, %v; want 0", n, err)
	}
}

// TestGroupContinuesConversations: the exchanges of conversations the runtime has read, several of one
// conversation among them, are counted in their conversations in one transaction, without a round trip each.
func TestGroupContinuesConversations(t *testing.T) {
	ctx := t.Context()
	p := startProxy(t, server.Database(t))
	s := open(t, p.url+"&pool_max_conns=4")
	var exchanges []store.Exchange
	for c := range 3 {
		if _, err := storetest.WriteExchange(ctx, s, newExchange(fmt.Sprint("c", c))); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			ex := exchange("m1", fmt.Sprint("c", c), "And on Sundays?", 0)
			ex.ConversationExists = true
			ex.Question.ID, ex.Answer.ID = fmt.Sprintf("q%d-%d", c, i), fmt.Sprintf("a%d-%d", c, i)
			ex.Answer.Answered = i%2 == 0
			ex.Answer.CreatedAt = at.Add(time.Duration(i) * time.Minute)
			exchanges = append(exchanges, ex)
		}
	}
	openConnections(t, s, 2)
	p.reset()
	for i, err := range recordAll(t, s, 2, exchanges) {
		if err != nil {
			t.Errorf("exchange %d: %v", i, err)
		}
	}
	// As in TestGroupCommit: a busy write, a group and a preparation a writer; alone, each exchange would take one.
	if n := p.roundTrips(); n > 6 {
		t.Errorf("12 exchanges written in %d round trips, want at most 6", n)
	}
	for c := range 3 {
		conv, msgs, err := s.GetConversation(ctx, "m1", fmt.Sprint("c", c))
		if err != nil || len(msgs) != 10 || conv.MessageCount != 10 || conv.Unanswered != 2 ||
			!conv.UpdatedAt.Equal(at.Add(3*time.Minute)) {
			t.Errorf("conversation c%d: %+v with %d messages, %v; want 10 messages, 2 unanswered, updated at %s",
				c, conv, len(msgs), err, at.Add(3*time.Minute))
		}
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", at); err != nil || n != 3 {
		t.Errorf("ConversationsThisMonth = %d, %v; want 3", n, err)
	}
}

// TestLongWritesDoNotHoldExchangesUp: writes other than exchanges, which may be long, run on connections of their
// own, not on the writers: while two of them wait, exchanges are still written.
func TestLongWritesDoNotHoldExchangesUp(t *testing.T) {
	ctx := t.Context()
	s := open(t, server.Database(t)+"&pool_max_conns=4")
	defer waitingWrites(t, s.Write, 2)() // as many as the writers
	for i := range 5 {
		writeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := storetest.WriteExchange(writeCtx, s, newExchange(fmt.Sprint("c", i)))
		cancel()
		if err != nil {
			t.Fatalf("exchange %d while two long writes wait: %v", i, err)
		}
	}
}

// TestGroupKeepsMerchantsApart: one group holds two merchants' exchanges, with the same conversation IDs and
// citing items of the same ID; each merchant's conversations, item counts and month count hold its own alone.
func TestGroupKeepsMerchantsApart(t *testing.T) {
	ctx := t.Context()
	s := open(t, server.Database(t)+"&pool_max_conns=4")
	sizes := map[string]int{"m1": 10, "m2": 4}
	var exchanges []store.Exchange
	for merchant, n := range sizes {
		if err := storetest.WriteKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: merchant, Title: "Shipping",
			Content: "Two days.", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		started := newExchange("shared")
		started.MerchantID = merchant
		started.Question.ID, started.Answer.ID = merchant+"-q", merchant+"-a"
		if _, err := storetest.WriteExchange(ctx, s, started); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			ex := newExchange(fmt.Sprint("c", i)) // the same conversation IDs for both merchants
			ex.MerchantID = merchant
			ex.Question.ID, ex.Answer.ID = fmt.Sprintf("%s-q%d", merchant, i), fmt.Sprintf("%s-a%d", merchant, i)
			continued := ex
			continued.ConversationID, continued.NewConversation, continued.ConversationExists = "shared", false, true
			continued.Question.ID, continued.Answer.ID = "more-"+ex.Question.ID, "more-"+ex.Answer.ID
			exchanges = append(exchanges, ex, continued)
		}
	}
	for i, err := range recordAll(t, s, 2, exchanges) {
		if err != nil {
			t.Errorf("exchange %d: %v", i, err)
		}
	}
	for merchant, n := range sizes {
		if got, err := s.ConversationsThisMonth(ctx, merchant, at); err != nil || got != n+1 {
			t.Errorf("%s: ConversationsThisMonth = %d, %v; want %d", merchant, got, err, n+1)
		}
		if k, err := s.GetKnowledge(ctx, merchant, "k1"); err != nil || k.UseCount != 2*n+1 {
			t.Errorf("%s's k1 cited %d times, %v; want %d", merchant, k.UseCount, err, 2*n+1)
		}
		c, msgs, err := s.GetConversation(ctx, merchant, "shared")
		if err != nil || c.MessageCount != 2*(n+1) || len(msgs) != 2*(n+1) || c.MerchantID != merchant {
			t.Errorf("%s's shared conversation: %+v with %d messages, %v; want %d", merchant, c, len(msgs), err, 2*(n+1))
		}
		for _, m := range msgs {
			if !strings.HasPrefix(m.ID, merchant+"-") && !strings.HasPrefix(m.ID, "more-"+merchant+"-") {
				t.Errorf("%s's shared conversation holds message %s", merchant, m.ID)
			}
		}
	}
}
