package server

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/contact"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	maxLeadBody         = 16 << 10
	maxLeadNameRunes    = 200
	maxLeadMessageRunes = 2000
)

// leadRequest is the contact form: what a visitor leaves when the bot could not help.
type leadRequest struct {
	Name           string  `json:"name"`
	Email          string  `json:"email"`
	Phone          string  `json:"phone"`
	Message        string  `json:"message"`
	Consent        *bool   `json:"consent"`
	ConversationID *string `json:"conversation_id"`
}

type leadJSON struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	VisitorID      string    `json:"visitor_id,omitempty"`
	Name           string    `json:"name"`
	Email          string    `json:"email"`
	Phone          string    `json:"phone"`
	Message        string    `json:"message"`
	Consent        bool      `json:"consent"`
	Source         string    `json:"source"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func toLeadJSON(l store.Lead) leadJSON {
	return leadJSON{
		ID: l.ID, ConversationID: l.ConversationID, VisitorID: l.VisitorID, Name: l.Name, Email: l.Email,
		Phone: l.Phone, Message: l.Message, Consent: l.Consent, Source: l.Source, CreatedAt: l.CreatedAt.UTC(),
		UpdatedAt: l.UpdatedAt.UTC(),
	}
}

// createLead takes the contact form: 201 with a new lead, 200 when it completed the visitor's lead of the
// conversation.
func (s *Server) createLead(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	var req leadRequest
	if err := decodeJSON(w, r, maxLeadBody, &req); err != nil {
		return err
	}
	c, conversationID, err := validateLead(req)
	if err != nil {
		return err
	}
	visitor, err := visitorID(r)
	if err != nil {
		return err
	}
	if c, ok := callerOf(r); ok && c.key.Type == tenant.KeyPublishable {
		if err := s.admitLeadForm(w, r, m, visitor); err != nil {
			return err
		}
	}
	res, err := s.chat.SaveLead(r.Context(), m, chat.LeadForm{Contact: c, ConversationID: conversationID, VisitorID: visitor})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toLeadJSON(res.Lead))
	return nil
}

// validateLead checks a contact form: an email address or a phone number, the visitor's consent, and lengths.
func validateLead(req leadRequest) (store.Contact, string, error) {
	fail := func(format string, args ...any) (store.Contact, string, error) {
		return store.Contact{}, "", newError(http.StatusUnprocessableEntity, codeValidationFailed, format, args...)
	}
	c := store.Contact{Name: strings.TrimSpace(req.Name), Message: strings.TrimSpace(req.Message)}
	email, phone := strings.TrimSpace(req.Email), strings.TrimSpace(req.Phone)
	switch {
	case !utf8.ValidString(c.Name) || utf8.RuneCountInString(c.Name) > maxLeadNameRunes:
		return fail("name must be text of at most %d characters", maxLeadNameRunes)
	case !utf8.ValidString(c.Message) || utf8.RuneCountInString(c.Message) > maxLeadMessageRunes:
		return fail("message must be text of at most %d characters", maxLeadMessageRunes)
	case email == "" && phone == "":
		return fail("give an email address or a phone number")
	case req.Consent == nil || !*req.Consent:
		return fail("consent must be true: the visitor agrees to be contacted")
	}
	c.Consent = true
	if email != "" {
		e, ok := contact.Email(email)
		if !ok {
			return fail("email is not an email address")
		}
		c.Email = e
	}
	if phone != "" {
		p, ok := contact.Phone(phone)
		if !ok {
			return fail("phone must be 7 to 15 digits, optionally with a leading + and spaces, dots, dashes or parentheses")
		}
		c.Phone = p
	}
	var conversationID string
	if req.ConversationID != nil {
		conversationID = *req.ConversationID
		if !conversationIDPattern.MatchString(conversationID) {
			return fail("conversation_id must be 1 to 128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit")
		}
	}
	return c, conversationID, nil
}

// visitorID reads the optional X-Visitor-ID header.
func visitorID(r *http.Request) (string, error) {
	v := r.Header.Get(headerVisitorID)
	if len(v) > maxVisitorIDBytes || !utf8.ValidString(v) {
		return "", newError(http.StatusBadRequest, codeInvalidRequest, "X-Visitor-ID must be at most %d bytes of text", maxVisitorIDBytes)
	}
	return v, nil
}

func (s *Server) listLeads(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	var f store.LeadFilter
	if f.Limit, f.Cursor, err = pageParams(q); err != nil {
		return err
	}
	if f.From, f.To, err = timeRange(q); err != nil {
		return err
	}
	if v := q.Get("conversation_id"); v != "" {
		if !conversationIDPattern.MatchString(v) {
			return newError(http.StatusBadRequest, codeInvalidRequest, "conversation_id is not a conversation ID")
		}
		f.ConversationID = v
	}
	leads, next, err := s.store.ListLeads(r.Context(), m.MerchantID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(leadsJSON(leads), next))
	return nil
}

func leadsJSON(leads []store.Lead) []leadJSON {
	out := make([]leadJSON, len(leads))
	for i, l := range leads {
		out[i] = toLeadJSON(l)
	}
	return out
}
