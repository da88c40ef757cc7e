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
// replica are answered from as soon as they return (see reload); writes through another replica within about
// revisionCheck, well inside the second the runtime promises.
const revisionCheck = 250 * time.Millisecond

// rebuildTimeout bounds a rebuild, which outlives the request that started it.
const rebuildTimeout = time.Minute

// indexCache keeps each merchant's retrieval index and rebuilds it when the store's knowledge revision moves,
// so a knowledge write through any replica is answered from by all of them. Rebuilds run off the chat's path:
// the old index answers until the new one is ready, and only a merchant's very first question waits for its
// index.
type indexCache struct {
	store   knowledgeSource
	mu      sync.Mutex
	entries map[string]*indexEntry
}

type indexEntry struct {
	mu       sync.Mutex
	revision int64
	// locale is the merchant's widget locale, the language the index is built for.
	locale string
	index  *assistant.Index
	// checked is when revision was last read from the store; zero forces a read.
	checked time.Time
	// building is closed when the running rebuild ends; nil when none runs. err is the last rebuild's failure.
	building chan struct{}
	err      error
}

// knowledgeSource is what the cache reads of the store.
type knowledgeSource interface {
	KnowledgeRevision(ctx context.Context, merchantID string) (int64, error)
	AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error)
}

func newIndexCache(s knowledgeSource) *indexCache {
	return &indexCache{store: s, entries: map[string]*indexEntry{}}
}

func (c *indexCache) entry(merchantID string) *indexEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[merchantID]
	if !ok {
		e = &indexEntry{revision: -1}
		c.entries[merchantID] = e
	}
	return e
}

// get returns the merchant's index for its widget locale: the one it has, refreshed in the background once it
// is older than revisionCheck or was built for another locale, or for a merchant without one, the one built now.
func (c *indexCache) get(ctx context.Context, merchantID, locale string) (*assistant.Index, error) {
	e := c.entry(merchantID)
	e.mu.Lock()
	if e.locale != locale {
		e.locale, e.revision = locale, -1 // rebuilt whatever the revision
	}
	index, fresh := e.index, e.index != nil && e.revision >= 0 && time.Since(e.checked) < revisionCheck
	e.mu.Unlock()
	if fresh {
		return index, nil
	}
	done := c.refresh(ctx, merchantID, e)
	if index != nil {
		return index, nil // the old index answers until the new one is ready
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.index == nil {
		return nil, e.err
	}
	return e.index, nil
}

// reload makes the merchant's index reflect a knowledge write this replica just made, and waits for it (or for
// ctx), so that the write's own caller is answered from the new knowledge at once. Chats meanwhile answer from
// the old index.
func (c *indexCache) reload(ctx context.Context, merchantID string) {
	e := c.entry(merchantID)
	// A rebuild running now may have read the knowledge before the write: wait for it, then build again.
	for range 2 {
		select {
		case <-c.refresh(ctx, merchantID, e):
		case <-ctx.Done():
			return
		}
	}
}

// refresh starts a rebuild of the merchant's index unless one runs, and returns the channel closed when it ends.
func (c *indexCache) refresh(ctx context.Context, merchantID string, e *indexEntry) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.building != nil {
		return e.building
	}
	done := make(chan struct{})
	e.building = done
	revision, locale := e.revision, e.locale
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rebuildTimeout)
		defer cancel()
		checked := time.Now()
		index, rev, err := c.build(ctx, merchantID, revision, locale)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.building, e.err = nil, err
		if err != nil || e.locale != locale { // the locale changed meanwhile: the next get rebuilds
			return
		}
		e.checked = checked
		if index != nil {
			e.index, e.revision = index, rev
		}
	}()
	return done
}

// build reads the merchant's knowledge revision and, when it differs from have, builds the index of its
// knowledge in the language of locale; a nil index means have is current.
func (c *indexCache) build(ctx context.Context, merchantID string, have int64, locale string) (*assistant.Index, int64, error) {
	rev, err := c.store.KnowledgeRevision(ctx, merchantID)
	if err != nil {
		return nil, 0, fmt.Errorf("reading knowledge revision: %w", err)
	}
	if rev == have {
		return nil, rev, nil
	}
	items, err := c.store.AllKnowledge(ctx, merchantID)
	if err != nil {
		return nil, 0, fmt.Errorf("loading knowledge: %w", err)
	}
	ai := make([]assistant.Item, len(items))
	for i, k := range items {
		ai[i] = assistant.Item{ID: k.ID, Title: k.Title, Content: k.Content, URL: k.URL, Tags: k.Tags}
	}
	return assistant.NewIndexForLocale(ai, locale), rev, nil
}
