package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxFeedbackBody bounds a rating's body: an ID, a rating and a comment of chat.MaxFeedbackCommentRunes.
const maxFeedbackBody = 8 << 10

type feedbackRequest struct {
	MessageID *string `json:"message_id"`
	Rating    *string `json:"rating"`
	Comment   string  `json:"comment"`
}

type feedbackJSON struct {
	ConversationID string `json:"conversation_id"`
	MessageID      string `json:"message_id"`
	Rating         string `json:"rating"`
	Comment        string `json:"comment"`
}

type satisfactionRequest struct {
	ConversationID *string `json:"conversation_id"`
	Score          *int    `json:"score"`
	Comment        string  `json:"comment"`
}

type satisfactionJSON struct {
	ConversationID string `json:"conversation_id"`
	Score          int    `json:"score"`
	Comment        string `json:"comment"`
}

// ratingJSON is an answer's rating in a conversation's detail.
type ratingJSON struct {
	Rating    string    `json:"rating"`
	Comment   string    `json:"comment"`
	UpdatedAt time.Time `json:"updated_at"`
}

// conversationRatingJSON is a conversation's own rating in its detail.
type conversationRatingJSON struct {
	Score     int       `json:"score"`
	Comment   string    `json:"comment"`
	UpdatedAt time.Time `json:"updated_at"`
}

// rateAnswer takes a visitor's thumbs up or down on one of its answers: 200 with the rating as it now stands,
// whether it was new, changed or given again.
func (s *Server) rateAnswer(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req feedbackRequest
	if err := decodeJSON(w, r, maxFeedbackBody, &req); err != nil {
		return err
	}
	if req.MessageID == nil || *req.MessageID == "" {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "message_id is required: the ID of the answer rated")
	}
	if req.Rating == nil {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, `rating is required: "up" or "down"`)
	}
	if !conversationIDPattern.MatchString(*req.MessageID) {
		return notFound("answer of this visitor")
	}
	visitor, err := visitorID(r)
	if err != nil {
		return err
	}
	rating, err := s.chat.RateAnswer(r.Context(), m, chat.AnswerFeedback{MessageID: *req.MessageID, VisitorID: visitor,
		Rating: *req.Rating, Comment: req.Comment})
	if err != nil {
		return feedbackError(err, "no such answer of this visitor")
	}
	writeJSON(w, http.StatusOK, feedbackJSON{ConversationID: rating.ConversationID, MessageID: rating.MessageID,
		Rating: rating.Rating, Comment: rating.Comment})
	return nil
}

// rateConversation takes a visitor's rating of one of its conversations, 1 to 5: 200 with the rating as it now
// stands.
func (s *Server) rateConversation(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req satisfactionRequest
	if err := decodeJSON(w, r, maxFeedbackBody, &req); err != nil {
		return err
	}
	if req.ConversationID == nil || *req.ConversationID == "" {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "conversation_id is required")
	}
	if req.Score == nil {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "score is required: %d to %d",
			store.MinSatisfaction, store.MaxSatisfaction)
	}
	if !conversationIDPattern.MatchString(*req.ConversationID) {
		return notFound("conversation of this visitor")
	}
	visitor, err := visitorID(r)
	if err != nil {
		return err
	}
	sat, err := s.chat.RateConversation(r.Context(), m, chat.ConversationFeedback{ConversationID: *req.ConversationID,
		VisitorID: visitor, Score: *req.Score, Comment: req.Comment})
	if err != nil {
		return feedbackError(err, "no such conversation of this visitor")
	}
	writeJSON(w, http.StatusOK, satisfactionJSON{ConversationID: sat.ConversationID, Score: sat.Score, Comment: sat.Comment})
	return nil
}

// feedbackError words a rating's refusal: what is wrong with it, or notFound for a message or conversation that is
// not the visitor's.
func feedbackError(err error, notFoundMessage string) error {
	if invalid := (*chat.InvalidFeedbackError)(nil); errors.As(err, &invalid) {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", invalid.Reason)
	}
	if errors.Is(err, chat.ErrNoVisitor) {
		return newError(http.StatusBadRequest, codeInvalidRequest, "X-Visitor-ID is required: only a visitor rates, and only its own answers")
	}
	return explain(err, store.ErrNotFound, "%s", notFoundMessage)
}

// ratingsJSON indexes a conversation's answer ratings by message ID, for its detail.
func ratingsJSON(ratings []store.Rating) map[string]*ratingJSON {
	out := make(map[string]*ratingJSON, len(ratings))
	for _, r := range ratings {
		out[r.MessageID] = &ratingJSON{Rating: r.Rating, Comment: r.Comment, UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out
}
