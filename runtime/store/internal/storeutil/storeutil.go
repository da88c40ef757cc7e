// Package storeutil holds the behaviour every store implementation must share so that they pass the same
// conformance suite: page sizes, pagination cursors, question normalisation, month keys and input checks.
package storeutil

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/parley-dev/parley/runtime/store"
)

// Page sizes of the listings.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Listing kinds bound into cursors, so that a cursor of one listing is refused by another.
const (
	KindConversations = "conversations"
	KindKnowledge     = "knowledge"
)

// PageSize turns a filter's Limit into the page size: 0 or less means DefaultLimit, more than MaxLimit means
// MaxLimit.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	default:
		return limit
	}
}

// Cursor is the position after which a listing continues: the creation time (unix milliseconds) and ID of
// the last item returned, bound to a listing kind and a merchant.
type Cursor struct {
	Kind       string
	MerchantID string
	CreatedAt  int64
	ID         string
}

// cursorVersion is the version of the encoded cursor format.
const cursorVersion = 1

type cursorJSON struct {
	V int    `json:"v"`
	K string `json:"k"`
	M string `json:"m"`
	T int64  `json:"t"`
	I string `json:"i"`
}

// EncodeCursor returns the opaque form of c.
func EncodeCursor(c Cursor) string {
	b, err := json.Marshal(cursorJSON{V: cursorVersion, K: c.Kind, M: c.MerchantID, T: c.CreatedAt, I: c.ID})
	if err != nil { // cannot happen: the struct holds only strings and integers
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses s and checks that it was issued for this listing kind and merchant. Any failure is
// store.ErrInvalidCursor.
func DecodeCursor(s, kind, merchantID string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, store.ErrInvalidCursor
	}
	var c cursorJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return Cursor{}, store.ErrInvalidCursor
	}
	if c.V != cursorVersion || c.K != kind || c.M != merchantID || c.I == "" {
		return Cursor{}, store.ErrInvalidCursor
	}
	return Cursor{Kind: c.K, MerchantID: c.M, CreatedAt: c.T, ID: c.I}, nil
}

// Page cuts a listing fetched with one row more than size into the page and the cursor of the next one ("" on
// the last page). key gives an item's creation time and ID.
func Page[T any](list []T, size int, kind, merchantID string, key func(T) (time.Time, string)) ([]T, string) {
	if len(list) <= size {
		return list, ""
	}
	list = list[:size]
	at, id := key(list[size-1])
	return list, EncodeCursor(Cursor{Kind: kind, MerchantID: merchantID, CreatedAt: Millis(at), ID: id})
}

