package chat_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
	"github.com/parley-dev/parley/runtime/tenant"
)

func (h harness) knowledge(t *testing.T) {
	t.Run("CRUD", h.knowledgeCRUD)
	t.Run("Limit", h.knowledgeLimit)
	t.Run("LimitConcurrent", h.knowledgeLimitConcurrent)
	t.Run("All", h.allKnowledge)
	t.Run("Revision", h.knowledgeRevision)
	t.Run("UseCount", h.knowledgeUseCount)
	t.Run("Characters", h.knowledgeCharacters)
	t.Run("CharactersConcurrent", h.knowledgeCharactersConcurrent)
	t.Run("File", h.knowledgeFile)
	t.Run("Vectors", h.knowledgeVectors)
}

// knowledgeFile keeps the file an item was made of, and deletes a file's items alone: not another file's, not
// another merchant's, not those of no file.
func (h harness) knowledgeFile(t *testing.T) {
	s := h.store(t)
	var want []store.Knowledge
	for _, k := range []struct{ merchant, id, file string }{
		{"m1", "k1", "returns.pdf"}, {"m1", "k2", "returns.pdf"}, {"m1", "k3", "Returns.pdf"}, {"m1", "k4", ""},
		{"m2", "k5", "returns.pdf"},
	} {
		item := storetest.Item(k.merchant, k.id, storetest.Base)
		item.File = k.file
		mustCreateKnowledge(t, s, item, 0)
		want = append(want, item)
	}
	checkKnowledge(t, mustGetKnowledge(t, s, "m1", "k1"), want[0])
	deleted := map[string]int{}
	err := s.Write(t.Context(), func(tx store.Tx) error {
		for _, name := range []string{"returns.pdf", "", "other.pdf"} {
			n, err := tx.DeleteFileKnowledge(t.Context(), "m1", name)
			if err != nil {
				return err
			}
			deleted[name] = n
		}
		return nil
	})
	if err != nil {
		t.Fatalf("DeleteFileKnowledge: %v", err)
	}
	if deleted["returns.pdf"] != 2 || deleted[""] != 0 || deleted["other.pdf"] != 0 {
		t.Errorf("deleted %v; want the two items of returns.pdf alone", deleted)
	}
	left := allKnowledgeIDs(t, s, "m1")
	slices.Sort(left)
	storetest.CheckIDs(t, "m1's items left", left, []string{"k3", "k4"})
	storetest.CheckIDs(t, "m2's items left", allKnowledgeIDs(t, s, "m2"), []string{"k5"})
}

// knowledgeCharacters counts characters, not bytes, of titles, contents and questions, per merchant and
// without the item named, as Knowledge.Characters does.
func (h harness) knowledgeCharacters(t *testing.T) {
	s := h.store(t)
	count := func(except string) int { // merchant m1's
		t.Helper()
		var n int
		err := s.Write(t.Context(), func(tx store.Tx) (err error) {
			n, err = tx.KnowledgeCharacters(t.Context(), "m1", except)
			return err
		})
		if err != nil {
			t.Fatalf("KnowledgeCharacters: %v", err)
		}
		return n
	}
	if n := count(""); n != 0 {
		t.Errorf("an empty knowledge base holds %d characters", n)
	}
	a := storetest.Item("m1", "k1", storetest.Base)
	a.Title, a.Content = "Ça va", "Oui 🚀 ✅" // 5 and 7 characters, 6 and 12 bytes
	b := storetest.Item("m1", "k2", storetest.Base)
	b.Title, b.Content = "ab", "cde"
	c := storetest.Item("m1", "k4", storetest.Base)
	c.Title, c.Content, c.Questions = "f", "g", []string{"Où?", "ça"} // 2, and 3 and 2 with the line between
	mustCreateKnowledge(t, s, a, 0)
	mustCreateKnowledge(t, s, b, 0)
	mustCreateKnowledge(t, s, c, 0)
	mustCreateKnowledge(t, s, storetest.Item("m2", "k3", storetest.Base), 0)
	if n := count(""); n != 25 {
		t.Errorf("KnowledgeCharacters = %d, want 25", n)
	}
	if n := count("k1"); n != 13 {
		t.Errorf("KnowledgeCharacters without k1 = %d, want 13", n)
	}
	for _, k := range []store.Knowledge{a, b, c} {
		if n := count(k.ID); n != 25-k.Characters() {
			t.Errorf("KnowledgeCharacters without %s = %d, but Characters() = %d of 25", k.ID, n, k.Characters())
		}
	}
}

