package chat

import (
	"container/list"
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
)

// revisionCheck is how often a merchant's knowledge revision is read from the store. Writes through this
// replica are answered from as soon as they return (see reload); writes through another replica within about
// revisionCheck, well inside the second the runtime promises.
const revisionCheck = 250 * time.Millisecond

// rebuildTimeout bounds a rebuild, which outlives the request that started it.
const rebuildTimeout = time.Minute

// indexCache keeps the merchants' retrieval indexes within a memory budget and rebuilds an index when the
// store's knowledge revision moves, so a knowledge write through any replica is answered from by all of them.
// Rebuilds run off the chat's path: the old index answers until the new one is ready, and only a merchant
// without an index (its first question, or the first since its index was evicted) waits for one.
//
// The budget bounds the sum of the kept indexes' assistant.Index.Size; past it, the least recently used indexes
// are evicted. An index larger than the whole budget is kept as the cache's only one: it is in memory while it
// answers anyway, and dropping it would rebuild it, seconds of CPU, for each of its merchant's questions. The
// cache then holds at most the largest index a plan's knowledgeCharacters allows.
type indexCache struct {
	store knowledgeSource
	// budget is the most bytes of indexes kept; 0 keeps every index.
	budget  int64
	metrics *indexMetrics
	// builders holds a Builder per processor, taken for each build, so that a build reuses the buffers of those
	// before it. Builds are CPU-bound, so more of them than processors only adds the garbage of each to the heap
	// at once; those past it wait their turn.
	builders chan *assistant.Builder

	mu      sync.Mutex
	entries map[string]*indexEntry
	// lru holds the entries that have an index, most recently used first.
	lru   list.List
	bytes int64
}

// indexEntry is one merchant's index and its rebuild; indexCache.mu guards it.
type indexEntry struct {
	merchantID string
	// kind is what the index is built for: the merchant's widget locale and embedding model.
	kind indexKind
	// revision is the knowledge revision index was built from; -1 without an index, or when the kind changed
	// and the index is rebuilt whatever the revision.
	revision int64
	index    *assistant.Index
	size     int64
	// elem is the entry's place in the LRU list; nil without an index.
	elem *list.Element
	// checked is when revision was last read from the store.
	checked time.Time
	// building is the running rebuild; nil when none runs.
	building *build
}

// build is one rebuild of a merchant's index. Those who wait for it read index and err once done is closed.
type build struct {
	done  chan struct{}
	index *assistant.Index
	err   error
}

// knowledgeSource is what the cache reads of the store.
type knowledgeSource interface {
	KnowledgeRevision(ctx context.Context, merchantID string) (int64, error)
	AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error)
	KnowledgeVectors(ctx context.Context, merchantID string) ([]store.KnowledgeVector, error)
}

// indexKind is what a merchant's index is built for: the language of its widget's locale, and the embedding
// model (Embedder.Model) of its provider, whose vectors it takes in, "" for words alone. Merchants of different
// providers have different models: vectors of another model than its own are stale for a merchant only.
type indexKind struct {
	locale, model string
}

func newIndexCache(s knowledgeSource, budget int64, reg prometheus.Registerer) (*indexCache, error) {
	m, err := newIndexMetrics(reg)
	if err != nil {
		return nil, err
	}
	m.budget.Set(float64(budget))
	builders := make(chan *assistant.Builder, runtime.GOMAXPROCS(0))
	for range cap(builders) {
		builders <- new(assistant.Builder)
	}
	return &indexCache{store: s, budget: budget, metrics: m, builders: builders, entries: map[string]*indexEntry{}}, nil
}

// entry returns the merchant's entry, made when new; c.mu must be held.
func (c *indexCache) entry(merchantID string) *indexEntry {
	e, ok := c.entries[merchantID]
	if !ok {
		e = &indexEntry{merchantID: merchantID, revision: -1}
		c.entries[merchantID] = e
	}
	return e
}

