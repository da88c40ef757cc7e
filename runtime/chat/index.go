package chat

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
)

// revisionCheck is how often a merchant's knowledge revision is read from the store. Writes through this
// replica are seen at once (see forget); writes through another replica within revisionCheck, well inside the
// second the runtime promises.
const revisionCheck = 250 * time.Millisecond

// indexCache keeps each merchant's retrieval index and rebuilds it when the store's knowledge revision moves,
// so a knowledge write through any replica is answered from by all of them.
type indexCache struct {
	store   knowledgeSource
	mu      sync.Mutex
	entries map[string]*indexEntry
}

type indexEntry struct {
	mu       sync.Mutex // one rebuild at a time per merchant
	revision int64
	index    *assistant.Index
	// checked is when revision was last read from the store; zero forces a read.
	checked time.Time
}

// knowledgeSource is what the cache reads of the store.
type knowledgeSource interface {
	KnowledgeRevision(ctx context.Context, merchantID string) (int64, error)
	AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error)
}

func newIndexCache(s knowledgeSource) *indexCache {
	return &indexCache{store: s, entries: map[string]*indexEntry{}}
}

func (c *indexCache) get(ctx context.Context, merchantID string) (*assistant.Index, error) {
	c.mu.Lock()
	e, ok := c.entries[merchantID]
	if !ok {
		e = &indexEntry{revision: -1}
		c.entries[merchantID] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.index != nil && time.Since(e.checked) < revisionCheck {
		return e.index, nil
	}
	checked := time.Now()
	rev, err := c.store.KnowledgeRevision(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("reading knowledge revision: %w", err)
	}
	if e.index != nil && e.revision == rev {
		e.checked = checked
		return e.index, nil
	}
	items, err := c.store.AllKnowledge(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("loading knowledge: %w", err)
	}
	ai := make([]assistant.Item, len(items))
	for i, k := range items {
		ai[i] = assistant.Item{ID: k.ID, Title: k.Title, Content: k.Content, URL: k.URL, Tags: k.Tags}
	}
	e.index, e.revision, e.checked = assistant.NewIndex(ai), rev, checked
	return e.index, nil
}

// forget makes the next get read the merchant's revision again; called after this replica writes knowledge.
func (c *indexCache) forget(merchantID string) {
	c.mu.Lock()
	e, ok := c.entries[merchantID]
	c.mu.Unlock()
	if ok {
		e.mu.Lock()
		e.checked = time.Time{}
		e.mu.Unlock()
	}
}
