package chat_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// source builds a website source of the merchant, due at base.
func source(merchantID, id string, created time.Time) store.KnowledgeSource {
	return store.KnowledgeSource{ID: id, MerchantID: merchantID, Type: store.SourceWebsite, URL: "https://shop.example/",
		Include: []string{"/help/**"}, Exclude: []string{"/help/old/**", "/cart"}, MaxPages: 50, SyncInterval: 24 * time.Hour,
		Status: store.SourcePending, NextSyncAt: storetest.Base, CreatedAt: created, UpdatedAt: created}
}

// pageItem builds an item the source made of a section of the page at url.
func pageItem(merchantID, sourceID, id, url string) store.Knowledge {
	k := storetest.Item(merchantID, id, storetest.Base)
	k.URL, k.SourceID, k.Tags = url, sourceID, nil
	return k
}

// seedSource stores a source of the merchant with one page and its item.
func seedSource(t *testing.T, s store.Store, merchantID, id string) {
	t.Helper()
	if err := chat.CreateSource(t.Context(), s, source(merchantID, id, storetest.Base), 0); err != nil {
		t.Fatal(err)
	}
	page := store.SourcePage{MerchantID: merchantID, SourceID: id, URL: "https://shop.example/help/a", Status: store.PageRead,
		ETag: `"v1"`, FetchedAt: storetest.Base}
	if err := chat.ReplacePage(t.Context(), s, page, []store.Knowledge{pageItem(merchantID, id, id+"-k", page.URL+"#a")},
		chat.KnowledgeLimits{}); err != nil {
		t.Fatal(err)
	}
}

// sources: a merchant's sources are stored and listed as written, newest first, within the plan's ceiling, and
// neither read nor deleted by another merchant.
func (h harness) sources(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	a1, a2 := source("alpha", "s1", storetest.Base), source("alpha", "s2", storetest.Base.Add(time.Minute))
	a2.Type, a2.URL, a2.Ref, a2.Include, a2.Exclude = store.SourceGit, "https://git.example/docs.git", "main", nil, nil
	b1 := source("beta", "s1", storetest.Base)
	for _, src := range []store.KnowledgeSource{a1, a2, b1} {
		if err := chat.CreateSource(ctx, s, src, 2); err != nil {
			t.Fatalf("CreateSource %s/%s: %v", src.MerchantID, src.ID, err)
		}
	}
	if err := chat.CreateSource(ctx, s, source("alpha", "s3", storetest.Base), 2); !errors.Is(err, chat.ErrSourceLimit) {
		t.Errorf("a third source on a plan of two: %v, want ErrSourceLimit", err)
	}
	if got, err := s.GetSource(ctx, "alpha", "s1"); err != nil || !reflect.DeepEqual(got, a1) {
		t.Errorf("GetSource:\n got %+v, %v\nwant %+v", got, err, a1)
	}
	list, err := s.ListSources(ctx, "alpha")
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], a2) || list[1].ID != "s1" {
		t.Errorf("ListSources: %+v, %v; want s2 then s1", list, err)
	}
	if _, err := s.GetSource(ctx, "beta", "s2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("beta reading alpha's source: %v", err)
	}
	if err := chat.DeleteSource(ctx, s, "beta", "s2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("beta deleting alpha's source: %v", err)
	}
	if err := s.Write(ctx, func(tx store.Tx) error { return tx.RequestSync(ctx, "beta", "s2", storetest.Base) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("beta syncing alpha's source: %v", err)
	}
	if pages, err := s.ListSourcePages(ctx, "beta", "s2"); err != nil || len(pages) != 0 {
		t.Errorf("beta reading the pages of alpha's source: %+v, %v", pages, err)
	}
}

