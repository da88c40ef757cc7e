package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ImportKnowledge adds items to the merchant's knowledge base in one transaction: all of them, or, when one
// fails or they would pass the plan's item ceiling (store.ErrKnowledgeLimit) or characters ceiling
// (store.ErrKnowledgeSizeLimit), none. It returns the items with
// their IDs and times.
func (s *Service) ImportKnowledge(ctx context.Context, m *tenant.Bundle, items []store.Knowledge) ([]store.Knowledge, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	out := make([]store.Knowledge, len(items))
	for i, k := range items {
		created := now.Add(time.Duration(i) * time.Millisecond) // keeps the file's order in listings
		k.ID, k.MerchantID, k.CreatedAt, k.UpdatedAt, k.UseCount = ids.New("kn_"), m.MerchantID, created, created, 0
		out[i] = k
	}
	err := s.store.Write(ctx, func(tx store.Tx) error {
		for _, k := range out {
			claimed, err := tx.ClaimKnowledgeSlot(ctx, m.MerchantID, int(m.Plan.KnowledgeItems))
			if err != nil {
				return err
			}
			if !claimed {
				return store.ErrKnowledgeLimit
			}
			if err := tx.InsertKnowledge(ctx, k); err != nil {
				return err
			}
		}
		return checkCharacters(ctx, tx, m.MerchantID, "", int(m.Plan.KnowledgeCharacters))
	})
	if err != nil {
		return nil, fmt.Errorf("importing %d knowledge items: %w", len(items), err)
	}
	s.indexes.reload(ctx, m.MerchantID)
	return out, nil
}
