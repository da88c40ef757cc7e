package storetest

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

func (h harness) listConversations(t *testing.T) {
	t.Run("Pagination", h.conversationPages)
	t.Run("ExactLastPage", h.conversationExactLastPage)
	t.Run("StableWhileWriting", h.conversationPagesWhileWriting)
	t.Run("Limits", h.conversationLimits)
	t.Run("Filters", h.conversationFilters)
	t.Run("InvalidCursor", h.conversationInvalidCursor)
}

// SeedConversations starts n conversations, two per creation time (so that ties are ordered by ID), and
// returns their IDs in listing order: newest first, then by ID descending.
func SeedConversations(t *testing.T, s store.Store, merchantID string, n int) []string {
	t.Helper()
	type conv struct {
		id string
		at time.Time
	}
	convs := make([]conv, 0, n)
	for i := range n {
		// In every other pair the first conversation has the greater ID, so that neither insertion order nor
		// reversed insertion order is the listing order.
		suffix := []string{"a", "b"}[(i+i/2)%2]
		c := conv{id: fmt.Sprintf("conv-%03d-%s", i/2, suffix), at: Base.Add(time.Duration(i/2) * time.Minute)}
		startConversation(t, s, merchantID, c.id, c.at)
		convs = append(convs, c)
	}
	slices.SortFunc(convs, func(a, b conv) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	ids := make([]string, 0, n)
	for _, c := range convs {
		ids = append(ids, c.id)
	}
	return ids
}

func (h harness) conversationPages(t *testing.T) {
	s := h.store(t)
	want := SeedConversations(t, s, "m1", 23)
	var got []string
	f := store.ConversationFilter{Limit: 5}
	for page := 0; ; page++ {
		list, next, err := s.ListConversations(t.Context(), "m1", f)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		wantLen := min(5, 23-page*5)
		if len(list) != wantLen {
			t.Fatalf("page %d has %d conversations, want %d", page, len(list), wantLen)
		}
		got = append(got, ConversationIDs(list)...)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatal("too many pages")
		}
		f.Cursor = next
	}
	CheckIDs(t, "listed conversations", got, want)
	for _, c := range ListAllConversations(t, s, "m1", store.ConversationFilter{}) {
		if c.MerchantID != "m1" || c.MessageCount != 2 || c.FirstMessage != "question of "+c.ID {
			t.Errorf("listed conversation = %+v", c)
		}
	}
}

func (h harness) conversationExactLastPage(t *testing.T) {
	s := h.store(t)
	SeedConversations(t, s, "m1", 10)
	first, next, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 5})
	if err != nil || len(first) != 5 || next == "" {
		t.Fatalf("first page: %d conversations, cursor %q, error %v", len(first), next, err)
	}
	second, next, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 5, Cursor: next})
	if err != nil || len(second) != 5 || next != "" {
		t.Fatalf("last page: %d conversations, cursor %q (want none), error %v", len(second), next, err)
	}
	empty, next, err := s.ListConversations(t.Context(), "m2", store.ConversationFilter{})
	if err != nil || len(empty) != 0 || next != "" {
		t.Errorf("empty listing: %d conversations, cursor %q, error %v", len(empty), next, err)
	}
}

// conversationPagesWhileWriting adds conversations between pages: a cursor continues where it was, without
// duplicates or gaps.
func (h harness) conversationPagesWhileWriting(t *testing.T) {
	s := h.store(t)
	want := SeedConversations(t, s, "m1", 12)
	list, next, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	got := ConversationIDs(list)
	startConversation(t, s, "m1", "newest", Base.Add(time.Hour))
	startConversation(t, s, "m1", "oldest", Base.Add(-time.Hour))
	f := store.ConversationFilter{Limit: 4, Cursor: next}
	got = append(got, ConversationIDs(ListAllConversations(t, s, "m1", f))...)
	CheckIDs(t, "listed conversations", got, append(want, "oldest"))
}

func (h harness) conversationLimits(t *testing.T) {
	s := h.store(t)
	SeedConversations(t, s, "m1", 105)
	for _, tc := range []struct {
		limit, want int
	}{{0, 20}, {-3, 20}, {1, 1}, {100, 100}, {101, 100}, {10000, 100}} {
		list, next, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: tc.limit})
		if err != nil {
			t.Fatalf("Limit %d: %v", tc.limit, err)
		}
		if len(list) != tc.want || next == "" {
			t.Errorf("Limit %d: %d conversations, cursor %q; want %d and a cursor", tc.limit, len(list), next, tc.want)
		}
	}
}

