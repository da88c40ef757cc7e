package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The limits of one knowledge item, the same through the API, the dashboard and imports.
const (
	MaxTitleRunes   = 200
	MaxContentRunes = 20000
	MaxTags         = 20
	MaxTagRunes     = 50
	MaxURLBytes     = 2048
	// MaxQuestions and MaxQuestionRunes bound the questions a merchant lists for an item: a few phrasings of
	// what visitors ask, not a second content.
	MaxQuestions     = 20
	MaxQuestionRunes = 200
)

// Every knowledge write changes the merchant's knowledge revision in its transaction, first, so that one
// merchant's knowledge writes are serialised and replicas see that their index is stale.

// KnowledgeLimits are the plan's ceilings every write that adds knowledge items is checked against, in its own
// transaction: a hand-written item, an import, a synced page.
type KnowledgeLimits struct {
	// MaxItems and MaxChars are the plan's knowledgeItems and knowledgeCharacters; 0 is no ceiling.
	MaxItems, MaxChars int
}

// KnowledgeLimitsOf returns the knowledge ceilings of plan.
func KnowledgeLimitsOf(plan tenant.Plan) KnowledgeLimits {
	return KnowledgeLimits{MaxItems: int(plan.KnowledgeItems), MaxChars: int(plan.KnowledgeCharacters)}
}

// createKnowledge stores a new item within both of the plan's ceilings, checked in the write's transaction (exact
// under concurrency): past lim.MaxItems items, store.ErrKnowledgeLimit; past lim.MaxChars characters,
// store.ErrKnowledgeSizeLimit; nothing is written then.
func createKnowledge(ctx context.Context, st store.Store, k store.Knowledge, lim KnowledgeLimits) error {
	if err := validateKnowledge(k); err != nil {
		return fmt.Errorf("creating knowledge item: %w", err)
	}
	if err := st.Write(ctx, func(tx store.Tx) error { return insertKnowledge(ctx, tx, k, lim) }); err != nil {
		return fmt.Errorf("creating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// insertKnowledge is createKnowledge's part of a transaction, for writes that add an item with more.
func insertKnowledge(ctx context.Context, tx store.Tx, k store.Knowledge, lim KnowledgeLimits) error {
	claimed, err := tx.ClaimKnowledgeSlot(ctx, k.MerchantID, lim.MaxItems)
	if err != nil {
		return err
	}
	if !claimed {
		return store.ErrKnowledgeLimit
	}
	if err := checkCharacters(ctx, tx, k.MerchantID, "", lim.MaxChars, k); err != nil {
		return err
	}
	return tx.InsertKnowledge(ctx, k)
}

// updateKnowledge replaces an item's title, content, URL, tags, questions, draft status and UpdatedAt, or returns
// store.ErrNotFound. With maxChars > 0 and the merchant's items holding more characters with the new text, nothing
// is written and store.ErrKnowledgeSizeLimit is returned (exact under concurrency).
func updateKnowledge(ctx context.Context, st store.Store, k store.Knowledge, maxChars int) error {
	if err := st.Write(ctx, func(tx store.Tx) error { return replaceKnowledge(ctx, tx, k, maxChars) }); err != nil {
		return fmt.Errorf("updating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// replaceKnowledge is updateKnowledge's part of a transaction, for writes that change an item with more.
func replaceKnowledge(ctx context.Context, tx store.Tx, k store.Knowledge, maxChars int) error {
	if err := tx.TouchKnowledge(ctx, k.MerchantID, 0); err != nil {
		return err
	}
	if err := checkCharacters(ctx, tx, k.MerchantID, k.ID, maxChars, k); err != nil {
		return err
	}
	return tx.UpdateKnowledge(ctx, k) // ErrNotFound rolls the revision back
}

// deleteKnowledge removes an item, or returns store.ErrNotFound.
func deleteKnowledge(ctx context.Context, st store.Store, merchantID, id string) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if err := tx.TouchKnowledge(ctx, merchantID, -1); err != nil {
			return err
		}
		return tx.DeleteKnowledge(ctx, merchantID, id) // ErrNotFound rolls the count back
	})
	if err != nil {
		return fmt.Errorf("deleting knowledge item %s: %w", id, err)
	}
	return nil
}

// checkCharacters refuses items (store.ErrKnowledgeSizeLimit) when they and the merchant's other items (all but
// the one named except) would hold more than maxChars characters of titles, contents and questions
// (Knowledge.Characters), which bound the memory of the merchant's retrieval index; maxChars <= 0 is no ceiling.
// It runs after the statement that serialises the merchant's knowledge writes, so that two writes racing cannot
// both pass the ceiling.
func checkCharacters(ctx context.Context, tx store.Tx, merchantID, except string, maxChars int, items ...store.Knowledge) error {
	if maxChars <= 0 {
		return nil
	}
	total, err := tx.KnowledgeCharacters(ctx, merchantID, except)
	if err != nil {
		return err
	}
	for _, k := range items {
		total += k.Characters()
	}
	if total > maxChars {
		return store.ErrKnowledgeSizeLimit
	}
	return nil
}

// validateKnowledge checks the identifiers a knowledge item must carry.
func validateKnowledge(k store.Knowledge) error {
	switch {
	case k.MerchantID == "":
		return errors.New("merchant ID is empty")
	case k.ID == "":
		return errors.New("knowledge ID is empty")
	}
	return nil
}
