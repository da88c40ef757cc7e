package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
)

// indexCache keeps each merchant's retrieval index and rebuilds it when the store's knowledge revision moves,
// so a knowledge write through any replica is answered from by all of them.
type indexCache struct {
	store   store.Store
	mu      sync.Mutex
	entries map[string]*indexEntry
}

type indexEntry struct {
	mu       sync.Mutex // one rebuild at a time per merchant
	revision int64
	index    *assistant.Index
}

func newIndexCache(s store.Store) *indexCache {
	return &indexCache{store: s, entries: map[string]*indexEntry{}}
}

func (c *indexCache) get(ctx context.Context, merchantID string) (*assistant.Index, error) {
	rev, err := c.store.KnowledgeRevision(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("reading knowledge revision: %w", err)
	}
	c.mu.Lock()
	e, ok := c.entries[merchantID]
	if !ok {
		e = &indexEntry{revision: -1}
		c.entries[merchantID] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.index != nil && e.revision == rev {
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
	e.index, e.revision = assistant.NewIndex(ai), rev
	return e.index, nil
}
