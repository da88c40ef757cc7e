package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// MaxFeedbackCommentRunes bounds a visitor's reason for a rating: a sentence or two, as the widget's field asks
// for, not a message.
const MaxFeedbackCommentRunes = 500

// InvalidFeedbackError refuses a rating that is not one: its message says what is wrong, for the visitor's
// client.
type InvalidFeedbackError struct{ Reason string }

func (e *InvalidFeedbackError) Error() string { return "invalid feedback: " + e.Reason }

// ErrNoVisitor refuses a rating without a visitor ID: only a visitor rates, and only its own answers.
var ErrNoVisitor = errors.New("a rating needs the visitor's ID")

// AnswerFeedback is a visitor's rating of one of the answers it was given.
type AnswerFeedback struct {
	MessageID string
	VisitorID string
	// Rating is store.RatingUp or store.RatingDown.
	Rating string
	// Comment is the visitor's reason, optional.
	Comment string
}

// ConversationFeedback is a visitor's rating of one of its conversations.
type ConversationFeedback struct {
	ConversationID string
	VisitorID      string
	// Score is store.MinSatisfaction to store.MaxSatisfaction.
	Score   int
	Comment string
}

// RateAnswer stores a visitor's rating of an assistant message of one of its own conversations; the last rating
// counts. Another visitor's message, a question and a message that does not exist are store.ErrNotFound, alike, so
// that a rating tells nothing of other visitors. A rating that changes something (a new one, another rating or
// comment) writes a feedback.created event in the same transaction; rating again as rated changes nothing.
func (s *Service) RateAnswer(ctx context.Context, m *tenant.Bundle, f AnswerFeedback) (store.Rating, error) {
	comment, err := checkFeedback(f.VisitorID, f.Comment)
	if err != nil {
		return store.Rating{}, err
	}
	if f.Rating != store.RatingUp && f.Rating != store.RatingDown {
		return store.Rating{}, &InvalidFeedbackError{Reason: `rating must be "up" or "down"`}
	}
	conversationID, err := s.store.VisitorAnswer(ctx, m.MerchantID, f.VisitorID, f.MessageID)
	if err != nil {
		return store.Rating{}, fmt.Errorf("rating message %s: %w", f.MessageID, err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	r := store.Rating{MerchantID: m.MerchantID, ConversationID: conversationID, MessageID: f.MessageID,
		VisitorID: f.VisitorID, Rating: f.Rating, Comment: comment, CreatedAt: now, UpdatedAt: now}
	deliveries, err := saveRating(ctx, s.store, r, Route(m))
	if err != nil {
		return store.Rating{}, err
	}
	s.written(deliveries)
	return r, nil
}

// RateConversation stores a visitor's rating of one of its own conversations, 1 to 5; the last rating counts.
// Another visitor's conversation and one that does not exist are store.ErrNotFound. A rating that changes
// something writes a feedback.created event in the same transaction.
func (s *Service) RateConversation(ctx context.Context, m *tenant.Bundle, f ConversationFeedback) (store.Satisfaction, error) {
	comment, err := checkFeedback(f.VisitorID, f.Comment)
	if err != nil {
		return store.Satisfaction{}, err
	}
	if f.Score < store.MinSatisfaction || f.Score > store.MaxSatisfaction {
		return store.Satisfaction{}, &InvalidFeedbackError{Reason: fmt.Sprintf("score must be %d to %d",
			store.MinSatisfaction, store.MaxSatisfaction)}
	}
	visitor, err := s.store.ConversationVisitor(ctx, m.MerchantID, f.ConversationID)
	if err == nil && !startedBy(visitor, f.VisitorID) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Satisfaction{}, fmt.Errorf("rating conversation %s: %w", f.ConversationID, err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	sat := store.Satisfaction{MerchantID: m.MerchantID, ConversationID: f.ConversationID, VisitorID: f.VisitorID,
		Score: f.Score, Comment: comment, CreatedAt: now, UpdatedAt: now}
	deliveries, err := saveSatisfaction(ctx, s.store, sat, Route(m))
	if err != nil {
		return store.Satisfaction{}, err
	}
	s.written(deliveries)
	return sat, nil
}

// saveRating stores a rating of an answer, the last one counting, and when it changed anything writes its
// feedback.created event to the outbox in the same transaction. It returns the deliveries written.
func saveRating(ctx context.Context, st store.Store, r store.Rating, o store.Outbox) (int, error) {
	var deliveries int
	err := st.Write(ctx, func(tx store.Tx) error {
		deliveries = 0
		created, changed, err := tx.SaveRating(ctx, r)
		if err != nil || !changed {
			return err
		}
		stored := r
		stored.CreatedAt = created
		deliveries, err = writeEvents(ctx, tx, r.MerchantID, o, []event.Happened{event.AnswerRated(stored)})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rating message %s: %w", r.MessageID, err)
	}
	return deliveries, nil
}

// saveSatisfaction stores a rating of a conversation, the last one counting, and when it changed anything writes
// its feedback.created event to the outbox in the same transaction. It returns the deliveries written.
func saveSatisfaction(ctx context.Context, st store.Store, sat store.Satisfaction, o store.Outbox) (int, error) {
	var deliveries int
	err := st.Write(ctx, func(tx store.Tx) error {
		deliveries = 0
		created, changed, err := tx.SaveSatisfaction(ctx, sat)
		if err != nil || !changed {
			return err
		}
		stored := sat
		stored.CreatedAt = created
		deliveries, err = writeEvents(ctx, tx, sat.MerchantID, o, []event.Happened{event.ConversationRated(stored)})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rating conversation %s: %w", sat.ConversationID, err)
	}
	return deliveries, nil
}

// checkFeedback checks what every rating carries, the visitor and a comment, and returns the comment trimmed.
func checkFeedback(visitorID, comment string) (string, error) {
	if visitorID == "" {
		return "", ErrNoVisitor
	}
	comment = strings.TrimSpace(comment)
	switch n := utf8.RuneCountInString(comment); {
	case !storable(comment):
		return "", &InvalidFeedbackError{Reason: "comment must be text without NUL characters"}
	case n > MaxFeedbackCommentRunes:
		return "", &InvalidFeedbackError{Reason: fmt.Sprintf("comment must be at most %d characters, not %d",
			MaxFeedbackCommentRunes, n)}
	}
	return comment, nil
}
