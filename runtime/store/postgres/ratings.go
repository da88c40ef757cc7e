package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
)

// SaveRating stores the rating of an answer, or replaces the rating and comment of the stored one when either
// differs, and returns the stored one's creation time; no row returned is nothing changed.
func (tx writeTx) SaveRating(ctx context.Context, r store.Rating) (time.Time, bool, error) {
	return saved(tx.QueryRow(ctx, `INSERT INTO answer_ratings AS r (merchant_id, conversation_id, message_id, visitor_id,
		rating, comment, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (merchant_id, conversation_id, message_id) DO UPDATE SET rating = excluded.rating,
		comment = excluded.comment, updated_at = GREATEST(r.updated_at, excluded.updated_at)
		WHERE r.rating <> excluded.rating OR r.comment <> excluded.comment
		RETURNING r.created_at`,
		r.MerchantID, r.ConversationID, r.MessageID, r.VisitorID, r.Rating, r.Comment, stamp(r.CreatedAt), stamp(r.UpdatedAt)),
		"message "+r.MessageID)
}

// SaveSatisfaction stores the rating of a conversation, or replaces the score and comment of the stored one when
// either differs, and returns the stored one's creation time; no row returned is nothing changed.
func (tx writeTx) SaveSatisfaction(ctx context.Context, s store.Satisfaction) (time.Time, bool, error) {
	return saved(tx.QueryRow(ctx, `INSERT INTO conversation_ratings AS s (merchant_id, conversation_id, visitor_id, score,
		comment, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (merchant_id, conversation_id) DO UPDATE SET score = excluded.score, comment = excluded.comment,
		updated_at = GREATEST(s.updated_at, excluded.updated_at)
		WHERE s.score <> excluded.score OR s.comment <> excluded.comment
		RETURNING s.created_at`,
		s.MerchantID, s.ConversationID, s.VisitorID, s.Score, s.Comment, stamp(s.CreatedAt), stamp(s.UpdatedAt)),
		"conversation "+s.ConversationID)
}

// saved reads the creation time an upsert of a rating returned.
func saved(row pgx.Row, what string) (time.Time, bool, error) {
	var created time.Time
	switch err := row.Scan(&created); {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("saving the rating of %s: %w", what, err)
	}
	return created.UTC(), true, nil
}

// SaveReviewFix records when the merchant dealt with a question, replacing an earlier record.
func (tx writeTx) SaveReviewFix(ctx context.Context, f store.ReviewFix) error {
	_, err := tx.Exec(ctx, `INSERT INTO review_fixes (merchant_id, question, knowledge_id, fixed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id, question) DO UPDATE SET knowledge_id = excluded.knowledge_id, fixed_at = excluded.fixed_at`,
		f.MerchantID, f.Question, f.KnowledgeID, stamp(f.FixedAt))
	if err != nil {
		return fmt.Errorf("recording the fix of a question: %w", err)
	}
	return nil
}
