package chat

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Seed is an item of a fixture, such as the demo shop's knowledge base: its key, which makes its ID, and its
// fields.
type Seed struct {
	Key   string
	Input KnowledgeInput
}

// seedKeyPattern is what a Seed.Key may be: a slug of at most 61 characters, so that its ID ("kn_" and the key)
// reads well in a path, fits the API's 64 bytes of a knowledge ID and never meets a literal path beside
// /knowledge/{id}.
var seedKeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,60}$`)

// ErrInvalidSeed refuses seeds with a key that is not a slug or is named twice, or an item that is not valid.
var ErrInvalidSeed = errors.New("invalid seed")

// SeedKnowledge adds a fixture's items to the merchant's knowledge base, each validated as an item typed by hand
// (KnowledgeInput.Validate), all of them in one transaction within the plan's ceilings (ImportCeilingError),
// and returns them. Each item's ID is "kn_" and its key, so that a fixture's items keep their IDs from one fresh
// knowledge base to the next; their times list them, newest first, in the fixture's order. An ID the merchant has
// already is refused by the store, and nothing is written.
func (s *Service) SeedKnowledge(ctx context.Context, m *tenant.Bundle, seeds []Seed) ([]store.Knowledge, error) {
	items, err := seedItems(seeds, m.MerchantID, s.now())
	if err != nil {
		return nil, err
	}
	if err := s.insertItems(ctx, m, items, nil); err != nil {
		return nil, fmt.Errorf("seeding %d knowledge items: %w", len(items), err)
	}
	s.knowledgeChanged(ctx, m.MerchantID)
	return items, nil
}

// seedItems returns the valid items of seeds, in their order, with their IDs and times: the first created at now,
// each next one a millisecond earlier, so that a listing newest first keeps the seeds' order.
func seedItems(seeds []Seed, merchantID string, now time.Time) ([]store.Knowledge, error) {
	now = now.UTC().Truncate(time.Millisecond)
	items := make([]store.Knowledge, 0, len(seeds))
	seen := make(map[string]bool, len(seeds))
	for i, sd := range seeds {
		if !seedKeyPattern.MatchString(sd.Key) || seen[sd.Key] {
			return nil, fmt.Errorf("%w: seed %d: the key %q is not a slug or is named twice", ErrInvalidSeed, i, sd.Key)
		}
		seen[sd.Key] = true
		k, problems := sd.Input.Validate()
		if len(problems) > 0 {
			return nil, fmt.Errorf("%w: seed %q: %s", ErrInvalidSeed, sd.Key, problems[0].Error())
		}
		created := now.Add(-time.Duration(i) * time.Millisecond)
		k.ID, k.MerchantID, k.CreatedAt, k.UpdatedAt = "kn_"+sd.Key, merchantID, created, created
		items = append(items, k)
	}
	return items, nil
}