// NormalizeQuestion lower-cases s, removes punctuation and collapses white space, so that the same question
// asked differently is counted once.
func NormalizeQuestion(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsPunct(r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// ContainsFold reports whether needle is a substring of haystack, ignoring case.
func ContainsFold(haystack, needle string) bool {
	return strings.Contains(strings.ToLower(haystack), strings.ToLower(needle))
}

// Month is the key of t's UTC month, "YYYY-MM".
func Month(t time.Time) string {
	return t.UTC().Format("2006-01")
}

// Millis converts t to unix milliseconds.
func Millis(t time.Time) int64 {
	return t.UnixMilli()
}

// FromMillis converts unix milliseconds to a UTC time.
func FromMillis(ms int64) time.Time {
	return time.UnixMilli(ms).UTC()
}

// Day is the UTC date, "YYYY-MM-DD", of unix milliseconds.
func Day(ms int64) string {
	return FromMillis(ms).Format(time.DateOnly)
}

// CitedIDs returns the distinct knowledge IDs of sources, in order of first citation.
func CitedIDs(sources []store.Source) []string {
	seen := make(map[string]bool, len(sources))
	var ids []string
	for _, s := range sources {
		if s.KnowledgeID == "" || seen[s.KnowledgeID] {
			continue
		}
		seen[s.KnowledgeID] = true
		ids = append(ids, s.KnowledgeID)
	}
	return ids
}

// ValidateExchange checks the identifiers an exchange must carry.
func ValidateExchange(ex store.Exchange) error {
	switch {
	case ex.MerchantID == "":
		return errors.New("merchant ID is empty")
	case ex.ConversationID == "":
		return errors.New("conversation ID is empty")
	case ex.Question.ID == "" || ex.Answer.ID == "":
		return errors.New("message ID is empty")
	case ex.Question.ID == ex.Answer.ID:
		return fmt.Errorf("question and answer share the ID %q", ex.Question.ID)
	case ex.MonthlyLimit < 0:
		return fmt.Errorf("monthly limit %d is negative", ex.MonthlyLimit)
	case ex.Contact != nil && ex.LeadID == "":
		return errors.New("lead ID is empty")
	}
	return nil
}

// ValidateKnowledge checks the identifiers a knowledge item must carry.
func ValidateKnowledge(k store.Knowledge) error {
	switch {
	case k.MerchantID == "":
		return errors.New("merchant ID is empty")
	case k.ID == "":
		return errors.New("knowledge ID is empty")
	}
	return nil
}

// Listing kinds of leads and deliveries.
const (
	KindLeads      = "leads"
	KindDeliveries = "deliveries"
)

// ValidateLeadInput checks the identifiers and contact a contact form's lead must carry.
func ValidateLeadInput(in store.LeadInput) error {
	switch {
	case in.MerchantID == "":
		return errors.New("merchant ID is empty")
	case in.ID == "":
		return errors.New("lead ID is empty")
	case in.Email == "" && in.Phone == "":
		return errors.New("a lead needs an email address or a phone number")
	}
	return nil
}

// MergeContact returns the lead with the contact's non-empty fields replacing its own and consent kept once
// given, and whether anything changed.
func MergeContact(l store.Lead, c store.Contact) (store.Lead, bool) {
	before := l.Contact
	for _, f := range []struct {
		dst *string
		src string
	}{{&l.Name, c.Name}, {&l.Email, c.Email}, {&l.Phone, c.Phone}, {&l.Message, c.Message}} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	l.Consent = l.Consent || c.Consent
	return l, l.Contact != before
}

// DeliveryID is the ID of the delivery of an event to a webhook: unique per merchant, and readable.
func DeliveryID(eventID, webhookID string) string {
	return eventID + "-" + webhookID
}

// Event is one event a write produces, ready for the outbox.
type Event struct {
	ID        string
	Type      string
	CreatedAt time.Time
	Payload   []byte
	Endpoints []store.Endpoint
}

// eventJSON is an event's body as webhooks receive it (the Standard Webhooks payload shape: type, timestamp,
// data), with the event's ID and merchant.
type eventJSON struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Timestamp  time.Time `json:"timestamp"`
	MerchantID string    `json:"merchant_id"`
	Data       any       `json:"data"`
}

type conversationEventJSON struct {
	ConversationID string    `json:"conversation_id"`
	VisitorID      string    `json:"visitor_id,omitempty"`
	FirstMessage   string    `json:"first_message"`
	CreatedAt      time.Time `json:"created_at"`
}

type leadEventJSON struct {
	LeadID         string    `json:"lead_id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	VisitorID      string    `json:"visitor_id,omitempty"`
	Name           string    `json:"name,omitempty"`
	Email          string    `json:"email,omitempty"`
	Phone          string    `json:"phone,omitempty"`
	Message        string    `json:"message,omitempty"`
	Consent        bool      `json:"consent"`
	Source         string    `json:"source"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Events builds the events of one write: for each type that happened and has subscribers, in order, the next of
// the outbox's event IDs and the payload. It fails when the outbox has too few IDs.
func Events(merchantID string, o store.Outbox, happened ...EventData) ([]Event, error) {
	var events []Event
	for _, h := range happened {
		endpoints := o.Subscribers[h.Type]
		if len(endpoints) == 0 {
			continue
		}
		if len(events) >= len(o.EventIDs) {
			return nil, fmt.Errorf("the outbox has %d event IDs, fewer than the events to write", len(o.EventIDs))
		}
		id := o.EventIDs[len(events)]
		payload, err := json.Marshal(eventJSON{ID: id, Type: h.Type, Timestamp: h.At.UTC(), MerchantID: merchantID, Data: h.data})
		if err != nil {
			return nil, fmt.Errorf("encoding event %s: %w", h.Type, err)
		}
		events = append(events, Event{ID: id, Type: h.Type, CreatedAt: h.At, Payload: payload, Endpoints: endpoints})
	}
	return events, nil
}

// EventData is an event that happened, before it has an ID.
type EventData struct {
	Type string
	At   time.Time
	data any
}

// ConversationCreated is the conversation.created event of a conversation.
func ConversationCreated(ex store.Exchange) EventData {
	return EventData{Type: store.EventConversationCreated, At: ex.Question.CreatedAt, data: conversationEventJSON{
		ConversationID: ex.ConversationID, VisitorID: ex.VisitorID, FirstMessage: ex.Question.Text,
		CreatedAt: ex.Question.CreatedAt.UTC(),
	}}
}

// LeadSaved is the lead.created or lead.updated event of a lead.
func LeadSaved(l store.Lead, created bool) EventData {
	typ := store.EventLeadUpdated
	if created {
		typ = store.EventLeadCreated
	}
	return EventData{Type: typ, At: l.UpdatedAt, data: leadEventJSON{
		LeadID: l.ID, ConversationID: l.ConversationID, VisitorID: l.VisitorID, Name: l.Name, Email: l.Email,
		Phone: l.Phone, Message: l.Message, Consent: l.Consent, Source: l.Source, CreatedAt: l.CreatedAt.UTC(),
		UpdatedAt: l.UpdatedAt.UTC(),
	}}
}

// sourceJSON is the stored form of a store.Source.
type sourceJSON struct {
	KnowledgeID string  `json:"knowledge_id"`
	Title       string  `json:"title,omitempty"`
	URL         string  `json:"url,omitempty"`
	Snippet     string  `json:"snippet,omitempty"`
	Score       float64 `json:"score"`
}

// EncodeSources returns the stored form of a message's sources: a JSON array, "[]" when there are none.
func EncodeSources(sources []store.Source) (string, error) {
	out := make([]sourceJSON, 0, len(sources))
	for _, s := range sources {
		out = append(out, sourceJSON(s))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encoding sources: %w", err)
	}
	return string(b), nil
}

// DecodeSources parses the stored form of a message's sources; an empty array is nil.
func DecodeSources(text string) ([]store.Source, error) {
	var in []sourceJSON
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		return nil, fmt.Errorf("decoding sources: %w", err)
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]store.Source, 0, len(in))
	for _, s := range in {
		out = append(out, store.Source(s))
	}
	return out, nil
}
