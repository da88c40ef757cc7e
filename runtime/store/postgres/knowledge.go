package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// Every knowledge write first updates the merchant's knowledge_state row, in its transaction: the row lock
// serialises the merchant's knowledge writes (so they always lock in the same order and cannot deadlock), keeps
// the item count exact, and changes the revision that other replicas poll.

// ClaimKnowledgeSlot counts one more item for the merchant and changes its revision, or reports false, changing
// nothing, when it holds maxItems items already (maxItems <= 0: no ceiling). The
// condition is evaluated on the locked, latest row, so concurrent creations never pass the ceiling.
func (tx writeTx) ClaimKnowledgeSlot(ctx context.Context, merchantID string, maxItems int) (bool, error) {
	tag, err := tx.Exec(ctx, `
		INSERT INTO knowledge_state AS ks (merchant_id, revision, items) VALUES ($1, 1, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET revision = ks.revision + 1, items = ks.items + 1
		WHERE $2::integer <= 0 OR ks.items < $2::integer`, merchantID, maxItems)
	if err != nil {
		return false, fmt.Errorf("counting items: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// TouchKnowledge locks the merchant's knowledge_state row, changes its revision and adds delta to its item count.
// A merchant without the row never had knowledge: store.ErrNotFound.
func (tx writeTx) TouchKnowledge(ctx context.Context, merchantID string, delta int) error {
	tag, err := tx.Exec(ctx, `UPDATE knowledge_state SET revision = revision + 1, items = items + $2
		WHERE merchant_id = $1`, merchantID, delta)
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("bumping knowledge revision: %w", err)
	}
	return nil
}

// KnowledgeCharacters counts the characters of the merchant's items but except, in the write transaction: after
// the knowledge_state row is locked, read committed shows every other knowledge write committed.
func (tx writeTx) KnowledgeCharacters(ctx context.Context, merchantID, except string) (int, error) {
	return storeutil.KnowledgeCharacters(ctx, dialect{}, queryFunc(tx.pipeline), merchantID, except)
}

// InsertKnowledge stores a new item.
func (tx writeTx) InsertKnowledge(ctx context.Context, k store.Knowledge) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO knowledge (merchant_id, id, title, content, url, tags, questions, draft, curated, source_id,
			file, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags(k.Tags), store.JoinQuestions(k.Questions), k.Draft, k.Curated, k.SourceID,
		k.File, stamp(k.CreatedAt), stamp(k.UpdatedAt))
	if err != nil {
		return fmt.Errorf("inserting: %w", err)
	}
	return nil
}

// GetKnowledge returns one item or store.ErrNotFound.
func (s *Store) GetKnowledge(ctx context.Context, merchantID, id string) (store.Knowledge, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+storeutil.KnowledgeColumns+` FROM knowledge k
		WHERE k.merchant_id = $1 AND k.id = $2`, merchantID, id)
	k, err := scanKnowledge(row)
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("getting knowledge item %s: %w", id, err)
	}
	return k, nil
}

// UpdateKnowledge replaces an item's title, content, URL, tags, questions, draft status and UpdatedAt, or returns
// store.ErrNotFound.
func (tx writeTx) UpdateKnowledge(ctx context.Context, k store.Knowledge) error {
	tag, err := tx.Exec(ctx, `
		UPDATE knowledge SET title = $3, content = $4, url = $5, tags = $6, questions = $7, draft = $8, curated = $9,
			updated_at = $10
		WHERE merchant_id = $1 AND id = $2`,
		k.MerchantID, k.ID, k.Title, k.Content, k.URL, tags(k.Tags), store.JoinQuestions(k.Questions), k.Draft,
		k.Curated, stamp(k.UpdatedAt))
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("updating: %w", err)
	}
	return nil
}

// DeleteKnowledge removes an item, or returns store.ErrNotFound.
func (tx writeTx) DeleteKnowledge(ctx context.Context, merchantID, id string) error {
	tag, err := tx.Exec(ctx, `DELETE FROM knowledge WHERE merchant_id = $1 AND id = $2`, merchantID, id)
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("deleting: %w", err)
	}
	return nil
}

// DeleteFileKnowledge deletes the items made of the uploaded file by that name.
func (tx writeTx) DeleteFileKnowledge(ctx context.Context, merchantID, file string) (int, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM knowledge WHERE merchant_id = $1 AND file = $2 AND file <> ''`, merchantID, file)
	if err != nil {
		return 0, fmt.Errorf("deleting the items of file %s: %w", file, err)
	}
	return int(tag.RowsAffected()), nil
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

// tags is the stored form of an item's tags: never NULL.
func tags(t []string) []string {
	if t == nil {
		return []string{}
	}
	return t
}

// ReplaceKnowledgeVectors replaces the embeddings of an item's passages, or returns store.ErrNotFound when the
// item is gone. The item's row is locked first, so that it is not deleted before the vectors are written.
func (tx writeTx) ReplaceKnowledgeVectors(ctx context.Context, merchantID, knowledgeID string, vs []store.KnowledgeVector) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM knowledge WHERE merchant_id = $1 AND id = $2 FOR SHARE`, merchantID, knowledgeID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("finding item %s: %w", knowledgeID, err)
	}
	tx.queue("deleting the vectors of item "+knowledgeID, `DELETE FROM knowledge_vectors WHERE merchant_id = $1 AND knowledge_id = $2`,
		merchantID, knowledgeID)
	for _, v := range vs {
		tx.queue("inserting a vector of item "+knowledgeID, `INSERT INTO knowledge_vectors (merchant_id, knowledge_id,
			passage, model, text_hash, vector) VALUES ($1, $2, $3, $4, $5, $6)`, merchantID, knowledgeID, v.Passage,
			v.Model, v.TextHash, storeutil.EncodeVector(v.Vector))
	}
	return nil
}
