package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// Migration 12 rewrites the CR line breaks of the knowledge items stored before chat.KnowledgeInput.Validate kept
// every line break as LF. Each store's test of it stores LineBreakItems with its own statements at migration 11,
// with knowledge revision 3 for merchant m1 and 5 for m2, migrates up and calls CheckLineBreaksMigrated.

// LineBreakItems returns the items as a store before migration 12 could hold them, created at created, and as
// they must read after it: the CRs of title, content and tags are LF, the rest, items without a CR among them,
// as they were.
func LineBreakItems(created time.Time) (before, after []store.Knowledge) {
	item := func(merchant, id, title, content, url string, tags, questions []string, n int) store.Knowledge {
		return store.Knowledge{ID: id, MerchantID: merchant, Title: title, Content: content, URL: url, Tags: tags,
			Questions: questions, CreatedAt: created, UpdatedAt: created.Add(time.Duration(n) * time.Millisecond)}
	}
	before = []store.Knowledge{
		item("m1", "k1", "a\rb\r\nc", "a\r\nb\rc", "https://example.com/a", []string{"x\r\ny", "z\rw", "plain"}, []string{"When?", "Where?"}, 0),
		item("m1", "k2", "Plain", "one\ntwo", "", []string{"a<b", "c\nd"}, nil, 1),
		item("m1", "k3", "T", "only\rcontent", "", []string{"a<b"}, nil, 2),
		item("m2", "k1", "T", "C\nD", "", []string{"<b>"}, []string{"Q?"}, 3),
	}
	after = []store.Knowledge{
		item("m1", "k1", "a\nb\nc", "a\nb\nc", "https://example.com/a", []string{"x\ny", "z\nw", "plain"}, []string{"When?", "Where?"}, 0),
		before[1],
		item("m1", "k3", "T", "only\ncontent", "", []string{"a<b"}, nil, 2),
		before[3],
	}
	return before, after
}

// CheckLineBreaksMigrated checks that s, migrated past 12, reads the items of LineBreakItems(created) as they
// must read after it, finds an item by a rewritten tag, and has moved the knowledge revision of m1, whose items
// changed, from 3 to 4, and not m2's.
func CheckLineBreaksMigrated(t *testing.T, s store.Store, created time.Time) {
	t.Helper()
	ctx := t.Context()
	_, after := LineBreakItems(created)
	for _, want := range after {
		got, err := s.GetKnowledge(ctx, want.MerchantID, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s/%s after the migration: %#v, %v\nwant %#v", want.MerchantID, want.ID, got, err, want)
		}
	}
	if items, _, err := s.ListKnowledge(ctx, "m1", store.KnowledgeFilter{Tag: "x\ny"}); err != nil || len(items) != 1 || items[0].ID != "k1" {
		t.Errorf("ListKnowledge(tag x\\ny) = %+v, %v; want k1", items, err)
	}
	for merchant, want := range map[string]int64{"m1": 4, "m2": 5} {
		if rev, err := s.KnowledgeRevision(ctx, merchant); err != nil || rev != want {
			t.Errorf("%s: knowledge revision %d, %v; want %d", merchant, rev, err, want)
		}
	}
}

// CheckLeasesMigrated checks that s, migrated past the migration that named leases within their merchant, from
// leases "embed/m1" and "retention-sweep" that holder "a" held until an hour past Base, still has both held, as
// m1's lease "embed" and the runtime's "retention-sweep", and that m1's erasure deletes m1's only.
func CheckLeasesMigrated(t *testing.T, s store.Store) {
	t.Helper()
	held := map[string]string{"m1": "embed", "": "retention-sweep"}
	for merchantID, name := range held {
		if claimLease(t, s, merchantID, name, "b", Base) {
			t.Errorf("b took merchant %q's lease %s that a held before the migration", merchantID, name)
		}
	}
	if err := s.Write(t.Context(), func(tx store.Tx) error {
		_, err := tx.EraseMerchant(t.Context(), "m1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for merchantID, name := range held {
		if got, want := claimLease(t, s, merchantID, name, "b", Base), merchantID == "m1"; got != want {
			t.Errorf("after m1's erasure, b claiming merchant %q's lease %s: %v, want %v", merchantID, name, got, want)
		}
	}
}

// The migration that made conversations count their answers and tokens fills the counts of the conversations
// stored before it. Each store's test stores, at the migration before, m1's conversation c1 created at Base by
// visitor v1 with four messages (a visitor's question, an answer of 40 tokens, a team member's message, an answer
// of 2 tokens), m1's c2 of v1 with none, and m2's c1 of v1 with a question and an answer of 7 tokens, migrates up
// and calls CheckConversationUseMigrated.

// CheckConversationUseMigrated checks the counts of the conversations above, and the visitors' use from them.
func CheckConversationUseMigrated(t *testing.T, s store.Store) {
	t.Helper()
	for _, tc := range []struct {
		merchant, id string
		answers      int
		tokens       int64
	}{{"m1", "c1", 2, 42}, {"m1", "c2", 0, 0}, {"m2", "c1", 1, 7}} {
		c, _, err := s.GetConversation(t.Context(), tc.merchant, tc.id)
		if err != nil || c.Answers != tc.answers || c.Tokens != tc.tokens {
			t.Errorf("%s/%s: %d answers and %d tokens, %v; want %d and %d", tc.merchant, tc.id, c.Answers, c.Tokens, err,
				tc.answers, tc.tokens)
		}
	}
	for merchant, want := range map[string]store.Use{"m1": {Answers: 2, Tokens: 42}, "m2": {Answers: 1, Tokens: 7}} {
		if got, err := s.VisitorUse(t.Context(), merchant, "v1", Base.Add(-time.Hour)); err != nil || got != want {
			t.Errorf("VisitorUse(%s, v1) = %+v, %v; want %+v", merchant, got, err, want)
		}
	}
}
