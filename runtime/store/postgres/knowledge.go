package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

const knowledgeColumns = `k.merchant_id, k.id, k.title, k.content, k.url, k.tags, k.created_at, k.updated_at, k.use_count`

// Every knowledge write first updates the merchant's knowledge_state row, in its transaction: the row lock
// serialises the merchant's knowledge writes (so they always lock in the same order and cannot deadlock), keeps
// the item count exact, and changes the revision that other replicas poll.

// CreateKnowledge stores a new item unless the merchant already holds maxItems items (maxItems > 0).
func (s *Store) CreateKnowledge(ctx context.Context, k store.Knowledge, maxItems int) error {
	if err := storeutil.ValidateKnowledge(k); err != nil {
		return fmt.Errorf("creating knowledge item: %w", err)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := claimKnowledgeSlot(ctx, tx, k.MerchantID, maxItems); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO knowledge (merchant_id, id, title, content, url, tags, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags(k.Tags), stamp(k.CreatedAt), stamp(k.UpdatedAt))
		if err != nil {
			return fmt.Errorf("inserting: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("creating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// claimKnowledgeSlot counts one more item for the merchant and changes its revision, or returns
// store.ErrKnowledgeLimit, changing nothing, when it holds maxItems items already (maxItems <= 0: no ceiling). The
// condition is evaluated on the locked, latest row, so concurrent creations never pass the ceiling.
func claimKnowledgeSlot(ctx context.Context, tx pgx.Tx, merchantID string, maxItems int) error {
	tag, err := tx.Exec(ctx, `
		INSERT INTO knowledge_state AS ks (merchant_id, revision, items) VALUES ($1, 1, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET revision = ks.revision + 1, items = ks.items + 1
		WHERE $2::integer <= 0 OR ks.items < $2::integer`, merchantID, maxItems)
	if err != nil {
		return fmt.Errorf("counting items: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrKnowledgeLimit
	}
	return nil
}

// bumpRevision locks the merchant's knowledge_state row, changes its revision and adds delta to its item count.
// A merchant without the row never had knowledge: store.ErrNotFound.
func bumpRevision(ctx context.Context, tx pgx.Tx, merchantID string, delta int) error {
	tag, err := tx.Exec(ctx, `UPDATE knowledge_state SET revision = revision + 1, items = items + $2
		WHERE merchant_id = $1`, merchantID, delta)
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("bumping knowledge revision: %w", err)
	}
	return nil
}

// GetKnowledge returns one item or store.ErrNotFound.
func (s *Store) GetKnowledge(ctx context.Context, merchantID, id string) (store.Knowledge, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+knowledgeColumns+` FROM knowledge k
		WHERE k.merchant_id = $1 AND k.id = $2`, merchantID, id)
	k, err := scanKnowledge(row)
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("getting knowledge item %s: %w", id, err)
	}
	return k, nil
}

// UpdateKnowledge replaces an item's title, content, URL, tags and UpdatedAt, or returns store.ErrNotFound.
func (s *Store) UpdateKnowledge(ctx context.Context, k store.Knowledge) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := bumpRevision(ctx, tx, k.MerchantID, 0); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			UPDATE knowledge SET title = $3, content = $4, url = $5, tags = $6, updated_at = $7
			WHERE merchant_id = $1 AND id = $2`,
			k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags(k.Tags), stamp(k.UpdatedAt))
		return mustAffect(tag, err) // ErrNotFound rolls the revision back
	})
	if err != nil {
		return fmt.Errorf("updating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// DeleteKnowledge removes an item, or returns store.ErrNotFound.
func (s *Store) DeleteKnowledge(ctx context.Context, merchantID, id string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := bumpRevision(ctx, tx, merchantID, 0); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM knowledge WHERE merchant_id = $1 AND id = $2`, merchantID, id)
		if err := mustAffect(tag, err); err != nil {
			return err // ErrNotFound rolls the revision back
		}
		_, err = tx.Exec(ctx, `UPDATE knowledge_state SET items = items - 1 WHERE merchant_id = $1`, merchantID)
		if err != nil {
			return fmt.Errorf("counting items: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("deleting knowledge item %s: %w", id, err)
	}
	return nil
}

// ListKnowledge returns a page of the merchant's items, newest first, and the next page's cursor.
func (s *Store) ListKnowledge(ctx context.Context, merchantID string, f store.KnowledgeFilter) ([]store.Knowledge, string, error) {
	where, args, err := knowledgeFilter(merchantID, f)
	if err != nil {
		return nil, "", fmt.Errorf("listing knowledge: %w", err)
	}
	size := storeutil.PageSize(f.Limit)
	items, err := s.queryKnowledge(ctx, `SELECT `+knowledgeColumns+` FROM knowledge k
		WHERE `+where+` ORDER BY k.created_at DESC, k.id DESC LIMIT `+args.add(size+1), args...)
	if err != nil {
		return nil, "", fmt.Errorf("listing knowledge: %w", err)
	}
	if len(items) <= size {
		return items, "", nil
	}
	items = items[:size]
	last := items[size-1]
	next := storeutil.EncodeCursor(storeutil.Cursor{Kind: storeutil.KindKnowledge, MerchantID: merchantID,
		CreatedAt: storeutil.Millis(last.CreatedAt), ID: last.ID})
	return items, next, nil
}

// knowledgeFilter builds the WHERE clause (over knowledge k) and its arguments for a listing.
func knowledgeFilter(merchantID string, f store.KnowledgeFilter) (string, params, error) {
	var p params
	conds := []string{"k.merchant_id = " + p.add(merchantID)}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindKnowledge, merchantID)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(k.created_at, k.id) < ("+p.add(storeutil.FromMillis(cur.CreatedAt))+"::timestamptz, "+
			p.add(cur.ID)+"::text)")
	}
	if f.Query != "" {
		q := p.add(f.Query)
		conds = append(conds, "("+containsFold("k.title", q)+" OR "+containsFold("k.content", q)+")")
	}
	if f.Tag != "" {
		conds = append(conds, p.add(f.Tag)+"::text = ANY(k.tags)")
	}
	return strings.Join(conds, " AND "), p, nil
}