func (h harness) conversationFilters(t *testing.T) {
	s := h.store(t)
	record(t, s, Exchange("m1", "f1", Base.Add(-2*time.Hour), "Where is my ORDER?", "It ships tomorrow."))
	record(t, s, Exchange("m1", "f2", Base.Add(-time.Hour), "Do you sell 100% cotton shirts?", "Yes, we do."))
	record(t, s, Exchange("m1", "f3", Base, "hello", "Hi, how can I help with your Order?"))
	record(t, s, Exchange("m1", "f4", Base.Add(time.Hour), "an under_score", "ok"))
	record(t, s, Exchange("m1", "f4", Base.Add(2*time.Hour), "I need an invoice", "Sure."))
	record(t, s, Exchange("m2", "other", Base, "order order order", "order"))
	yes, no := true, false

	for _, tc := range []struct {
		name string
		f    store.ConversationFilter
		want []string
	}{
		{"none", store.ConversationFilter{}, []string{"f4", "f3", "f2", "f1"}},
		{"from inclusive", store.ConversationFilter{From: Base.Add(-time.Hour)}, []string{"f4", "f3", "f2"}},
		{"to exclusive", store.ConversationFilter{To: Base}, []string{"f2", "f1"}},
		{"range", store.ConversationFilter{From: Base.Add(-time.Hour), To: Base.Add(time.Hour)}, []string{"f3", "f2"}},
		{"query any message, any case", store.ConversationFilter{Query: "order"}, []string{"f3", "f1"}},
		{"query upper case", store.ConversationFilter{Query: "ORDER"}, []string{"f3", "f1"}},
		{"query later message", store.ConversationFilter{Query: "INVOICE"}, []string{"f4"}},
		{"query percent is literal", store.ConversationFilter{Query: "0% c"}, []string{"f2"}},
		{"query lone percent", store.ConversationFilter{Query: "%"}, []string{"f2"}},
		{"query underscore is literal", store.ConversationFilter{Query: "_"}, []string{"f4"}},
		{"query no match", store.ConversationFilter{Query: "refund"}, nil},
		{"query and range", store.ConversationFilter{Query: "order", From: Base.Add(-time.Hour)}, []string{"f3"}},
		{"without lead", store.ConversationFilter{HasLead: &no}, []string{"f4", "f3", "f2", "f1"}},
		{"with lead", store.ConversationFilter{HasLead: &yes}, nil},
		{"query paginated", store.ConversationFilter{Query: "O", Limit: 1}, []string{"f4", "f3", "f2", "f1"}},
	} {
		got := ConversationIDs(ListAllConversations(t, s, "m1", tc.f))
		CheckIDs(t, tc.name, got, tc.want)
	}
}

func (h harness) conversationInvalidCursor(t *testing.T) {
	s := h.store(t)
	SeedConversations(t, s, "m1", 3)
	SeedConversations(t, s, "m2", 3)
	if err := WriteKnowledge(t.Context(), s, Item("m1", "k1", Base)); err != nil {
		t.Fatal(err)
	}
	if err := WriteKnowledge(t.Context(), s, Item("m1", "k2", Base)); err != nil {
		t.Fatal(err)
	}

	_, fromM2, err := s.ListConversations(t.Context(), "m2", store.ConversationFilter{Limit: 1})
	if err != nil || fromM2 == "" {
		t.Fatalf("listing m2: cursor %q, error %v", fromM2, err)
	}
	_, knowledgeCursor, err := s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{Limit: 1})
	if err != nil || knowledgeCursor == "" {
		t.Fatalf("listing knowledge: cursor %q, error %v", knowledgeCursor, err)
	}
	for name, cursor := range map[string]string{
		"garbage":           "not a cursor!",
		"base64 of garbage": base64.RawURLEncoding.EncodeToString([]byte("garbage")),
		"base64 of JSON":    base64.RawURLEncoding.EncodeToString([]byte(`{"id":"x"}`)),
		"truncated":         fromM2[:len(fromM2)/2],
		"other merchant":    fromM2,
		"knowledge cursor":  knowledgeCursor,
	} {
		list, _, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Cursor: cursor})
		WantErr(t, name, err, store.ErrInvalidCursor)
		if len(list) != 0 {
			t.Errorf("%s: %d conversations returned with the error", name, len(list))
		}
	}
}
