package chat

import (
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parley-dev/parley/internal/testutil/synthkb"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// cacheStore is a real SQLite store holding, for each merchant named, items knowledge items of about 400
// characters.
func cacheStore(t *testing.T, items int, merchants ...string) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i, m := range merchants {
		g := synthkb.New(uint64(i))
		for j := range items {
			it := g.Item(400)
			k := store.Knowledge{ID: fmt.Sprintf("kn_%s_%d", m, j), MerchantID: m, Title: it.Title, Content: it.Content, Tags: it.Tags}
			if err := createKnowledge(t.Context(), st, k, KnowledgeLimits{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

func newTestCache(t *testing.T, st store.Store, budget int64) (*indexCache, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	c, err := newIndexCache(st, budget, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

// checkAccounts checks that the cache's bytes are the sum of the kept indexes' sizes and within the budget, or
// those of one index larger than it.
func checkAccounts(t *testing.T, c *indexCache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for e := c.lru.Front(); e != nil; e = e.Next() {
		sum += e.Value.(*indexEntry).index.Size() //nolint:forcetypeassert // the list holds entries only
	}
	if sum != c.bytes {
		t.Errorf("the cache counts %d bytes, its indexes hold %d", c.bytes, sum)
	}
	if c.budget > 0 && c.bytes > c.budget && c.lru.Len() > 1 {
		t.Errorf("the cache holds %d bytes in %d indexes, past its budget of %d", c.bytes, c.lru.Len(), c.budget)
	}
	if got := testutil.ToFloat64(c.metrics.bytes); got != float64(c.bytes) {
		t.Errorf("parley_runtime_index_cache_bytes = %v, want %d", got, c.bytes)
	}
}

func TestIndexCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	st := cacheStore(t, 20, "a", "b", "c")
	probe, _ := newTestCache(t, st, 0)
	var largest int64
	for _, m := range []string{"a", "b", "c"} {
		ix, err := probe.get(t.Context(), m, indexKind{})
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, ix.Size())
	}

	c, _ := newTestCache(t, st, 2*largest+largest/2) // room for two indexes, never three
	for _, m := range []string{"a", "b", "a", "c"} { // b is the least recently used when c comes
		if _, err := c.get(t.Context(), m, indexKind{}); err != nil {
			t.Fatal(err)
		}
		checkAccounts(t, c)
	}
	c.mu.Lock()
	kept := map[string]bool{}
	for _, m := range []string{"a", "b", "c"} {
		e, ok := c.entries[m]
		kept[m] = ok && e.index != nil
	}
	if _, ok := c.entries["b"]; ok {
		t.Error("the evicted merchant's entry is kept")
	}
	c.mu.Unlock()
	if !kept["a"] || kept["b"] || !kept["c"] {
		t.Errorf("kept a, b, c = %v, %v, %v; want a and c, b evicted", kept["a"], kept["b"], kept["c"])
	}
	for name, tt := range map[string]struct {
		metric prometheus.Collector
		want   float64
	}{
		"hits": {c.metrics.hits, 1}, "misses": {c.metrics.misses, 3}, "rebuilds": {c.metrics.rebuilds, 3},
		"evictions": {c.metrics.evictions, 1}, "entries": {c.metrics.entries, 2},
	} {
		if got := testutil.ToFloat64(tt.metric); got != tt.want {
			t.Errorf("%s = %v, want %v", name, got, tt.want)
		}
	}

	// The evicted merchant is answered again, from an index built for it now.
	ix, err := c.get(t.Context(), "b", indexKind{})
	if err != nil || ix.Len() != 20 {
		t.Fatalf("b after its eviction: %d items, %v; want 20", ix.Len(), err)
	}
	if got := testutil.ToFloat64(c.metrics.misses); got != 4 {
		t.Errorf("misses after b's return = %v, want 4", got)
	}
	checkAccounts(t, c)
}

// An index larger than the whole budget is kept, as the only one: a merchant past the budget is answered from
// one build, not from a build per question, and the cache holds no more than that one index.
func TestIndexCacheKeepsAnIndexLargerThanItsBudgetAsItsOnlyOne(t *testing.T) {
	st := cacheStore(t, 20, "a", "b")
	c, _ := newTestCache(t, st, 1024) // far below one index of 20 items
	for range 3 {
		ix, err := c.get(t.Context(), "a", indexKind{})
		if err != nil || ix.Len() != 20 {
			t.Fatalf("get: %d items, %v; want 20 items", ix.Len(), err)
		}
		checkAccounts(t, c)
	}
	if got := testutil.ToFloat64(c.metrics.rebuilds); got != 1 {
		t.Errorf("rebuilds after three questions = %v, want 1", got)
	}
	if _, err := c.get(t.Context(), "b", indexKind{}); err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, c)
	c.mu.Lock()
	_, keptA := c.entries["a"]
	keptB := c.entries["b"] != nil && c.entries["b"].index != nil
	c.mu.Unlock()
	if keptA || !keptB {
		t.Errorf("kept a, b = %v, %v; want b alone", keptA, keptB)
	}
	for name, tt := range map[string]struct {
		metric prometheus.Collector
		want   float64
	}{
		"oversized": {c.metrics.oversized, 2}, "evictions": {c.metrics.evictions, 1}, "entries": {c.metrics.entries, 1},
	} {
		if got := testutil.ToFloat64(tt.metric); got != tt.want {
			t.Errorf("%s = %v, want %v", name, got, tt.want)
		}
	}
}

// TestIndexCacheStaysWithinItsBudgetUnderConcurrentUse asks for many merchants at once with room for a few, and
// checks the books after each round (run it with -race).
func TestIndexCacheStaysWithinItsBudgetUnderConcurrentUse(t *testing.T) {
	merchants := make([]string, 12)
	for i := range merchants {
		merchants[i] = fmt.Sprintf("m%02d", i)
	}
	st := cacheStore(t, 5, merchants...)
	probe, _ := newTestCache(t, st, 0)
	ix, err := probe.get(t.Context(), merchants[0], indexKind{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestCache(t, st, 3*ix.Size())
	for range 3 {
		var wg sync.WaitGroup
		for i := range 48 {
			wg.Go(func() {
				m := merchants[i%len(merchants)]
				if ix, err := c.get(t.Context(), m, indexKind{}); err != nil || ix.Len() != 5 {
					t.Errorf("%s: %d items, %v", m, ix.Len(), err)
				}
			})
		}
		wg.Wait()
		checkAccounts(t, c)
	}
	if testutil.ToFloat64(c.metrics.evictions) == 0 {
		t.Error("twelve merchants fitted in room for about three: nothing was evicted")
	}
}

// BenchmarkIndexCacheOversizedIndex asks, again and again, for the index of a merchant whose knowledge is larger
// than the whole cache budget: what each question of such a merchant costs.
//
//	go test ./runtime/chat/ -run '^$' -bench BenchmarkIndexCacheOversizedIndex -benchtime 20x
func BenchmarkIndexCacheOversizedIndex(b *testing.B) {
	st, err := sqlite.Open(b.Context(), b.TempDir()+"/parley.db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	g := synthkb.New(1)
	for j := range 500 {
		it := g.Item(1000)
		k := store.Knowledge{ID: fmt.Sprintf("kn_%d", j), MerchantID: "big", Title: it.Title, Content: it.Content, Tags: it.Tags}
		if err := createKnowledge(b.Context(), st, k, KnowledgeLimits{}); err != nil {
			b.Fatal(err)
		}
	}
	c, err := newIndexCache(st, 1024, nil) // far below the merchant's index
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ix, err := c.get(b.Context(), "big", indexKind{}); err != nil || ix.Len() != 500 {
			b.Fatalf("get: %d items, %v; want 500", ix.Len(), err)
		}
	}
}