// AllKnowledge returns every item of the merchant, newest first.
func (s *Store) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	items, err := s.queryKnowledge(ctx, `SELECT `+knowledgeColumns+` FROM knowledge k
		WHERE k.merchant_id = $1 ORDER BY k.created_at DESC, k.id DESC`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("listing all knowledge: %w", err)
	}
	return items, nil
}

func (s *Store) queryKnowledge(ctx context.Context, query string, args ...any) ([]store.Knowledge, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var items []store.Knowledge
	for rows.Next() {
		k, err := scanKnowledge(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, k)
	}
	return items, rows.Err()
}

// KnowledgeRevision returns the merchant's knowledge revision, 0 if it never had knowledge. It reads the
// committed state of the database, so a write through any replica is seen at once.
func (s *Store) KnowledgeRevision(ctx context.Context, merchantID string) (int64, error) {
	var rev int64
	err := s.pool.QueryRow(ctx, `SELECT revision FROM knowledge_state WHERE merchant_id = $1`, merchantID).Scan(&rev)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("reading knowledge revision: %w", err)
	}
	return rev, nil
}

// scanKnowledge reads knowledgeColumns; no row is store.ErrNotFound.
func scanKnowledge(row pgx.Row) (store.Knowledge, error) {
	var k store.Knowledge
	err := row.Scan(&k.MerchantID, &k.ID, &k.Title, &k.Content, &k.URL, &k.Tags, &k.CreatedAt, &k.UpdatedAt, &k.UseCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Knowledge{}, store.ErrNotFound
	}
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("reading knowledge item: %w", err)
	}
	if len(k.Tags) == 0 {
		k.Tags = nil
	}
	k.CreatedAt, k.UpdatedAt = k.CreatedAt.UTC(), k.UpdatedAt.UTC()
	return k, nil
}

// tags is the stored form of an item's tags: never NULL.
func tags(t []string) []string {
	if t == nil {
		return []string{}
	}
	return t
}
