package storeutil

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// VisitorAnswer returns the conversation of the assistant message messageID among the conversations the visitor
// started, or store.ErrNotFound. It reads the visitor's conversations through conversations_by_visitor and their
// messages through messages_by_conversation: message IDs have no index of their own.
func (l Reads) VisitorAnswer(ctx context.Context, merchantID, visitorID, messageID string) (string, error) {
	if visitorID == "" {
		return "", store.ErrNotFound
	}
	w := NewWhere(l.Dialect)
	w.Add("c.merchant_id = ? AND c.visitor_id = ? AND m.id = ?", merchantID, visitorID, messageID)
	w.Add("m.role = ?", string(store.RoleAssistant))
	found, err := QueryList(ctx, l.Query, `SELECT m.conversation_id FROM conversations c
		JOIN messages m ON m.merchant_id = c.merchant_id AND m.conversation_id = c.id WHERE `+w.String(), w.Args, scanString)
	if err != nil {
		return "", fmt.Errorf("finding answer %s of visitor: %w", messageID, err)
	}
	if len(found) == 0 {
		return "", store.ErrNotFound
	}
	return found[0], nil
}

// ConversationRatings returns the ratings of a conversation's answers, oldest first, and its own rating, from one
// snapshot.
func (l Reads) ConversationRatings(ctx context.Context, merchantID, conversationID string) ([]store.Rating, *store.Satisfaction, error) {
	var (
		ratings []store.Rating
		sat     *store.Satisfaction
	)
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		var err error
		if ratings, err = l.ratings(ctx, q, "r.conversation_id", conversationID, merchantID); err != nil {
			return err
		}
		sats, err := l.satisfactions(ctx, q, "s.conversation_id", conversationID, merchantID)
		if len(sats) > 0 {
			sat = &sats[0]
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the ratings of conversation %s: %w", conversationID, err)
	}
	return ratings, sat, nil
}

// VisitorRatings returns every rating of answers and of conversations the visitor gave, oldest first, from one
// snapshot.
func (l Reads) VisitorRatings(ctx context.Context, merchantID, visitorID string) ([]store.Rating, []store.Satisfaction, error) {
	var (
		ratings []store.Rating
		sats    []store.Satisfaction
	)
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		var err error
		if ratings, err = l.ratings(ctx, q, "r.visitor_id", visitorID, merchantID); err != nil {
			return err
		}
		sats, err = l.satisfactions(ctx, q, "s.visitor_id", visitorID, merchantID)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the ratings of a visitor: %w", err)
	}
	return ratings, sats, nil
}

// ratings reads the merchant's answer ratings whose column is value, oldest first.
func (l Reads) ratings(ctx context.Context, q QueryFunc, column, value, merchantID string) ([]store.Rating, error) {
	w := NewWhere(l.Dialect)
	w.Add("r.merchant_id = ? AND "+column+" = ?", merchantID, value)
	return QueryList(ctx, q, `SELECT r.merchant_id, r.conversation_id, r.message_id, r.visitor_id, r.rating, r.comment, `+
		l.Dialect.Millis("r.created_at")+`, `+l.Dialect.Millis("r.updated_at")+` FROM answer_ratings r WHERE `+w.String()+
		` ORDER BY r.created_at, r.message_id`, w.Args, scanRating)
}

// satisfactions reads the merchant's conversation ratings whose column is value, oldest first.
func (l Reads) satisfactions(ctx context.Context, q QueryFunc, column, value, merchantID string) ([]store.Satisfaction, error) {
	w := NewWhere(l.Dialect)
	w.Add("s.merchant_id = ? AND "+column+" = ?", merchantID, value)
	return QueryList(ctx, q, `SELECT s.merchant_id, s.conversation_id, s.visitor_id, s.score, s.comment, `+
		l.Dialect.Millis("s.created_at")+`, `+l.Dialect.Millis("s.updated_at")+` FROM conversation_ratings s WHERE `+w.String()+
		` ORDER BY s.created_at, s.conversation_id`, w.Args, scanSatisfaction)
}

func scanRating(row Scanner) (store.Rating, error) {
	var (
		r                store.Rating
		created, updated int64
	)
	if err := row.Scan(&r.MerchantID, &r.ConversationID, &r.MessageID, &r.VisitorID, &r.Rating, &r.Comment, &created, &updated); err != nil {
		return store.Rating{}, fmt.Errorf("reading rating: %w", err)
	}
	r.CreatedAt, r.UpdatedAt = FromMillis(created), FromMillis(updated)
	return r, nil
}

