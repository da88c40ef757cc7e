package chat_test

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// runFlows runs chat's writes over one store, as every store must carry them out: exchanges within the monthly
// ceiling, knowledge and sources within the plan's, leads, feedback, the outbox, per-record deletions, a
// merchant's erasure, identities and handoff. open returns a new, empty store each time it is called; the
// subtest that opened it closes it. The store's own statements are storetest's; these are the rules above them.
func runFlows(t *testing.T, open func(t *testing.T) store.Store) {
	h := harness{open: open}
	t.Run("Conversations", h.conversations)
	t.Run("Quota", h.quota)
	t.Run("Knowledge", h.knowledge)
	t.Run("ListKnowledge", h.listKnowledge)
	t.Run("Sources", h.sources)
	t.Run("DeclaredSources", h.declaredSources)
	t.Run("SourcePages", h.sourcePages)
	t.Run("SourceClaims", h.sourceClaims)
	t.Run("Isolation", h.isolation)
	t.Run("Leads", h.leads)
	t.Run("Ratings", h.ratings)
	t.Run("ReviewMisses", h.reviewMisses)
	t.Run("FeedbackWeeks", h.feedbackWeeks)
	t.Run("Outbox", h.outbox)
	t.Run("Erase", h.erase)
	t.Run("Identities", h.identities)
	t.Run("Handoff", h.handoff)
}

// harness opens the stores of the subtests.
type harness struct {
	open func(t *testing.T) store.Store
}

// store opens a fresh store, closed when t ends.
func (h harness) store(t *testing.T) store.Store {
	t.Helper()
	return storetest.Fresh(t, h.open)
}

// dump returns every row the merchant has in every table of the store's schema that has a merchant_id column
// (read from the database's catalogue, so that a table added later is in it), each as "table|field|field|...|".
type dump func(t *testing.T, merchantID string) []string

// openCiting opens a store with open, closed when t ends, in which each of merchants has the knowledge item k1
// for answers to cite, and returns it with the dump of its rows.
func openCiting(t *testing.T, open func(t *testing.T) (store.Store, dump), merchants ...string) (store.Store, dump) {
	t.Helper()
	s, dump := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, m := range merchants {
		mustCreateKnowledge(t, s, storetest.Item(m, "k1", storetest.Base), 0)
	}
	return s, dump
}

// record stores ex through chat.RecordExchange and fails the test on error.
func record(t *testing.T, s store.Store, ex store.Exchange) store.ExchangeResult {
	t.Helper()
	res, err := chat.RecordExchange(t.Context(), s, ex)
	if err != nil {
		t.Fatalf("RecordExchange(%s/%s): %v", ex.MerchantID, ex.ConversationID, err)
	}
	return res
}

// startConversation records one exchange in a new conversation created at at.
func startConversation(t *testing.T, s store.Store, merchantID, id string, at time.Time) {
	t.Helper()
	if res := record(t, s, storetest.Exchange(merchantID, id, at, "question of "+id, "answer to "+id)); !res.Created {
		t.Fatalf("conversation %s was not created", id)
	}
}
