package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/contact"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// MaxSubjectVisitorIDBytes bounds the visitor ID a data subject is named by, as the chat bounds the one it is
// sent (X-Visitor-ID).
const MaxSubjectVisitorIDBytes = 128

// The fields a data subject is named by, as SubjectError names them (the API's JSON names).
const (
	FieldVisitorID = "visitor_id"
	FieldEmail     = "email"
	FieldPhone     = "phone"
)

// ErrNoSubject refuses a data subject's request that names nobody: no visitor ID, e-mail address or phone number.
var ErrNoSubject = errors.New("give at least one of visitor_id, email and phone")

// SubjectError is a field that cannot name a data subject.
type SubjectError struct {
	// Field is FieldVisitorID, FieldEmail or FieldPhone.
	Field string
	// Reason says what the field must be, in English.
	Reason string
}

func (e *SubjectError) Error() string { return e.Field + " " + e.Reason }

// ParseSubject checks what names a data subject and returns it as the store compares it: ErrNoSubject when all
// are empty, a *SubjectError for a field no visitor, lead or contact form could hold.
func ParseSubject(visitorID, email, phone string) (store.Subject, error) {
	var s store.Subject
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if visitorID == "" && email == "" && phone == "" {
		return s, ErrNoSubject
	}
	if visitorID != "" {
		if len(visitorID) > MaxSubjectVisitorIDBytes || !utf8.ValidString(visitorID) || strings.ContainsRune(visitorID, 0) {
			return s, &SubjectError{Field: FieldVisitorID, Reason: fmt.Sprintf("must be at most %d bytes of text", MaxSubjectVisitorIDBytes)}
		}
		s.VisitorID = visitorID
	}
	if email != "" {
		e, ok := contact.Email(email)
		if !ok {
			return s, &SubjectError{Field: FieldEmail, Reason: "must be an e-mail address"}
		}
		s.Email = e
	}
	if phone != "" {
		p, ok := contact.Phone(phone)
		if !ok {
			return s, &SubjectError{Field: FieldPhone, Reason: "must be 7 to 15 digits, optionally with a leading + and spaces, dots, dashes or parentheses"}
		}
		s.Phone = p
	}
	return s, nil
}

// SubjectExport receives a data subject's records as ExportSubject reads them.
type SubjectExport struct {
	// Conversation receives each conversation with its messages and the visitor's ratings of its answers and of
	// itself (nil when it has none), oldest first.
	Conversation func(store.Conversation, []store.Message, []store.Rating, *store.Satisfaction) error
	// Lead receives each lead, oldest first, after the conversations.
	Lead func(store.Lead) error
}

// ExportSubject hands out everything the merchant holds about a data subject (store.Reader.SubjectRecords): each
// conversation with its messages and ratings, read one at a time so that the runtime holds one conversation whatever the
// count, then each lead. A conversation deleted while the export runs is left out. It counts against
// MaxExportsPerMerchant (ErrTooManyExports, before anything is handed out); an error of out ends the export and
// is returned.
func (s *Service) ExportSubject(ctx context.Context, m *tenant.Bundle, subject store.Subject, out SubjectExport) error {
	if !s.exports.acquire(m.MerchantID) {
		return ErrTooManyExports
	}
	defer s.exports.release(m.MerchantID)
	data, err := s.store.SubjectRecords(ctx, m.MerchantID, subject)
	if err != nil {
		return err
	}
	for _, c := range data.Conversations {
		conv, msgs, err := s.store.GetConversation(ctx, m.MerchantID, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("exporting a data subject's conversation of merchant %s: %w", m.MerchantID, err)
		}
		ratings, sat, err := s.store.ConversationRatings(ctx, m.MerchantID, c.ID)
		if err != nil {
			return fmt.Errorf("exporting the ratings of a data subject's conversation of merchant %s: %w", m.MerchantID, err)
		}
		if err := out.Conversation(conv, msgs, ratings, sat); err != nil {
			return err
		}
	}
	for _, l := range data.Leads {
		if err := out.Lead(l); err != nil {
			return err
		}
	}
	return nil
}