// get returns the merchant's index of kind: the one it has, refreshed in the background once it is older than
// revisionCheck or was built for another kind, or for a merchant without one, the one built now.
func (c *indexCache) get(ctx context.Context, merchantID string, kind indexKind) (*assistant.Index, error) {
	c.mu.Lock()
	e := c.entry(merchantID)
	if e.kind != kind {
		e.kind, e.revision = kind, -1 // rebuilt whatever the revision
	}
	index := e.index
	if index != nil {
		c.lru.MoveToFront(e.elem)
		c.metrics.hits.Inc()
		if e.revision >= 0 && time.Since(e.checked) < revisionCheck {
			c.mu.Unlock()
			return index, nil
		}
	} else {
		c.metrics.misses.Inc()
	}
	b := c.refresh(ctx, e)
	c.mu.Unlock()
	if index != nil {
		return index, nil // the old index answers until the new one is ready
	}
	select {
	case <-b.done:
		return b.index, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reload makes the merchant's index reflect a knowledge write this replica just made, and waits for it (or for
// ctx), so that the write's own caller is answered from the new knowledge at once. Chats meanwhile answer from
// the old index.
func (c *indexCache) reload(ctx context.Context, merchantID string) {
	// A rebuild running now may have read the knowledge before the write: wait for it, then build again.
	for range 2 {
		c.mu.Lock()
		b := c.refresh(ctx, c.entry(merchantID))
		c.mu.Unlock()
		select {
		case <-b.done:
		case <-ctx.Done():
			return
		}
	}
}

// refresh starts a rebuild of e's index unless one runs, and returns it; c.mu must be held.
func (c *indexCache) refresh(ctx context.Context, e *indexEntry) *build {
	if e.building != nil {
		return e.building
	}
	b := &build{done: make(chan struct{})}
	e.building = b
	revision, kind, current := e.revision, e.kind, e.index
	go func() {
		defer close(b.done)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rebuildTimeout)
		defer cancel()
		checked := time.Now()
		index, rev, err := c.build(ctx, e.merchantID, revision, kind)
		if index == nil && err == nil {
			index = current // the revision has not moved
		}
		b.index, b.err = index, err
		c.mu.Lock()
		defer c.mu.Unlock()
		e.building = nil
		switch {
		case err != nil:
		case e.kind != kind: // the locale or model changed meanwhile: the next get rebuilds
		case index == e.index:
			e.checked = checked
		default: // a new index, or the current one evicted meanwhile: in use, so kept again
			c.keep(e, index, rev, checked)
		}
	}()
	return b
}

// keep makes index e's, within the budget: the least recently used indexes are evicted to make room, all of them
// for an index larger than the whole budget. c.mu must be held.
func (c *indexCache) keep(e *indexEntry, index *assistant.Index, revision int64, checked time.Time) {
	c.drop(e)
	size := index.Size()
	if c.budget > 0 && size > c.budget {
		c.metrics.oversized.Inc()
	}
	e.index, e.size, e.revision, e.checked = index, size, revision, checked
	e.elem = c.lru.PushFront(e)
	c.bytes += size
	for c.budget > 0 && c.bytes > c.budget && c.lru.Len() > 1 {
		victim, _ := c.lru.Back().Value.(*indexEntry)
		c.drop(victim)
		if victim.building == nil {
			// Nothing of it is left to keep; a runtime of many merchants would otherwise keep an entry for
			// each merchant ever asked.
			delete(c.entries, victim.merchantID)
		}
		c.metrics.evictions.Inc()
	}
	c.report()
}

// drop forgets e's index; c.mu must be held. The entry itself stays, with its running rebuild if any.
func (c *indexCache) drop(e *indexEntry) {
	if e.elem == nil {
		return
	}
	c.lru.Remove(e.elem)
	c.bytes -= e.size
	e.index, e.size, e.revision, e.elem = nil, 0, -1, nil
}

// report updates the gauges; c.mu must be held.
func (c *indexCache) report() {
	c.metrics.bytes.Set(float64(c.bytes))
	c.metrics.entries.Set(float64(c.lru.Len()))
}

// build reads the merchant's knowledge revision and, when it differs from have, builds the index of its
// knowledge of kind; a nil index means have is current.
func (c *indexCache) build(ctx context.Context, merchantID string, have int64, kind indexKind) (*assistant.Index, int64, error) {
	rev, err := c.store.KnowledgeRevision(ctx, merchantID)
	if err != nil {
		return nil, 0, fmt.Errorf("reading knowledge revision: %w", err)
	}
	if rev == have {
		return nil, rev, nil
	}
	var builder *assistant.Builder
	select {
	case builder = <-c.builders:
		defer func() { c.builders <- builder }()
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	items, err := c.store.AllKnowledge(ctx, merchantID)
	if err != nil {
		return nil, 0, fmt.Errorf("loading knowledge: %w", err)
	}
	var vectors map[string][][]float32
	if kind.model != "" {
		stored, err := c.store.KnowledgeVectors(ctx, merchantID)
		if err != nil {
			return nil, 0, fmt.Errorf("loading knowledge vectors: %w", err)
		}
		vectors = currentVectors(items, stored, kind.model)
	}
	ai := make([]assistant.Item, 0, len(items))
	for _, k := range items {
		if k.Draft { // kept, not answered from
			continue
		}
		ai = append(ai, assistant.Item{ID: k.ID, Title: k.Title, Content: k.Content, URL: k.URL, Tags: k.Tags, Questions: k.Questions,
			Curated: k.Curated, Vectors: vectors[k.ID]})
	}
	c.metrics.rebuilds.Inc()
	return builder.Build(ai, kind.locale), rev, nil
}

type indexMetrics struct {
	budget, bytes, entries                       prometheus.Gauge
	hits, misses, rebuilds, evictions, oversized prometheus.Counter
}

func newIndexMetrics(reg prometheus.Registerer) (*indexMetrics, error) {
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "parley_runtime_index_cache_" + name, Help: help})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_runtime_index_cache_" + name + "_total", Help: help})
	}
	m := &indexMetrics{
		budget:    gauge("budget_bytes", "The most bytes of retrieval indexes the runtime keeps (--index-cache-bytes); 0 keeps every index."),
		bytes:     gauge("bytes", "Estimated bytes of the retrieval indexes kept."),
		entries:   gauge("entries", "Merchants whose retrieval index is kept."),
		hits:      counter("hits", "Questions answered from a kept index."),
		misses:    counter("misses", "Questions that waited for their merchant's index to be built (its first, or the first since eviction)."),
		rebuilds:  counter("rebuilds", "Retrieval indexes built, for a new merchant, an evicted one or a knowledge change."),
		evictions: counter("evictions", "Retrieval indexes evicted, least recently used first, to stay within the budget."),
		oversized: counter("oversized", "Retrieval indexes larger than the whole budget, each kept as the only one."),
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{m.budget, m.bytes, m.entries, m.hits, m.misses, m.rebuilds, m.evictions, m.oversized} {
			if err := reg.Register(col); err != nil {
				return nil, fmt.Errorf("registering index cache metrics: %w", err)
			}
		}
	}
	return m, nil
}
