package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-dev/parley/runtime/store"
)

// ErrSourceLimit means a new knowledge source would pass the plan's ceiling of sources; nothing was written.
var ErrSourceLimit = errors.New("knowledge source limit reached")

// createSource stores a new knowledge source, due at once. With maxSources > 0 and the merchant already holding
// maxSources sources, nothing is written and ErrSourceLimit is returned.
func createSource(ctx context.Context, st store.Store, src store.KnowledgeSource, maxSources int) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if maxSources > 0 {
			n, err := tx.CountSources(ctx, src.MerchantID)
			if err != nil {
				return err
			}
			if n >= maxSources {
				return ErrSourceLimit
			}
		}
		return tx.InsertSource(ctx, src)
	})
	if err != nil {
		return fmt.Errorf("creating knowledge source: %w", err)
	}
	return nil
}

// deleteSource deletes a source with its pages and its items, or returns store.ErrNotFound. Items typed by hand
// stay.
func deleteSource(ctx context.Context, st store.Store, merchantID, id string) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if err := touchKnowledge(ctx, tx, merchantID, 0); err != nil {
			return err
		}
		n, err := tx.DeleteSource(ctx, merchantID, id)
		if err != nil || n == 0 {
			return err
		}
		return tx.TouchKnowledge(ctx, merchantID, -n)
	})
	if err != nil {
		return fmt.Errorf("deleting knowledge source %s: %w", id, err)
	}
	return nil
}

// replacePage replaces the items the source made of a page with items (each with its ID, times and the
// source's ID) and records the page, in one transaction: a sync that stops part-way leaves every page with its
// old items or its new ones. Past the plan's item or characters ceiling, store.ErrKnowledgeLimit or
// store.ErrKnowledgeSizeLimit, and nothing changes.
func replacePage(ctx context.Context, st store.Store, page store.SourcePage, items []store.Knowledge, lim KnowledgeLimits) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if err := clearPage(ctx, tx, page.MerchantID, page.SourceID, page.URL); err != nil {
			return err
		}
		for _, k := range items {
			claimed, err := tx.ClaimKnowledgeSlot(ctx, k.MerchantID, lim.MaxItems)
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
		if len(items) > 0 {
			if err := checkCharacters(ctx, tx, page.MerchantID, "", lim.MaxChars); err != nil {
				return err
			}
		}
		page.Items = len(items)
		return tx.PutSourcePage(ctx, page)
	})
	if err != nil {
		return fmt.Errorf("replacing the items of page %s: %w", page.URL, err)
	}
	return nil
}

// recordPage records what a sync knows of a page without changing its items: an unchanged page, or a page
// skipped before it ever made items.
func recordPage(ctx context.Context, st store.Store, page store.SourcePage) error {
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.PutSourcePage(ctx, page) }); err != nil {
		return fmt.Errorf("recording page %s: %w", page.URL, err)
	}
	return nil
}

// removePage deletes a page that is gone from its source, with its items.
func removePage(ctx context.Context, st store.Store, merchantID, sourceID, url string) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if err := clearPage(ctx, tx, merchantID, sourceID, url); err != nil {
			return err
		}
		return tx.DeleteSourcePage(ctx, merchantID, sourceID, url)
	})
	if err != nil {
		return fmt.Errorf("removing page %s: %w", url, err)
	}
	return nil
}

// clearPage deletes the items the source made of the page, after the statement that serialises the merchant's
// knowledge writes, and counts them out.
func clearPage(ctx context.Context, tx store.Tx, merchantID, sourceID, url string) error {
	if err := touchKnowledge(ctx, tx, merchantID, 0); err != nil {
		return err
	}
	n, err := tx.DeletePageKnowledge(ctx, merchantID, sourceID, url)
	if err != nil || n == 0 {
		return err
	}
	return tx.TouchKnowledge(ctx, merchantID, -n)
}

// touchKnowledge is Tx.TouchKnowledge for a merchant that may never have had knowledge, and so has none to
// delete.
func touchKnowledge(ctx context.Context, tx store.Tx, merchantID string, delta int) error {
	if err := tx.TouchKnowledge(ctx, merchantID, delta); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}