// Erasure is what an erasure of a data subject's records deleted.
type Erasure struct {
	// ID names the erasure, in its answer and its privacy.erased events.
	ID            string
	Conversations int
	Messages      int
	Leads         int
	// Rows counts the rows deleted from every table (messages, leads, outbox events, deliveries, attempts...).
	Rows int64
}

// maxErasureRounds bounds how often EraseSubject looks again for records written while it erased.
const maxErasureRounds = 3

// eraseSubject deletes everything the merchant holds about a data subject (store.Reader.SubjectRecords): its
// leads, and its conversations with everything that belongs to them (DeleteConversation), in one write with a
// privacy.erased event of the counts to the outbox. A record the subject wrote while it ran is looked for again,
// and erased in a write of its own with an event of its own, up to maxErasureRounds. Another merchant's records
// are never found.
func eraseSubject(ctx context.Context, st store.Store, merchantID string, subject store.Subject, erasureID string,
	o store.Outbox, at time.Time) (Erasure, int, error) {
	if merchantID == "" {
		return Erasure{}, 0, errors.New("erasing a data subject: no merchant ID")
	}
	total, deliveries := Erasure{ID: erasureID}, 0
	for round := range maxErasureRounds {
		data, err := st.SubjectRecords(ctx, merchantID, subject)
		if err != nil {
			return Erasure{}, 0, err
		}
		if round > 0 && len(data.Conversations) == 0 && len(data.Leads) == 0 {
			break
		}
		var e Erasure
		var n int
		err = st.Write(ctx, func(tx store.Tx) error {
			e, n = Erasure{ID: erasureID}, 0
			if err := eraseRecords(ctx, tx, merchantID, data, &e); err != nil {
				return err
			}
			var err error
			n, err = writeEvents(ctx, tx, merchantID, o, []event.Happened{event.SubjectErased(event.Erased{
				ErasureID: erasureID, Conversations: e.Conversations, Messages: e.Messages, Leads: e.Leads}, at)})
			return err
		})
		if err != nil {
			return Erasure{}, 0, fmt.Errorf("erasing a data subject of merchant %s: %w", merchantID, err)
		}
		total.Conversations += e.Conversations
		total.Messages += e.Messages
		total.Leads += e.Leads
		total.Rows += e.Rows
		deliveries += n
		// Each round has its own events: a later round's outbox needs IDs of its own.
		o = freshEventIDs(o)
	}
	return total, deliveries, nil
}

// eraseRecords deletes the subject's leads, then its conversations, counting what each deletion removed; a record
// deleted meanwhile is not counted.
func eraseRecords(ctx context.Context, tx store.Tx, merchantID string, data store.SubjectData, e *Erasure) error {
	for _, l := range data.Leads {
		rows, err := tx.DeleteLead(ctx, merchantID, l.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("deleting lead %s: %w", l.ID, err)
		}
		e.Leads++
		e.Rows += rows
	}
	for _, c := range data.Conversations {
		rows, err := tx.DeleteConversation(ctx, merchantID, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("deleting conversation %s: %w", c.ID, err)
		}
		e.Conversations++
		e.Messages += c.MessageCount
		e.Rows += rows
	}
	return nil
}

// freshEventIDs returns the outbox with new event IDs, as many as it had.
func freshEventIDs(o store.Outbox) store.Outbox {
	fresh := make([]string, len(o.EventIDs))
	for i := range fresh {
		fresh[i] = ids.New("evt_")
	}
	o.EventIDs = fresh
	return o
}

// EraseSubject erases a data subject's records; see the function eraseSubject. The log line counts what was
// erased and names neither the subject nor any content.
func (s *Service) EraseSubject(ctx context.Context, m *tenant.Bundle, subject store.Subject) (Erasure, error) {
	e, deliveries, err := eraseSubject(ctx, s.store, m.MerchantID, subject, ids.New("era_"), Route(m),
		s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return Erasure{}, err
	}
	s.written(deliveries)
	s.log.InfoContext(ctx, "erased a data subject's records", "merchant", m.MerchantID, "erasure", e.ID,
		"conversations", e.Conversations, "messages", e.Messages, "leads", e.Leads, "rows", e.Rows)
	return e, nil
}
