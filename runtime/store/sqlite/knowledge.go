package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

const knowledgeColumns = `merchant_id, id, title, content, url, tags, created_at, updated_at, use_count`

// CreateKnowledge stores a new item unless the merchant already holds maxItems items (maxItems > 0).
func (s *Store) CreateKnowledge(ctx context.Context, k store.Knowledge, maxItems int) error {
	if err := storeutil.ValidateKnowledge(k); err != nil {
		return fmt.Errorf("creating knowledge item: %w", err)
	}
	tags, err := encodeTags(k.Tags)
	if err != nil {
		return fmt.Errorf("creating knowledge item %s: %w", k.ID, err)
	}
	err = s.write(ctx, func(tx *txn) error {
		if err := checkKnowledgeLimit(ctx, tx, k.MerchantID, maxItems); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO knowledge (merchant_id, id, title, content, url, tags, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags,
			storeutil.Millis(k.CreatedAt), storeutil.Millis(k.UpdatedAt))
		if err != nil {
			return fmt.Errorf("inserting: %w", err)
		}
		return bumpRevision(ctx, tx, k.MerchantID)
	})
	if err != nil {
		return fmt.Errorf("creating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// checkKnowledgeLimit returns store.ErrKnowledgeLimit when the merchant holds maxItems items or more. It runs in
// a write transaction, which SQLite serialises, so the count cannot change before the insert.
func checkKnowledgeLimit(ctx context.Context, tx *txn, merchantID string, maxItems int) error {
	if maxItems <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM knowledge WHERE merchant_id = ?`,
		merchantID).Scan(&n); err != nil {
		return fmt.Errorf("counting items: %w", err)
	}
	if n >= maxItems {
		return store.ErrKnowledgeLimit
	}
	return nil
}

// bumpRevision changes the merchant's knowledge revision; it runs in the transaction of each knowledge write.
func bumpRevision(ctx context.Context, tx *txn, merchantID string) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO knowledge_revisions (merchant_id, revision) VALUES (?, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET revision = revision + 1`, merchantID)
	if err != nil {
		return fmt.Errorf("bumping knowledge revision: %w", err)
	}
	return nil
}

// GetKnowledge returns one item or store.ErrNotFound.
func (s *Store) GetKnowledge(ctx context.Context, merchantID, id string) (store.Knowledge, error) {
	row := s.reader.QueryRowContext(ctx, `SELECT `+knowledgeColumns+` FROM knowledge
		WHERE merchant_id = ? AND id = ?`, merchantID, id)
	k, err := scanKnowledge(row)
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("getting knowledge item %s: %w", id, err)
	}
	return k, nil
}

// UpdateKnowledge replaces an item's title, content, URL, tags and UpdatedAt, or returns store.ErrNotFound.
func (s *Store) UpdateKnowledge(ctx context.Context, k store.Knowledge) error {
	tags, err := encodeTags(k.Tags)
	if err != nil {
		return fmt.Errorf("updating knowledge item %s: %w", k.ID, err)
	}
	err = s.write(ctx, func(tx *txn) error {
		r, err := tx.ExecContext(ctx, `
			UPDATE knowledge SET title = ?, content = ?, url = ?, tags = ?, updated_at = ?
			WHERE merchant_id = ? AND id = ?`,
			k.Title, k.Content, k.URL, tags, storeutil.Millis(k.UpdatedAt), k.MerchantID, k.ID)
		if err := mustAffect(r, err); err != nil {
			return err
		}
		return bumpRevision(ctx, tx, k.MerchantID)
	})
	if err != nil {
		return fmt.Errorf("updating knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// DeleteKnowledge removes an item, or returns store.ErrNotFound.
func (s *Store) DeleteKnowledge(ctx context.Context, merchantID, id string) error {
	err := s.write(ctx, func(tx *txn) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM knowledge WHERE merchant_id = ? AND id = ?`, merchantID, id)
		if err := mustAffect(r, err); err != nil {
			return err
		}
		return bumpRevision(ctx, tx, merchantID)
	})
	if err != nil {
		return fmt.Errorf("deleting knowledge item %s: %w", id, err)
	}
	return nil
}

// mustAffect turns a statement that changed no row into store.ErrNotFound.
func mustAffect(r sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
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
		WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, size+1)...)
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
func knowledgeFilter(merchantID string, f store.KnowledgeFilter) (string, []any, error) {
	conds := []string{"k.merchant_id = ?"}
	args := []any{merchantID}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindKnowledge, merchantID)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(k.created_at, k.id) < (?, ?)")
		args = append(args, cur.CreatedAt, cur.ID)
	}
	if f.Query != "" {
		conds = append(conds, "("+containsFoldFunc+"(k.title, ?) OR "+containsFoldFunc+"(k.content, ?))")
		args = append(args, f.Query, f.Query)
	}
	if f.Tag != "" {
		conds = append(conds, "EXISTS (SELECT 1 FROM json_each(k.tags) t WHERE t.value = ?)")
		args = append(args, f.Tag)
	}
	return strings.Join(conds, " AND "), args, nil
}

// AllKnowledge returns every item of the merchant, newest first.
func (s *Store) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	items, err := s.queryKnowledge(ctx, `SELECT `+knowledgeColumns+` FROM knowledge
		WHERE merchant_id = ? ORDER BY created_at DESC, id DESC`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("listing all knowledge: %w", err)
	}
	return items, nil
}

func (s *Store) queryKnowledge(ctx context.Context, query string, args ...any) ([]store.Knowledge, error) {
	rows, err := s.reader.QueryContext(ctx, query, args...)
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

// KnowledgeRevision returns the merchant's knowledge revision, 0 if it never had knowledge.
func (s *Store) KnowledgeRevision(ctx context.Context, merchantID string) (int64, error) {
	var rev int64
	err := s.reader.QueryRowContext(ctx, `SELECT revision FROM knowledge_revisions WHERE merchant_id = ?`,
		merchantID).Scan(&rev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("reading knowledge revision: %w", err)
	}
	return rev, nil
}

// scanKnowledge reads knowledgeColumns; no row is store.ErrNotFound.
func scanKnowledge(row rowScanner) (store.Knowledge, error) {
	var (
		k                store.Knowledge
		tags             string
		created, updated int64
	)
	err := row.Scan(&k.MerchantID, &k.ID, &k.Title, &k.Content, &k.URL, &tags, &created, &updated, &k.UseCount)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Knowledge{}, store.ErrNotFound
	}
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("reading knowledge item: %w", err)
	}
	if err := json.Unmarshal([]byte(tags), &k.Tags); err != nil {
		return store.Knowledge{}, fmt.Errorf("reading tags of knowledge item %s: %w", k.ID, err)
	}
	if len(k.Tags) == 0 {
		k.Tags = nil
	}
	k.CreatedAt, k.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return k, nil
}

func encodeTags(tags []string) (string, error) {
	if tags == nil {
		tags = []string{}
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return "", fmt.Errorf("encoding tags: %w", err)
	}
	return string(b), nil
}
