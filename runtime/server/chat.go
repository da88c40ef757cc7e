package server

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/jsonenc"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	maxChatBody       = 64 << 10
	maxMessageRunes   = 4000
	maxVisitorIDBytes = 128
)

var conversationIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// reservedConversationID reports whether id is the word of a literal path beside /api/v1/conversations/{id}
// (routes.go): a conversation of that ID could never be read there, so a caller may not name one so.
func reservedConversationID(id string) bool {
	return id == "events" || id == "export"
}

// refuseReserved refuses a conversation ID a caller names when it is reserved.
func refuseReserved(id string) error {
	if reservedConversationID(id) {
		return newError(http.StatusBadRequest, codeConversationIDReserved,
			"conversation_id %q is reserved (/api/v1/conversations/%s is another endpoint); name the conversation otherwise or leave conversation_id out", id, id)
	}
	return nil
}

type chatRequest struct {
	Message        *string `json:"message"`
	ConversationID *string `json:"conversation_id"`
	Language       *string `json:"language"`
	// Handoff asks for a person of the merchant's team; without a message, in the conversation named.
	Handoff bool `json:"handoff"`
}

// languagePattern is a BCP 47 language tag as the widget sends navigator.language's, bounded as the CRD's
// locale is.
var languagePattern = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8}){0,4}$`)

type sourceJSON struct {
	KnowledgeID string  `json:"knowledge_id"`
	Title       string  `json:"title"`
	URL         string  `json:"url,omitempty"`
	Snippet     string  `json:"snippet"`
	Score       float64 `json:"score"`
}

type chatResponse struct {
	ConversationID string       `json:"conversation_id"`
	MessageID      string       `json:"message_id"`
	Answer         string       `json:"answer"`
	Sources        []sourceJSON `json:"sources"`
	Answered       bool         `json:"answered"`
	FinishReason   string       `json:"finish_reason,omitempty"`
	Status         store.Status `json:"status"`
	// AgentsAvailable is set when the message asked for a person.
	AgentsAvailable *bool     `json:"agents_available,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
}

// answerWriteMargin is how long past the slowest model's timeout an answer's response stays writable.
const answerWriteMargin = 15 * time.Second

// answer answers a visitor's message (the key checked and the rate applied by s.visitor).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req chatRequest
	if err := decodeJSON(w, r, maxChatBody, &req); err != nil {
		return err
	}
	visitor, err := visitorID(r)
	if err != nil {
		return err
	}
	c, ok := callerOf(r)
	browser := ok && c.key.Type == tenant.KeyPublishable
	if req.Handoff && req.Message == nil {
		return s.requestPerson(w, r, m, req, visitor, browser)
	}
	message, conversationID, err := validateChat(req)
	if err != nil {
		return err
	}
	language, err := validateLanguage(req.Language)
	if err != nil {
		return err
	}
	q := chat.Question{Message: message, ConversationID: conversationID, VisitorID: visitor, Language: language,
		Handoff: req.Handoff}
	if browser {
		q.VisitorOnly = true
		q.AdmitNew = func() error { return s.admitConversation(w, r, m, visitor) }
	}
	// A model may take up to its overall timeout, past the server's write timeout: the answer's response stays
	// writable as long, and a little longer for the offline answer that follows a timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(contract.MaxModelTimeout + answerWriteMargin)) // best effort: not every writer has a deadline
	if wantsEventStream(r) {
		return s.answerStream(w, r, m, q)
	}
	reply, err := s.chat.Answer(r.Context(), m, q)
	if err != nil {
		return s.chatError(m, err)
	}
	s.counted(m, reply)
	buf, _ := s.replyBuffers.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	body, err := replyJSON(reply).appendJSON((*buf)[:0])
	if err != nil {
		return fmt.Errorf("encoding the reply: %w", err)
	}
	writeJSONBody(w, http.StatusOK, body)
	if cap(body) <= 64<<10 { // a rare huge reply is not kept
		*buf = body
		s.replyBuffers.Put(buf)
	}
	return nil
}

// requestPerson answers a request for a person without a message: the widget's button, in a conversation that
// exists.
func (s *Server) requestPerson(w http.ResponseWriter, r *http.Request, m *tenant.Bundle, req chatRequest, visitor string, browser bool) error {
	if req.ConversationID == nil || !conversationIDPattern.MatchString(*req.ConversationID) {
		return newError(http.StatusUnprocessableEntity, codeValidationFailed,
			"handoff without a message needs the conversation_id of the conversation to hand over")
	}
	if err := refuseReserved(*req.ConversationID); err != nil {
		return err
	}
	language, err := validateLanguage(req.Language)
	if err != nil {
		return err
	}
	reply, err := s.chat.RequestPerson(r.Context(), m, chat.HandoffRequest{ConversationID: *req.ConversationID,
		VisitorID: visitor, VisitorOnly: browser, Language: language})
	if err != nil {
		return s.chatError(m, err)
	}
	body, err := replyJSON(reply).appendJSON(nil)
	if err != nil {
		return fmt.Errorf("encoding the reply: %w", err)
	}
	writeJSONBody(w, http.StatusOK, body)
	return nil
}

// chatError explains a failed answer.
func (s *Server) chatError(m *tenant.Bundle, err error) error {
	switch {
	case errors.Is(err, store.ErrQuotaExceeded):
		return s.quotaExceeded(m)
	case errors.Is(err, chat.ErrConversationLimit):
		return explain(err, chat.ErrConversationLimit, "the merchant's plan allows %d answers and %d model tokens in one "+
			"conversation, and this one has had them; go on in a new one: leave conversation_id out",
			m.Plan.ConversationTurns(), m.Plan.ConversationTokens())
	case errors.Is(err, chat.ErrVisitorLimit):
		return explain(err, chat.ErrVisitorLimit, "the merchant's plan allows a visitor %d answers and %d model tokens "+
			"in the conversations it started in the last 24 hours, and this visitor has had them; try again later",
			m.Plan.VisitorTurns(), m.Plan.VisitorTokens())
	}
	return err
}