func scanSatisfaction(row Scanner) (store.Satisfaction, error) {
	var (
		s                store.Satisfaction
		created, updated int64
	)
	if err := row.Scan(&s.MerchantID, &s.ConversationID, &s.VisitorID, &s.Score, &s.Comment, &created, &updated); err != nil {
		return store.Satisfaction{}, fmt.Errorf("reading conversation rating: %w", err)
	}
	s.CreatedAt, s.UpdatedAt = FromMillis(created), FromMillis(updated)
	return s, nil
}

// ReviewMisses returns the answers of conversations created at or after since that the assistant could not give,
// that their visitor rated down or that were given with a measured confidence below lowConfidence, newest first, at most limit, with their questions. It reaches the messages through
// the conversations of the range (conversations_by_created) and finds each question by its answer's reply_to
// among its conversation's messages.
func (l Reads) ReviewMisses(ctx context.Context, merchantID string, since time.Time, lowConfidence float64, limit int) ([]store.Miss, error) {
	w := NewWhere(l.Dialect)
	w.Add("c.merchant_id = ? AND c.created_at >= ? AND a.created_at >= ?", merchantID, since, since)
	w.Add("a.role = ?", string(store.RoleAssistant))
	w.Add("(NOT a.answered OR r.rating = ? OR (a.confidence > 0 AND a.confidence < ?))", store.RatingDown, lowConfidence)
	misses, err := QueryList(ctx, l.Query, `SELECT a.conversation_id, a.id, q.text, q.normalized, a.text, a.sources,
		a.answered, a.confidence, COALESCE(r.rating, ''), COALESCE(r.comment, ''), `+l.Dialect.Millis("a.created_at")+`
		FROM conversations c
		JOIN messages a ON a.merchant_id = c.merchant_id AND a.conversation_id = c.id
		JOIN messages q ON q.merchant_id = a.merchant_id AND q.conversation_id = a.conversation_id AND q.id = a.reply_to
		LEFT JOIN answer_ratings r ON r.merchant_id = a.merchant_id AND r.conversation_id = a.conversation_id
			AND r.message_id = a.id
		WHERE `+w.String()+` ORDER BY a.created_at DESC, a.id DESC LIMIT `+w.Param(limit), w.Args, scanMiss)
	if err != nil {
		return nil, fmt.Errorf("reading the answers that missed: %w", err)
	}
	return misses, nil
}

func scanMiss(row Scanner) (store.Miss, error) {
	var (
		m       store.Miss
		sources string
		at      int64
	)
	if err := row.Scan(&m.ConversationID, &m.MessageID, &m.Question, &m.Normalized, &m.Answer, &sources, &m.Answered,
		&m.Confidence, &m.Rating, &m.Comment, &at); err != nil {
		return store.Miss{}, fmt.Errorf("reading a miss: %w", err)
	}
	src, err := DecodeSources(sources)
	if err != nil {
		return store.Miss{}, fmt.Errorf("reading the sources of message %s: %w", m.MessageID, err)
	}
	m.Sources, m.CreatedAt = src, FromMillis(at)
	return m, nil
}

// ReviewFixes returns the merchant's review fixes.
func (l Reads) ReviewFixes(ctx context.Context, merchantID string) ([]store.ReviewFix, error) {
	w := NewWhere(l.Dialect)
	w.Add("f.merchant_id = ?", merchantID)
	fixes, err := QueryList(ctx, l.Query, `SELECT f.merchant_id, f.question, f.knowledge_id, `+l.Dialect.Millis("f.fixed_at")+`
		FROM review_fixes f WHERE `+w.String()+` ORDER BY f.question`, w.Args, func(row Scanner) (store.ReviewFix, error) {
		var (
			f  store.ReviewFix
			at int64
		)
		if err := row.Scan(&f.MerchantID, &f.Question, &f.KnowledgeID, &at); err != nil {
			return store.ReviewFix{}, fmt.Errorf("reading a review fix: %w", err)
		}
		f.FixedAt = FromMillis(at)
		return f, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the review fixes: %w", err)
	}
	return fixes, nil
}
