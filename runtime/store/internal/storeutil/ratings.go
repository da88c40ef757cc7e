package storeutil

import (
	"context"
	"fmt"

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
