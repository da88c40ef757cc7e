package server

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxAuthorRunes bounds the name a team member's message is shown under.
const maxAuthorRunes = 80

// team wraps a handler of the merchant's team: a dashboard owner's ID token (Bearer), as the owner's calls take,
// or the merchant's secret key (X-API-Key), which a helpdesk's integration holds. A publishable key, which every
// visitor of the merchant's pages holds, never reaches the team's conversations.
func (s *Server) team(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error) http.HandlerFunc {
	return s.ownerOrSecretKey(h, "a publishable key cannot reach the team's conversations; use the secret key or an ID token")
}

type teamMessageRequest struct {
	Text   *string `json:"text"`
	Author string  `json:"author"`
}

type teamMessageResponse struct {
	Message      messageJSON      `json:"message"`
	Conversation conversationJSON `json:"conversation"`
}

// postTeamMessage writes a team member's message into a conversation.
func (s *Server) postTeamMessage(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	id, err := conversationPath(r)
	if err != nil {
		return err
	}
	var req teamMessageRequest
	if err := decodeJSON(w, r, maxChatBody, &req); err != nil {
		return err
	}
	if req.Text == nil {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "text is required")
	}
	text, author := strings.TrimSpace(*req.Text), strings.TrimSpace(req.Author)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "text must not be empty")
	case n > maxMessageRunes:
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "text is %d characters long; at most %d are allowed", n, maxMessageRunes)
	case utf8.RuneCountInString(author) > maxAuthorRunes:
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "author is longer than %d characters", maxAuthorRunes)
	}
	msg, c, err := s.chat.PostTeamMessage(r.Context(), m, id, chat.TeamMessage{Text: text, Author: author})
	if err != nil {
		return explain(err, store.ErrNotFound, "no such conversation")
	}
	writeJSON(w, http.StatusCreated, teamMessageResponse{Message: toMessageJSON(msg), Conversation: toConversationJSON(c)})
	return nil
}

// takeOver, release and closeConversation move a conversation.
func (s *Server) takeOver(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	return s.move(w, r, m, s.chat.TakeOver)
}

func (s *Server) release(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	return s.move(w, r, m, s.chat.Release)
}

func (s *Server) closeConversation(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	return s.move(w, r, m, s.chat.Close)
}

func (s *Server) move(w http.ResponseWriter, r *http.Request, m *tenant.Bundle,
	to func(ctx context.Context, m *tenant.Bundle, id string) (store.Conversation, error)) error {
	id, err := conversationPath(r)
	if err != nil {
		return err
	}
	c, err := to(r.Context(), m, id)
	if err != nil {
		return explain(err, store.ErrNotFound, "no such conversation")
	}
	writeJSON(w, http.StatusOK, toConversationJSON(c))
	return nil
}

// conversationPath is the conversation ID of the request's path; one no conversation can have is not found.
func conversationPath(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !conversationIDPattern.MatchString(id) {
		return "", notFound("conversation")
	}
	return id, nil
}

// parseStatus reads the status filter of the conversations' listing.
func parseStatus(v string) (store.Status, error) {
	for _, st := range store.Statuses {
		if string(st) == v {
			return st, nil
		}
	}
	return "", newError(http.StatusBadRequest, codeInvalidRequest, "status must be bot, waiting, agent or closed, not %q", v)
}
