package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// ClaimKnowledgeSlot reports false when the merchant holds maxItems items or more, and otherwise changes its
// revision. It runs in a write transaction, which SQLite serialises, so the count cannot
// change before the insert.
func (tx writeTx) ClaimKnowledgeSlot(ctx context.Context, merchantID string, maxItems int) (bool, error) {
	if maxItems > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM knowledge WHERE merchant_id = ?`,
			merchantID).Scan(&n); err != nil {
			return false, fmt.Errorf("counting items: %w", err)
		}
		if n >= maxItems {
			return false, nil
		}
	}
	return true, tx.TouchKnowledge(ctx, merchantID, 1)
}

// KnowledgeCharacters counts the characters of the merchant's items but except, in the write transaction.
func (tx writeTx) KnowledgeCharacters(ctx context.Context, merchantID, except string) (int, error) {
	return storeutil.KnowledgeCharacters(tx.context(ctx), dialect{}, tx.rows, merchantID, except)
}

// TouchKnowledge changes the merchant's knowledge revision. The item count needs no bookkeeping here: SQLite
// serialises writes, so ClaimKnowledgeSlot counts the items themselves.
func (tx writeTx) TouchKnowledge(ctx context.Context, merchantID string, _ int) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO knowledge_revisions (merchant_id, revision) VALUES (?, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET revision = revision + 1`, merchantID)
	if err != nil {
		return fmt.Errorf("bumping knowledge revision: %w", err)
	}
	return nil
}

// InsertKnowledge stores a new item.
func (tx writeTx) InsertKnowledge(ctx context.Context, k store.Knowledge) error {
	tags, err := encodeTags(k.Tags)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO knowledge (merchant_id, id, title, content, url, tags, questions, draft, curated, source_id,
			file, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags, store.JoinQuestions(k.Questions), k.Draft, k.Curated, k.SourceID,
		k.File, storeutil.Millis(k.CreatedAt), storeutil.Millis(k.UpdatedAt))
	if err != nil {
		return fmt.Errorf("inserting: %w", err)
	}
	return nil
}

// GetKnowledge returns one item or store.ErrNotFound.
func (s *Store) GetKnowledge(ctx context.Context, merchantID, id string) (store.Knowledge, error) {
	row := s.reader.QueryRowContext(ctx, `SELECT `+storeutil.KnowledgeColumns+` FROM knowledge k
		WHERE k.merchant_id = ? AND k.id = ?`, merchantID, id)
	k, err := scanKnowledge(row)
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("getting knowledge item %s: %w", id, err)
	}
	return k, nil
}

// UpdateKnowledge replaces an item's title, content, URL, tags, questions, draft and curated status and UpdatedAt, or returns
// store.ErrNotFound.
func (tx writeTx) UpdateKnowledge(ctx context.Context, k store.Knowledge) error {
	tags, err := encodeTags(k.Tags)
	if err != nil {
		return err
	}
	return mustAffect(tx.ExecContext(ctx, `
		UPDATE knowledge SET title = ?, content = ?, url = ?, tags = ?, questions = ?, draft = ?, curated = ?,
			updated_at = ?
		WHERE merchant_id = ? AND id = ?`,
		k.Title, k.Content, k.URL, tags, store.JoinQuestions(k.Questions), k.Draft, k.Curated, storeutil.Millis(k.UpdatedAt),
		k.MerchantID, k.ID))
}

// DeleteKnowledge removes an item, or returns store.ErrNotFound.
func (tx writeTx) DeleteKnowledge(ctx context.Context, merchantID, id string) error {
	return mustAffect(tx.ExecContext(ctx, `DELETE FROM knowledge WHERE merchant_id = ? AND id = ?`, merchantID, id))
}

// DeleteFileKnowledge deletes the items made of the uploaded file by that name.
func (tx writeTx) DeleteFileKnowledge(ctx context.Context, merchantID, file string) (int, error) {
	n, err := affected(tx.ExecContext(ctx, `DELETE FROM knowledge WHERE merchant_id = ? AND file = ? AND file != ''`,
		merchantID, file))
	if err != nil {
		return 0, fmt.Errorf("deleting the items of file %s: %w", file, err)
	}
	return int(n), nil
}

// mustAffect turns a statement that changed no row into store.ErrNotFound.
func mustAffect(r sql.Result, err error) error {
	n, err := affected(r, err)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

// affected returns how many rows a statement changed.
func affected(r sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
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

// ReplaceKnowledgeVectors replaces the embeddings of an item's passages, or returns store.ErrNotFound when the
// item is gone.
func (tx writeTx) ReplaceKnowledgeVectors(ctx context.Context, merchantID, knowledgeID string, vs []store.KnowledgeVector) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM knowledge WHERE merchant_id = ? AND id = ?`, merchantID, knowledgeID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("finding item %s: %w", knowledgeID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM knowledge_vectors WHERE merchant_id = ? AND knowledge_id = ?`,
		merchantID, knowledgeID); err != nil {
		return fmt.Errorf("deleting the vectors of item %s: %w", knowledgeID, err)
	}
	for _, v := range vs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_vectors (merchant_id, knowledge_id, passage, model,
			text_hash, vector) VALUES (?, ?, ?, ?, ?, ?)`, merchantID, knowledgeID, v.Passage, v.Model, v.TextHash,
			storeutil.EncodeVector(v.Vector)); err != nil {
			return fmt.Errorf("inserting a vector of item %s: %w", knowledgeID, err)
		}
	}
	return nil
}