// sourcePages: a page's items are replaced at once, items typed by hand (with the page's URL too) and other
// pages' items untouched; a page gone takes its items with it; the source's deletion takes its pages and items,
// and the item count (the plan's ceiling) follows.
func (h harness) sourcePages(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	if err := chat.CreateSource(ctx, s, source("alpha", "s1", storetest.Base), 0); err != nil {
		t.Fatal(err)
	}
	const a, b = "https://shop.example/help/a", "https://shop.example/help/a%_b"
	hand := storetest.Item("alpha", "hand", storetest.Base)
	hand.URL = a
	mustCreateKnowledge(t, s, hand, 0)
	page := func(url, hash string) store.SourcePage {
		return store.SourcePage{MerchantID: "alpha", SourceID: "s1", URL: url, Status: store.PageRead, ETag: `"` + hash + `"`,
			LastModified: "Tue, 10 Mar 2026 12:00:00 GMT", ContentHash: hash, Links: []string{a, b}, FetchedAt: storetest.Base}
	}
	replace := func(p store.SourcePage, items ...store.Knowledge) {
		t.Helper()
		if err := chat.ReplacePage(ctx, s, p, items, chat.KnowledgeLimits{MaxItems: 5}); err != nil {
			t.Fatalf("ReplacePage %s: %v", p.URL, err)
		}
	}
	replace(page(a, "1"), pageItem("alpha", "s1", "a1", a+"#one"), pageItem("alpha", "s1", "a2", a+"#two"), pageItem("alpha", "s1", "a3", a))
	replace(page(b, "1"), pageItem("alpha", "s1", "b1", b+"#x"))
	if got := allKnowledgeIDs(t, s, "alpha"); len(got) != 5 {
		t.Fatalf("items %v, want the hand item and 4", got)
	}
	rev := storetest.Revision(t, s, "alpha")
	replace(page(a, "2"), pageItem("alpha", "s1", "a4", a+"#one"))
	got := allKnowledgeIDs(t, s, "alpha")
	slices.Sort(got)
	if want := []string{"a4", "b1", "hand"}; !slices.Equal(got, want) {
		t.Errorf("after replacing page a: %v, want %v", got, want)
	}
	if r := storetest.Revision(t, s, "alpha"); r <= rev {
		t.Errorf("revision %d after a page's replacement, want past %d", r, rev)
	}
	if k := mustGetKnowledge(t, s, "alpha", "a4"); k.SourceID != "s1" {
		t.Errorf("a source's item reads source %q", k.SourceID)
	}
	if k := mustGetKnowledge(t, s, "alpha", "hand"); k.SourceID != "" {
		t.Errorf("an item typed by hand reads source %q", k.SourceID)
	}
	pages, err := s.ListSourcePages(ctx, "alpha", "s1")
	wantA := page(a, "2")
	wantA.Items = 1
	if err != nil || len(pages) != 2 || !reflect.DeepEqual(pages[0], wantA) || pages[1].URL != b {
		t.Errorf("ListSourcePages: %+v, %v; want %+v and b", pages, err, wantA)
	}
	// Past the plan's items nothing changes: the page keeps its items.
	err = chat.ReplacePage(ctx, s, page(a, "3"), []store.Knowledge{pageItem("alpha", "s1", "a5", a+"#1"),
		pageItem("alpha", "s1", "a6", a+"#2"), pageItem("alpha", "s1", "a7", a+"#3")}, chat.KnowledgeLimits{MaxItems: 4})
	if !errors.Is(err, store.ErrKnowledgeLimit) {
		t.Errorf("a page past the plan's items: %v", err)
	}
	if _, err := s.GetKnowledge(ctx, "alpha", "a4"); err != nil {
		t.Errorf("the page lost its items to a refused replacement: %v", err)
	}

	if err := chat.RemovePage(ctx, s, "alpha", "s1", b); err != nil {
		t.Fatal(err)
	}
	if got := allKnowledgeIDs(t, s, "alpha"); len(got) != 2 {
		t.Errorf("after removing page b: %v, want a4 and hand", got)
	}
	if err := s.Write(ctx, func(tx store.Tx) error {
		return tx.FinishSync(ctx, "alpha", "s1", store.SyncOutcome{Status: store.SourceReady, PagesFound: 3, Pages: 1,
			At: storetest.Base.Add(time.Minute), Next: storetest.Base.Add(25 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	src, err := s.GetSource(ctx, "alpha", "s1")
	if err != nil || src.Status != store.SourceReady || src.Items != 1 || src.Pages != 1 || src.PagesFound != 3 ||
		!src.LastSyncedAt.Equal(storetest.Base.Add(time.Minute)) || !src.NextSyncAt.Equal(storetest.Base.Add(25*time.Hour)) {
		t.Errorf("after FinishSync: %+v, %v", src, err)
	}

	if err := chat.DeleteSource(ctx, s, "alpha", "s1"); err != nil {
		t.Fatal(err)
	}
	if got := allKnowledgeIDs(t, s, "alpha"); !slices.Equal(got, []string{"hand"}) {
		t.Errorf("after deleting the source: %v, want the hand item alone", got)
	}
	if pages, err := s.ListSourcePages(ctx, "alpha", "s1"); err != nil || len(pages) != 0 {
		t.Errorf("the deleted source's pages: %+v, %v", pages, err)
	}
	// The deleted items are counted out: a plan of two items has room for exactly one more.
	mustCreateKnowledge(t, s, storetest.Item("alpha", "k2", storetest.Base), 2)
	if err := chat.CreateKnowledge(ctx, s, storetest.Item("alpha", "k3", storetest.Base), chat.KnowledgeLimits{MaxItems: 2}); !errors.Is(err, store.ErrKnowledgeLimit) {
		t.Errorf("a third item on a plan of two: %v", err)
	}
}

// sourceClaims: a due sync is claimed once until its lease ends, one merchant's syncs take at most its share, a
// finished sync is due again at its next time, and a requested one at once.
func (h harness) sourceClaims(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	for i, id := range []string{"s1", "s2", "s3"} {
		src := source("alpha", id, storetest.Base)
		src.NextSyncAt = storetest.Base.Add(time.Duration(i) * time.Second)
		if err := chat.CreateSource(ctx, s, src, 0); err != nil {
			t.Fatal(err)
		}
	}
	later := source("beta", "s1", storetest.Base)
	later.NextSyncAt = storetest.Base.Add(time.Hour)
	if err := chat.CreateSource(ctx, s, later, 0); err != nil {
		t.Fatal(err)
	}
	if err := chat.CreateSource(ctx, s, source("beta", "s2", storetest.Base), 0); err != nil {
		t.Fatal(err)
	}
	claim := func(at time.Time, perMerchant int) []string {
		t.Helper()
		got, err := s.ClaimSources(ctx, at, time.Hour, 10, perMerchant)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, src := range got {
			if src.Status != store.SourceSyncing {
				t.Errorf("claimed %s/%s reads %q", src.MerchantID, src.ID, src.Status)
			}
			ids = append(ids, src.MerchantID+"/"+src.ID)
		}
		slices.Sort(ids)
		return ids
	}
	now := storetest.Base.Add(time.Minute)
	if got := claim(now, 2); !slices.Equal(got, []string{"alpha/s1", "alpha/s2", "beta/s2"}) {
		t.Errorf("first claim: %v; want alpha's two oldest and beta's due one", got)
	}
	if got := claim(now, 2); got != nil {
		t.Errorf("second claim: %v; want none while alpha holds its share", got)
	}
	if src, _ := s.GetSource(ctx, "alpha", "s1"); src.Status != store.SourceSyncing {
		t.Errorf("a claimed source reads %q", src.Status)
	}
	if err := s.Write(ctx, func(tx store.Tx) error {
		return tx.FinishSync(ctx, "alpha", "s1", store.SyncOutcome{Status: store.SourceFailed, Error: "unreachable",
			At: now, Next: now.Add(24 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	if got := claim(now, 2); !slices.Equal(got, []string{"alpha/s3"}) {
		t.Errorf("after a sync ended: %v; want alpha/s3", got)
	}
	// A sync requested while one runs is due once it ends.
	if err := s.Write(ctx, func(tx store.Tx) error {
		if err := tx.RequestSync(ctx, "beta", "s2", now); err != nil {
			return err
		}
		return tx.FinishSync(ctx, "beta", "s2", store.SyncOutcome{Status: store.SourceReady, At: now, Next: now.Add(24 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	if got := claim(now, 2); !slices.Equal(got, []string{"beta/s2"}) {
		t.Errorf("after a sync requested while one ran: %v; want beta/s2", got)
	}
	if err := s.Write(ctx, func(tx store.Tx) error { return tx.RequestSync(ctx, "alpha", "s1", now) }); err != nil {
		t.Fatal(err)
	}
	if got := claim(now, 3); !slices.Equal(got, []string{"alpha/s1"}) {
		t.Errorf("after a requested sync: %v; want alpha/s1", got)
	}
	// Leases end: the syncs of a replica that died are claimed again, and beta's later one is due.
	if got := claim(storetest.Base.Add(2*time.Hour), 5); !slices.Equal(got, []string{"alpha/s1", "alpha/s2", "alpha/s3", "beta/s1", "beta/s2"}) {
		t.Errorf("after the leases ended: %v", got)
	}
}

// declaredSources: a declared source is stored once however often its bundle is applied (each replica applies
// it), its spec replaced only by another generation, which makes it due at once; the generation a sync read and
// its outcome are kept for the operator; another merchant's source of the same ID stays apart.
func (h harness) declaredSources(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	put := func(src store.KnowledgeSource) bool {
		t.Helper()
		var wrote bool
		if err := s.Write(ctx, func(tx store.Tx) error {
			var err error
			wrote, err = tx.PutDeclaredSource(ctx, src)
			return err
		}); err != nil {
			t.Fatalf("PutDeclaredSource %s/%s: %v", src.MerchantID, src.ID, err)
		}
		return wrote
	}
	decl := source("alpha", "help-centre", storetest.Base)
	decl.Generation = 1
	if !put(decl) {
		t.Error("a new declared source was not written")
	}
	if put(decl) {
		t.Error("the same generation was written again")
	}
	other := source("beta", "help-centre", storetest.Base)
	other.Generation, other.URL = 5, "https://beta.example/"
	put(other)
	got, err := s.GetSource(ctx, "alpha", "help-centre")
	if err != nil || !reflect.DeepEqual(got, decl) || !got.Declared() {
		t.Fatalf("GetSource:\n got %+v, %v\nwant %+v", got, err, decl)
	}

	// A sync of generation 1 ends; generation 2 arrives, due at once, and its counts and outcome stay until its sync.
	claimed, err := s.ClaimSources(ctx, storetest.Base, time.Hour, 10, 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("ClaimSources: %+v, %v", claimed, err)
	}
	if err := s.Write(ctx, func(tx store.Tx) error {
		return tx.FinishSync(ctx, "alpha", "help-centre", store.SyncOutcome{Status: store.SourceFailed, Error: "unreachable",
			At: storetest.Base.Add(time.Minute), Next: storetest.Base.Add(25 * time.Hour), Generation: 1})
	}); err != nil {
		t.Fatal(err)
	}
	next := decl
	next.Generation, next.URL, next.Include, next.MaxPages = 2, "https://shop.example/faq/", nil, 20
	next.NextSyncAt, next.UpdatedAt = storetest.Base.Add(2*time.Minute), storetest.Base.Add(2*time.Minute)
	if !put(next) {
		t.Error("a new generation was not written")
	}
	got, err = s.GetSource(ctx, "alpha", "help-centre")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != next.URL || got.Include != nil || got.MaxPages != 20 || got.Generation != 2 || !got.NextSyncAt.Equal(next.NextSyncAt) {
		t.Errorf("after generation 2: %+v", got)
	}
	if got.SyncedGeneration != 1 || got.LastOutcome != store.SourceFailed || got.Error != "unreachable" || !got.CreatedAt.Equal(storetest.Base) {
		t.Errorf("generation 2 lost the last sync's report or the creation time: %+v", got)
	}
	if b, err := s.GetSource(ctx, "beta", "help-centre"); err != nil || b.URL != other.URL || b.Generation != 5 {
		t.Errorf("beta's source of the same ID: %+v, %v", b, err)
	}
	if api := source("alpha", "src_1", storetest.Base); api.Declared() {
		t.Error("a source made through the API reads as declared")
	}
}