// counted counts a reply in the metrics.
func (s *Server) counted(m *tenant.Bundle, reply chat.Reply) {
	if reply.Silent {
		return // the visitor's message, stored for the team: no reply
	}
	s.replies.count(m.MerchantID, reply.Message.Answered, reply.Usage.PromptTokens, reply.Usage.CompletionTokens)
}

// appendJSON appends the response as encoding/json's Encoder writes it, newline included, without its
// reflection: every chat request encodes one.
func (c chatResponse) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"conversation_id":`...)
	b = jsonenc.AppendString(b, c.ConversationID)
	b = append(b, `,"message_id":`...)
	b = jsonenc.AppendString(b, c.MessageID)
	b = append(b, `,"answer":`...)
	b = jsonenc.AppendString(b, c.Answer)
	b = append(b, `,"sources":`...)
	if c.Sources == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
	}
	var err error
	for i, src := range c.Sources {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"knowledge_id":`...)
		b = jsonenc.AppendString(b, src.KnowledgeID)
		b = append(b, `,"title":`...)
		b = jsonenc.AppendString(b, src.Title)
		if src.URL != "" {
			b = append(b, `,"url":`...)
			b = jsonenc.AppendString(b, src.URL)
		}
		b = append(b, `,"snippet":`...)
		b = jsonenc.AppendString(b, src.Snippet)
		b = append(b, `,"score":`...)
		if b, err = jsonenc.AppendFloat(b, src.Score); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	if c.Sources != nil {
		b = append(b, ']')
	}
	b = append(b, `,"answered":`...)
	b = strconv.AppendBool(b, c.Answered)
	if c.FinishReason != "" {
		b = append(b, `,"finish_reason":`...)
		b = jsonenc.AppendString(b, c.FinishReason)
	}
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, string(c.Status))
	if c.AgentsAvailable != nil {
		b = append(b, `,"agents_available":`...)
		b = strconv.AppendBool(b, *c.AgentsAvailable)
	}
	b = append(b, `,"created_at":"`...)
	if b, err = c.CreatedAt.AppendText(b); err != nil { // what Time.MarshalJSON writes between its quotes
		return nil, err
	}
	return append(b, "\"}\n"...), nil
}

// replyJSON is a reply as the chat call answers it. A silent reply (the team has the conversation) has no
// answer: its message ID and time are the visitor's message's.
func replyJSON(reply chat.Reply) chatResponse {
	a := reply.Message
	out := chatResponse{ConversationID: reply.ConversationID, MessageID: a.ID, Answer: a.Text,
		Sources: sourcesJSON(a.Sources), Answered: a.Answered, FinishReason: reply.Cut, Status: reply.Status,
		AgentsAvailable: reply.AgentsAvailable, CreatedAt: a.CreatedAt}
	if reply.Silent {
		out.Answer, out.Answered = "", false
	}
	return out
}

// validateChat checks a decoded chat request's values.
func validateChat(req chatRequest) (message, conversationID string, err error) {
	if req.Message == nil {
		return "", "", newError(http.StatusUnprocessableEntity, codeValidationFailed, "message is required")
	}
	message = strings.TrimSpace(*req.Message)
	switch n := utf8.RuneCountInString(message); {
	case !utf8.ValidString(message):
		return "", "", newError(http.StatusUnprocessableEntity, codeValidationFailed, "message must be valid UTF-8 text")
	case n == 0:
		return "", "", newError(http.StatusUnprocessableEntity, codeValidationFailed, "message must not be empty")
	case n > maxMessageRunes:
		return "", "", newError(http.StatusUnprocessableEntity, codeValidationFailed, "message is %d characters long; at most %d are allowed", n, maxMessageRunes)
	}
	if req.ConversationID != nil {
		conversationID = *req.ConversationID
		if !conversationIDPattern.MatchString(conversationID) {
			return "", "", newError(http.StatusUnprocessableEntity, codeValidationFailed,
				"conversation_id must be 1 to 128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit")
		}
		if err := refuseReserved(conversationID); err != nil {
			return "", "", err
		}
	}
	return message, conversationID, nil
}

// validateLanguage checks the visitor's language of a chat request, which is optional.
func validateLanguage(language *string) (string, error) {
	if language == nil || *language == "" {
		return "", nil
	}
	if !languagePattern.MatchString(*language) {
		return "", newError(http.StatusUnprocessableEntity, codeValidationFailed,
			"language must be a BCP 47 language tag such as fr or pt-BR")
	}
	return *language, nil
}

// quotaExceeded is store.ErrQuotaExceeded with the plan's number, retryable when the next UTC month begins.
func (s *Server) quotaExceeded(m *tenant.Bundle) error {
	now := s.now().UTC()
	nextMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	return &explained{err: store.ErrQuotaExceeded, retryAfter: nextMonth.Sub(now), message: fmt.Sprintf(
		"the merchant's plan allows %d new conversations a month and they are used up; existing conversations go on", m.Plan.MonthlyConversations)}
}

func sourcesJSON(in []store.Source) []sourceJSON {
	out := make([]sourceJSON, len(in))
	for i, src := range in {
		out[i] = sourceJSON{KnowledgeID: src.KnowledgeID, Title: src.Title, URL: src.URL, Snippet: src.Snippet, Score: src.Score}
	}
	return out
}
