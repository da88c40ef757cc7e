package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// SaveRating stores the rating of an answer, or replaces the rating and comment of the stored one when either
// differs, and returns the stored one's creation time; no row returned is nothing changed.
func (tx writeTx) SaveRating(ctx context.Context, r store.Rating) (time.Time, bool, error) {
	return saved(tx.QueryRowContext(ctx, `INSERT INTO answer_ratings (merchant_id, conversation_id, message_id, visitor_id,
		rating, comment, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (merchant_id, conversation_id, message_id) DO UPDATE SET rating = excluded.rating,
		comment = excluded.comment, updated_at = MAX(answer_ratings.updated_at, excluded.updated_at)
		WHERE answer_ratings.rating <> excluded.rating OR answer_ratings.comment <> excluded.comment
		RETURNING created_at`,
		r.MerchantID, r.ConversationID, r.MessageID, r.VisitorID, r.Rating, r.Comment,
		storeutil.Millis(r.CreatedAt), storeutil.Millis(r.UpdatedAt)), "message "+r.MessageID)
}

// SaveSatisfaction stores the rating of a conversation, or replaces the score and comment of the stored one when
// either differs, and returns the stored one's creation time; no row returned is nothing changed.
func (tx writeTx) SaveSatisfaction(ctx context.Context, s store.Satisfaction) (time.Time, bool, error) {
	return saved(tx.QueryRowContext(ctx, `INSERT INTO conversation_ratings (merchant_id, conversation_id, visitor_id, score,
		comment, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (merchant_id, conversation_id) DO UPDATE SET score = excluded.score, comment = excluded.comment,
		updated_at = MAX(conversation_ratings.updated_at, excluded.updated_at)
		WHERE conversation_ratings.score <> excluded.score OR conversation_ratings.comment <> excluded.comment
		RETURNING created_at`,
		s.MerchantID, s.ConversationID, s.VisitorID, s.Score, s.Comment,
		storeutil.Millis(s.CreatedAt), storeutil.Millis(s.UpdatedAt)), "conversation "+s.ConversationID)
}

// saved reads the creation time an upsert of a rating returned.
func saved(row *sql.Row, what string) (time.Time, bool, error) {
	var created int64
	switch err := row.Scan(&created); {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("saving the rating of %s: %w", what, err)
	}
	return storeutil.FromMillis(created), true, nil
}

// SaveReviewFix records when the merchant dealt with a question, replacing an earlier record.
func (tx writeTx) SaveReviewFix(ctx context.Context, f store.ReviewFix) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO review_fixes (merchant_id, question, knowledge_id, fixed_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (merchant_id, question) DO UPDATE SET knowledge_id = excluded.knowledge_id, fixed_at = excluded.fixed_at`,
		f.MerchantID, f.Question, f.KnowledgeID, storeutil.Millis(f.FixedAt))
	if err != nil {
		return fmt.Errorf("recording the fix of a question: %w", err)
	}
	return nil
}
