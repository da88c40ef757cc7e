package chat_test

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func (h harness) isolation(t *testing.T) {
	t.Run("Conversations", h.isolatedConversations)
	t.Run("SameConversationID", h.sameConversationID)
	t.Run("Knowledge", h.isolatedKnowledge)
}

// isolatedConversations checks that merchant B cannot reach merchant A's conversations, even by ID.
func (h harness) isolatedConversations(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("A", "secret", storetest.Base, "my card number", "noted")
	ex.MonthlyLimit = 1
	record(t, s, ex)

	_, msgs, err := s.GetConversation(t.Context(), "B", "secret")
	storetest.WantErr(t, "B getting A's conversation", err, store.ErrNotFound)
	if len(msgs) != 0 {
		t.Errorf("messages returned with ErrNotFound: %+v", msgs)
	}
	_, latest, err := s.ConversationTail(t.Context(), "B", "secret", 20)
	storetest.WantErr(t, "B reading the latest messages of A's conversation", err, store.ErrNotFound)
	if len(latest) != 0 {
		t.Errorf("messages returned with ErrNotFound: %+v", latest)
	}
	if storetest.Exists(t, s, "B", "secret") {
		t.Error("B sees A's conversation as existing")
	}
	if list := storetest.ListAllConversations(t, s, "B", store.ConversationFilter{Query: "card"}); len(list) != 0 {
		t.Errorf("B lists A's conversations: %+v", list)
	}
	if n := storetest.ThisMonth(t, s, "B", storetest.Base); n != 0 {
		t.Errorf("B's month count = %d, want 0", n)
	}
	if o := storetest.OverviewOf(t, s, "B", storetest.Base.Add(-time.Hour), storetest.Base.Add(time.Hour)); o.Conversations != 0 || len(o.TopQuestions) != 0 {
		t.Errorf("B's overview shows A's data: %+v", o)
	}
	// A is at its ceiling; B is not.
	exB := storetest.Exchange("B", "mine", storetest.Base, "hello", "hi")
	exB.MonthlyLimit = 1
	if res := record(t, s, exB); !res.Created {
		t.Error("B's conversation not created")
	}
}

// sameConversationID lets two merchants use one conversation ID independently.
func (h harness) sameConversationID(t *testing.T) {
	s := h.store(t)
	a := storetest.Exchange("A", "c1", storetest.Base, "question of A", "answer to A")
	a.VisitorID = "va"
	b := storetest.Exchange("B", "c1", storetest.Base.Add(time.Minute), "question of B", "answer to B")
	b.VisitorID = "vb"
	if res := record(t, s, a); !res.Created {
		t.Error("A's conversation not created")
	}
	if res := record(t, s, b); !res.Created {
		t.Error("B's conversation with A's ID not created")
	}
	record(t, s, storetest.Exchange("B", "c1", storetest.Base.Add(2*time.Minute), "more from B", "ok"))
	// As the runtime writes a conversation it has just read: the hint names the conversation by merchant too.
	known := storetest.Exchange("B", "c1", storetest.Base.Add(3*time.Minute), "and more from B", "ok")
	known.ConversationExists = true
	record(t, s, known)

	for _, tc := range []struct {
		merchant, visitor, first string
		messages                 int
	}{{"A", "va", "question of A", 2}, {"B", "vb", "question of B", 6}} {
		c, msgs := storetest.GetConversation(t, s, tc.merchant, "c1")
		if c.MerchantID != tc.merchant || c.VisitorID != tc.visitor || c.FirstMessage != tc.first ||
			c.MessageCount != tc.messages || len(msgs) != tc.messages {
			t.Errorf("%s's conversation = %+v with %d messages", tc.merchant, c, len(msgs))
		}
		if list := storetest.ListAllConversations(t, s, tc.merchant, store.ConversationFilter{}); len(list) != 1 ||
			list[0].MerchantID != tc.merchant {
			t.Errorf("%s lists %+v", tc.merchant, list)
		}
		if n := storetest.ThisMonth(t, s, tc.merchant, storetest.Base); n != 1 {
			t.Errorf("%s's month count = %d, want 1", tc.merchant, n)
		}
	}
}

// isolatedKnowledge checks that merchant B cannot reach merchant A's knowledge, even by ID.
func (h harness) isolatedKnowledge(t *testing.T) {
	s := h.store(t)
	secret := storetest.Item("A", "k1", storetest.Base)
	secret.Title, secret.Questions = "A's secret", []string{"What is the vault code?"}
	mustCreateKnowledge(t, s, secret, 1)
	revA := storetest.Revision(t, s, "A")

	_, err := s.GetKnowledge(t.Context(), "B", "k1")
	storetest.WantErr(t, "B getting A's item", err, store.ErrNotFound)
	hijack := storetest.Item("B", "k1", storetest.Base)
	storetest.WantErr(t, "B updating A's item", chat.UpdateKnowledge(t.Context(), s, hijack, 0), store.ErrNotFound)
	storetest.WantErr(t, "B deleting A's item", chat.DeleteKnowledge(t.Context(), s, "B", "k1"), store.ErrNotFound)
	// A title's word, a listed question's, the status of A's item.
	published := false
	for _, f := range []store.KnowledgeFilter{{Query: "secret"}, {Query: "vault"}, {Draft: &published}} {
		items, _, err := s.ListKnowledge(t.Context(), "B", f)
		if err != nil || len(items) != 0 {
			t.Errorf("B listing with %+v lists A's items: %+v, %v", f, items, err)
		}
	}
	if ids := allKnowledgeIDs(t, s, "B"); len(ids) != 0 {
		t.Errorf("AllKnowledge of B = %v", ids)
	}
	if rev := storetest.Revision(t, s, "B"); rev != 0 {
		t.Errorf("B's revision = %d, want 0", rev)
	}
	if rev := storetest.Revision(t, s, "A"); rev != revA {
		t.Errorf("B's failed writes changed A's revision from %d to %d", revA, rev)
	}
	checkKnowledge(t, mustGetKnowledge(t, s, "A", "k1"), secret)

	// B may use the same ID, and its ceiling counts only its items.
	mine := storetest.Item("B", "k1", storetest.Base)
	mine.Title = "B's own"
	mustCreateKnowledge(t, s, mine, 1)
	checkKnowledge(t, mustGetKnowledge(t, s, "B", "k1"), mine)
	if err := chat.DeleteKnowledge(t.Context(), s, "B", "k1"); err != nil {
		t.Fatal(err)
	}
	checkKnowledge(t, mustGetKnowledge(t, s, "A", "k1"), secret)
}