func mustCreateKnowledge(t *testing.T, s store.Store, k store.Knowledge, maxItems int) {
	t.Helper()
	if err := chat.CreateKnowledge(t.Context(), s, k, chat.KnowledgeLimits{MaxItems: maxItems}); err != nil {
		t.Fatalf("CreateKnowledge(%s/%s): %v", k.MerchantID, k.ID, err)
	}
}

func mustGetKnowledge(t *testing.T, s store.Store, merchantID, id string) store.Knowledge {
	t.Helper()
	k, err := s.GetKnowledge(t.Context(), merchantID, id)
	if err != nil {
		t.Fatalf("GetKnowledge(%s, %s): %v", merchantID, id, err)
	}
	return k
}

func allKnowledgeIDs(t *testing.T, s store.Store, merchantID string) []string {
	t.Helper()
	items, err := s.AllKnowledge(t.Context(), merchantID)
	if err != nil {
		t.Fatalf("AllKnowledge: %v", err)
	}
	return knowledgeIDs(items)
}

func knowledgeIDs(items []store.Knowledge) []string {
	ids := make([]string, 0, len(items))
	for _, k := range items {
		ids = append(ids, k.ID)
	}
	return ids
}

// checkKnowledge compares an item as stored with what was written.
func checkKnowledge(t *testing.T, got, want store.Knowledge) {
	t.Helper()
	if got.ID != want.ID || got.MerchantID != want.MerchantID || got.Title != want.Title ||
		got.Content != want.Content || got.URL != want.URL || got.Draft != want.Draft || got.Curated != want.Curated ||
		got.UseCount != want.UseCount || got.SourceID != want.SourceID || got.File != want.File {
		t.Errorf("item = %+v, want %+v", got, want)
	}
	if len(got.Tags) != 0 || len(want.Tags) != 0 {
		if !slices.Equal(got.Tags, want.Tags) {
			t.Errorf("item %s tags = %q, want %q", want.ID, got.Tags, want.Tags)
		}
	}
	if !slices.Equal(got.Questions, want.Questions) {
		t.Errorf("item %s questions = %q, want %q", want.ID, got.Questions, want.Questions)
	}
	storetest.CheckTime(t, "item "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	storetest.CheckTime(t, "item "+want.ID+" UpdatedAt", got.UpdatedAt, want.UpdatedAt)
}

func (h harness) knowledgeCRUD(t *testing.T) {
	s := h.store(t)
	k := storetest.Item("m1", "k1", storetest.Base.Add(987654321*time.Nanosecond).In(time.FixedZone("UTC+2", 2*60*60)))
	k.Tags = []string{"shipping", "Ünïcode tag", "faq"}
	k.Questions = []string{"Do you ship to Zürich?", "How long does delivery take, \"express\" included?"}
	k.UpdatedAt = k.CreatedAt.Add(30 * time.Minute)
	k.Content = "Line one\nLine two with \"quotes\" and 100% _stuff_"
	k.Curated = true
	mustCreateKnowledge(t, s, k, 0)
	checkKnowledge(t, mustGetKnowledge(t, s, "m1", "k1"), k)

	noTags := storetest.Item("m1", "k2", storetest.Base)
	noTags.Tags, noTags.URL, noTags.Draft = nil, "", true
	mustCreateKnowledge(t, s, noTags, 0)
	checkKnowledge(t, mustGetKnowledge(t, s, "m1", "k2"), noTags)

	updated := k
	updated.Title, updated.Content, updated.URL, updated.Draft, updated.Curated = "New title", "New content", "", true, false
	updated.Tags = []string{"returns"}
	updated.Questions = []string{"Can I send it back?"}
	updated.CreatedAt = storetest.Base.Add(100 * time.Hour) // ignored: only UpdatedAt changes
	updated.UpdatedAt = storetest.Base.Add(time.Hour)
	if err := chat.UpdateKnowledge(t.Context(), s, updated, 0); err != nil {
		t.Fatalf("UpdateKnowledge: %v", err)
	}
	want := updated
	want.CreatedAt = k.CreatedAt
	checkKnowledge(t, mustGetKnowledge(t, s, "m1", "k1"), want)

	if err := chat.DeleteKnowledge(t.Context(), s, "m1", "k1"); err != nil {
		t.Fatalf("DeleteKnowledge: %v", err)
	}
	_, err := s.GetKnowledge(t.Context(), "m1", "k1")
	storetest.WantErr(t, "GetKnowledge after delete", err, store.ErrNotFound)
	storetest.WantErr(t, "DeleteKnowledge twice", chat.DeleteKnowledge(t.Context(), s, "m1", "k1"), store.ErrNotFound)
	storetest.WantErr(t, "UpdateKnowledge of a deleted item", chat.UpdateKnowledge(t.Context(), s, updated, 0), store.ErrNotFound)
	storetest.CheckIDs(t, "remaining items", allKnowledgeIDs(t, s, "m1"), []string{"k2"})

	if err := chat.CreateKnowledge(t.Context(), s, storetest.Item("", "k9", storetest.Base), chat.KnowledgeLimits{}); err == nil {
		t.Error("CreateKnowledge without a merchant succeeded")
	}
	if err := chat.CreateKnowledge(t.Context(), s, storetest.Item("m1", "", storetest.Base), chat.KnowledgeLimits{}); err == nil {
		t.Error("CreateKnowledge without an ID succeeded")
	}
	if err := chat.CreateKnowledge(t.Context(), s, storetest.Item("m1", "k2", storetest.Base), chat.KnowledgeLimits{}); err == nil {
		t.Error("CreateKnowledge with an existing ID succeeded")
	}
	checkKnowledge(t, mustGetKnowledge(t, s, "m1", "k2"), noTags)
}

func (h harness) knowledgeLimit(t *testing.T) {
	s := h.store(t)
	for i := range 3 {
		mustCreateKnowledge(t, s, storetest.Item("m1", fmt.Sprint("k", i), storetest.Base), 3)
	}
	rev := storetest.Revision(t, s, "m1")
	err := chat.CreateKnowledge(t.Context(), s, storetest.Item("m1", "k3", storetest.Base), chat.KnowledgeLimits{MaxItems: 3})
	storetest.WantErr(t, "fourth item with a ceiling of 3", err, store.ErrKnowledgeLimit)
	_, err = s.GetKnowledge(t.Context(), "m1", "k3")
	storetest.WantErr(t, "GetKnowledge of the refused item", err, store.ErrNotFound)
	if got := storetest.Revision(t, s, "m1"); got != rev {
		t.Errorf("refused item changed the revision from %d to %d", rev, got)
	}
	err = chat.CreateKnowledge(t.Context(), s, storetest.Item("m1", "k3", storetest.Base), chat.KnowledgeLimits{MaxItems: 2})
	storetest.WantErr(t, "item past a lowered ceiling", err, store.ErrKnowledgeLimit)

	if err := chat.DeleteKnowledge(t.Context(), s, "m1", "k0"); err != nil {
		t.Fatal(err)
	}
	mustCreateKnowledge(t, s, storetest.Item("m1", "k3", storetest.Base), 3)
	mustCreateKnowledge(t, s, storetest.Item("m1", "k4", storetest.Base), 0) // 0: no ceiling
	mustCreateKnowledge(t, s, storetest.Item("m2", "k0", storetest.Base), 1) // another merchant counts its own items
	if n := len(allKnowledgeIDs(t, s, "m1")); n != 4 {
		t.Errorf("m1 holds %d items, want 4", n)
	}
}

// knowledgeLimitConcurrent creates 20 items at once with a ceiling of 5: exactly 5 are stored.
func (h harness) knowledgeLimitConcurrent(t *testing.T) {
	s := h.store(t)
	errs := storetest.RunConcurrently(20, func(i int) error {
		return chat.CreateKnowledge(context.Background(), s, storetest.Item("m1", fmt.Sprint("k", i), storetest.Base), chat.KnowledgeLimits{MaxItems: 5})
	})
	ok, refused := storetest.CountErrors(t, errs, store.ErrKnowledgeLimit)
	if ok != 5 || refused != 15 {
		t.Errorf("%d created and %d refused, want 5 and 15", ok, refused)
	}
	if n := len(allKnowledgeIDs(t, s, "m1")); n != 5 {
		t.Errorf("%d items stored, want 5", n)
	}
}

// knowledgeCharactersConcurrent races creations, then updates, against the plan's knowledgeCharacters through
// the chat service: the ceiling is checked in each write's transaction, so no two writes pass it together.
func (h harness) knowledgeCharactersConcurrent(t *testing.T) {
	s := h.store(t)
	svc, err := chat.New(chat.Config{Store: s, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	m := &tenant.Bundle{MerchantID: "m1", Plan: tenant.Plan{KnowledgeCharacters: 1000}}
	sized := func(chars int) store.Knowledge { // chars characters of title and content
		return store.Knowledge{Title: "0123456789", Content: strings.Repeat("x", chars-10)}
	}
	errs := storetest.RunConcurrently(20, func(int) error {
		_, err := svc.CreateKnowledge(context.Background(), m, sized(100))
		return err
	})
	if ok, refused := storetest.CountErrors(t, errs, store.ErrKnowledgeSizeLimit); ok != 10 || refused != 10 {
		t.Errorf("creations of 100 characters under a ceiling of 1000: %d created and %d refused, want 10 and 10", ok, refused)
	}

	// Halve the items, then grow them all at once: 5 x 50 + 5 x 100 = 750 characters, room for 2 of 5 to
	// grow by 100.
	items, err := s.AllKnowledge(t.Context(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range items[:5] {
		if _, err := svc.UpdateKnowledge(t.Context(), m, k, sized(50)); err != nil {
			t.Fatal(err)
		}
		items[i] = mustGetKnowledge(t, s, "m1", k.ID)
	}
	errs = storetest.RunConcurrently(5, func(i int) error {
		_, err := svc.UpdateKnowledge(context.Background(), m, items[i], sized(150))
		return err
	})
	if ok, refused := storetest.CountErrors(t, errs, store.ErrKnowledgeSizeLimit); ok != 2 || refused != 3 {
		t.Errorf("growths of 100 characters with 250 to spare: %d made and %d refused, want 2 and 3", ok, refused)
	}
	err = s.Write(t.Context(), func(tx store.Tx) error {
		n, err := tx.KnowledgeCharacters(t.Context(), "m1", "")
		if err == nil && n > 1000 {
			t.Errorf("the merchant's items hold %d characters, past the ceiling of 1000", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (h harness) allKnowledge(t *testing.T) {
	s := h.store(t)
	if ids := allKnowledgeIDs(t, s, "m1"); len(ids) != 0 {
		t.Errorf("AllKnowledge of an empty store = %v", ids)
	}
	want := map[string]bool{}
	for i := range 130 {
		id := fmt.Sprintf("k%03d", i)
		mustCreateKnowledge(t, s, storetest.Item("m1", id, storetest.Base.Add(time.Duration(i)*time.Second)), 0)
		want[id] = true
	}
	mustCreateKnowledge(t, s, storetest.Item("m2", "other", storetest.Base), 0)
	items, err := s.AllKnowledge(t.Context(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(want) {
		t.Fatalf("AllKnowledge returned %d items, want %d", len(items), len(want))
	}
	for _, k := range items {
		if !want[k.ID] || k.MerchantID != "m1" {
			t.Errorf("unexpected item %s/%s", k.MerchantID, k.ID)
		}
		delete(want, k.ID)
		checkKnowledge(t, k, storetest.Item("m1", k.ID, k.CreatedAt))
	}
}

func (h harness) knowledgeRevision(t *testing.T) {
	s := h.store(t)
	if rev := storetest.Revision(t, s, "m1"); rev != 0 {
		t.Errorf("revision of a merchant without knowledge = %d, want 0", rev)
	}
	seen := map[int64]string{0: "start"}
	changed := func(what string) {
		t.Helper()
		rev := storetest.Revision(t, s, "m1")
		if prev, ok := seen[rev]; ok {
			t.Errorf("after %s the revision is %d, as after %s", what, rev, prev)
		}
		seen[rev] = what
	}
	unchanged := func(what string, want int64) {
		t.Helper()
		if rev := storetest.Revision(t, s, "m1"); rev != want {
			t.Errorf("%s changed the revision from %d to %d", what, want, rev)
		}
	}

	mustCreateKnowledge(t, s, storetest.Item("m1", "k1", storetest.Base), 0)
	changed("create")
	mustCreateKnowledge(t, s, storetest.Item("m1", "k2", storetest.Base), 0)
	changed("second create")
	rev := storetest.Revision(t, s, "m1")
	mustGetKnowledge(t, s, "m1", "k1")
	if _, _, err := s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{}); err != nil {
		t.Fatal(err)
	}
	allKnowledgeIDs(t, s, "m1")
	unchanged("reading", rev)
	storetest.WantErr(t, "update of a missing item", chat.UpdateKnowledge(t.Context(), s, storetest.Item("m1", "nope", storetest.Base), 0), store.ErrNotFound)
	storetest.WantErr(t, "delete of a missing item", chat.DeleteKnowledge(t.Context(), s, "m1", "nope"), store.ErrNotFound)
	unchanged("failed writes", rev)
	mustCreateKnowledge(t, s, storetest.Item("m2", "k1", storetest.Base), 0)
	unchanged("another merchant's write", rev)

	k := storetest.Item("m1", "k1", storetest.Base)
	k.Title = "changed"
	if err := chat.UpdateKnowledge(t.Context(), s, k, 0); err != nil {
		t.Fatal(err)
	}
	changed("update")
	if err := chat.DeleteKnowledge(t.Context(), s, "m1", "k1"); err != nil {
		t.Fatal(err)
	}
	changed("delete")
	if err := chat.DeleteKnowledge(t.Context(), s, "m1", "k2"); err != nil {
		t.Fatal(err)
	}
	changed("deleting the last item")
}

func (h harness) knowledgeUseCount(t *testing.T) {
	s := h.store(t)
	for _, id := range []string{"k1", "k2", "k3"} {
		mustCreateKnowledge(t, s, storetest.Item("m1", id, storetest.Base), 0)
	}
	mustCreateKnowledge(t, s, storetest.Item("m2", "k1", storetest.Base), 0)
	record(t, s, storetest.Citing(storetest.Exchange("m1", "c1", storetest.Base, "q", "a"), "k1", "k2", "k1"))
	record(t, s, storetest.Citing(storetest.Exchange("m1", "c1", storetest.Base.Add(time.Minute), "q", "a"), "k1", "missing"))
	record(t, s, storetest.Citing(storetest.Exchange("m1", "c2", storetest.Base.Add(time.Hour), "q", "a"), "k1"))
	// A reply without an answer suggests items; that is no use of them.
	record(t, s, storetest.Citing(storetest.Unanswered(storetest.Exchange("m1", "c3", storetest.Base.Add(2*time.Hour), "q", "a")), "k1", "k3"))
	for id, want := range map[string]int{"k1": 3, "k2": 1, "k3": 0} {
		if k := mustGetKnowledge(t, s, "m1", id); k.UseCount != want {
			t.Errorf("%s UseCount = %d, want %d", id, k.UseCount, want)
		}
	}
	if k := mustGetKnowledge(t, s, "m2", "k1"); k.UseCount != 0 {
		t.Errorf("another merchant's citations counted: UseCount = %d", k.UseCount)
	}
	items, _, err := s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{Query: "k1"})
	if err != nil || len(items) != 1 || items[0].UseCount != 3 {
		t.Errorf("ListKnowledge: %+v, %v; want k1 with UseCount 3", items, err)
	}
	all, err := s.AllKnowledge(t.Context(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if want := map[string]int{"k1": 3, "k2": 1}[k.ID]; k.UseCount != want {
			t.Errorf("AllKnowledge: %s UseCount = %d, want %d", k.ID, k.UseCount, want)
		}
	}

	// Editing an item keeps its count; deleting it deletes its count, so an item created again under the same
	// ID starts from 0.
	edited := storetest.Item("m1", "k1", storetest.Base)
	edited.Content, edited.UpdatedAt = "edited", storetest.Base.Add(time.Minute)
	if err := chat.UpdateKnowledge(t.Context(), s, edited, 0); err != nil {
		t.Fatal(err)
	}
	if k := mustGetKnowledge(t, s, "m1", "k1"); k.UseCount != 3 {
		t.Errorf("after an edit: UseCount = %d, want 3", k.UseCount)
	}
	if err := chat.DeleteKnowledge(t.Context(), s, "m1", "k1"); err != nil {
		t.Fatal(err)
	}
	record(t, s, storetest.Citing(storetest.Exchange("m1", "c3", storetest.Base.Add(2*time.Hour), "q", "a"), "k1", "k2"))
	mustCreateKnowledge(t, s, storetest.Item("m1", "k1", storetest.Base), 0)
	if k := mustGetKnowledge(t, s, "m1", "k1"); k.UseCount != 0 {
		t.Errorf("an item created again under a deleted one's ID: UseCount = %d, want 0", k.UseCount)
	}
	if k := mustGetKnowledge(t, s, "m1", "k2"); k.UseCount != 2 {
		t.Errorf("k2 UseCount = %d, want 2", k.UseCount)
	}
}

func (h harness) listKnowledge(t *testing.T) {
	t.Run("Pagination", h.knowledgePages)
	t.Run("Filters", h.knowledgeFilters)
	t.Run("InvalidCursor", h.knowledgeInvalidCursor)
}

func (h harness) knowledgePages(t *testing.T) {
	s := h.store(t)
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("k%02d", i)
		mustCreateKnowledge(t, s, storetest.Item("m1", id, storetest.Base.Add(time.Duration(i/3)*time.Minute)), 0)
		want = append(want, id)
	}
	slices.Reverse(want) // later items are newer; equal times order by ID, descending too
	mustCreateKnowledge(t, s, storetest.Item("m2", "k99", storetest.Base.Add(time.Hour)), 0)

	var got []string
	f := store.KnowledgeFilter{Limit: 6}
	for page := 0; ; page++ {
		items, next, err := s.ListKnowledge(t.Context(), "m1", f)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if wantLen := min(6, 23-page*6); len(items) != wantLen {
			t.Fatalf("page %d has %d items, want %d", page, len(items), wantLen)
		}
		got = append(got, knowledgeIDs(items)...)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatal("too many pages")
		}
		f.Cursor = next
	}
	storetest.CheckIDs(t, "listed items", got, want)

	items, next, err := s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{})
	if err != nil || len(items) != 20 || next == "" {
		t.Errorf("default page: %d items, cursor %q, error %v; want 20 and a cursor", len(items), next, err)
	}
	items, _, err = s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{Limit: 1000})
	if err != nil || len(items) != 23 {
		t.Errorf("large page: %d items, error %v; want 23", len(items), err)
	}
}

func (h harness) knowledgeFilters(t *testing.T) {
	s := h.store(t)
	add := func(id, title, content string, minute int, tags ...string) {
		k := storetest.Item("m1", id, storetest.Base.Add(time.Duration(minute)*time.Minute))
		k.Title, k.Content, k.Tags = title, content, tags
		mustCreateKnowledge(t, s, k, 0)
	}
	add("ship", "Shipping times", "We ship within 2 days.", 1, "shipping", "faq")
	add("ret", "Returns", "Send it back within 30 DAYS for a refund.", 2, "returns", "faq")
	add("pay", "Payment", "We accept cards; 100% secure.", 3, "payment")
	draft := storetest.Item("m1", "draft", storetest.Base.Add(5*time.Minute))
	draft.Title, draft.Content, draft.Tags, draft.Draft = "Gift cards", "Coming soon: gift cards.", []string{"faq"}, true
	mustCreateKnowledge(t, s, draft, 0)
	hours := storetest.Item("m1", "hours", storetest.Base.Add(4*time.Minute))
	hours.Title, hours.Content, hours.Tags = "Opening hours", "Mon–Fri, 9 to 5.", nil
	hours.Questions = []string{"Are you open at Easter?", "When do you close in the EVENING?"}
	mustCreateKnowledge(t, s, hours, 0)
	other := storetest.Item("m2", "other", storetest.Base)
	other.Title, other.Tags = "Shipping", []string{"shipping"}
	mustCreateKnowledge(t, s, other, 0)

	yes, no := true, false
	for _, tc := range []struct {
		name string
		f    store.KnowledgeFilter
		want []string
	}{
		{"none", store.KnowledgeFilter{}, []string{"draft", "hours", "pay", "ret", "ship"}},
		{"query title", store.KnowledgeFilter{Query: "SHIPPING"}, []string{"ship"}},
		{"query content, any case", store.KnowledgeFilter{Query: "days"}, []string{"ret", "ship"}},
		{"query percent is literal", store.KnowledgeFilter{Query: "0%"}, []string{"pay"}},
		{"query no match", store.KnowledgeFilter{Query: "warranty"}, nil},
		{"query a listed question, any case", store.KnowledgeFilter{Query: "evening"}, []string{"hours"}},
		{"tag", store.KnowledgeFilter{Tag: "faq"}, []string{"draft", "ret", "ship"}},
		{"tag is exact", store.KnowledgeFilter{Tag: "fa"}, nil},
		{"tag and query", store.KnowledgeFilter{Tag: "faq", Query: "refund"}, []string{"ret"}},
		{"tag paginated", store.KnowledgeFilter{Tag: "faq", Limit: 1}, []string{"draft", "ret", "ship"}},
		{"drafts", store.KnowledgeFilter{Draft: &yes}, []string{"draft"}},
		{"published, tag, paginated", store.KnowledgeFilter{Draft: &no, Tag: "faq", Limit: 1}, []string{"ret", "ship"}},
	} {
		var got []string
		f := tc.f
		for range 10 {
			items, next, err := s.ListKnowledge(t.Context(), "m1", f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, knowledgeIDs(items)...)
			if next == "" {
				break
			}
			f.Cursor = next
		}
		storetest.CheckIDs(t, tc.name, got, tc.want)
	}
}

func (h harness) knowledgeInvalidCursor(t *testing.T) {
	s := h.store(t)
	for i := range 3 {
		mustCreateKnowledge(t, s, storetest.Item("m1", fmt.Sprint("k", i), storetest.Base), 0)
		mustCreateKnowledge(t, s, storetest.Item("m2", fmt.Sprint("k", i), storetest.Base), 0)
	}
	storetest.SeedConversations(t, s, "m1", 3)
	_, fromM2, err := s.ListKnowledge(t.Context(), "m2", store.KnowledgeFilter{Limit: 1})
	if err != nil || fromM2 == "" {
		t.Fatalf("listing m2: cursor %q, error %v", fromM2, err)
	}
	_, conversationCursor, err := s.ListConversations(t.Context(), "m1", store.ConversationFilter{Limit: 1})
	if err != nil || conversationCursor == "" {
		t.Fatalf("listing conversations: cursor %q, error %v", conversationCursor, err)
	}
	for name, cursor := range map[string]string{
		"garbage":             "%%%",
		"other merchant":      fromM2,
		"conversation cursor": conversationCursor,
	} {
		items, _, err := s.ListKnowledge(t.Context(), "m1", store.KnowledgeFilter{Cursor: cursor})
		storetest.WantErr(t, name, err, store.ErrInvalidCursor)
		if len(items) != 0 {
			t.Errorf("%s: %d items returned with the error", name, len(items))
		}
	}
}
