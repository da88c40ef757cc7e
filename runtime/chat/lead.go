package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
)

// saveFormLead stores contact details a visitor sent through the contact form. With a conversation ID, it completes
// the lead of that visitor and conversation if there is one (fields given replace those stored, empty ones keep
// them) and marks the conversation as having a lead; without one it creates a new lead. The lead's event
// (lead.created or lead.updated) goes to the outbox in the same transaction, when anything changed.
func saveFormLead(ctx context.Context, st store.Store, in store.LeadInput) (store.LeadResult, error) {
	if err := validateLeadInput(in); err != nil {
		return store.LeadResult{}, fmt.Errorf("saving lead: %w", err)
	}
	var res store.LeadResult
	err := st.Write(ctx, func(tx store.Tx) error {
		key := leadKey{in.MerchantID, in.ConversationID, in.VisitorID}
		l, created, changed, err := saveLead(ctx, tx, key, in.ID, store.LeadFromForm, in.Contact, in.At)
		if err != nil {
			return err
		}
		res = store.LeadResult{Lead: l, Created: created}
		if !changed {
			return nil
		}
		res.Deliveries, err = writeEvents(ctx, tx, in.MerchantID, in.Outbox, []event.Happened{event.LeadSaved(l, created)})
		return err
	})
	if err != nil {
		return store.LeadResult{}, fmt.Errorf("saving lead of merchant %s: %w", in.MerchantID, err)
	}
	return res, nil
}

// leadKey is what makes a lead unique: one per visitor and conversation. Leads without a conversation are
// never merged.
type leadKey struct {
	merchantID, conversationID, visitorID string
}

// saveLead creates the lead of key with the contact, or merges the contact into the existing one. It reports
// whether it created the lead and whether anything changed, and marks the conversation as having a lead.
//
// The conversation is marked first, before the lead is looked up: every transaction that writes a lead of a
// conversation (an exchange, which starts by counting its messages, or a contact form) locks the conversation
// before the lead, in one order, so that an exchange and a form racing on one conversation cannot deadlock.
func saveLead(ctx context.Context, tx store.Tx, key leadKey, id, source string, c store.Contact, at time.Time) (l store.Lead, created, changed bool, err error) {
	if key.conversationID != "" {
		// The conversation has a lead once this transaction commits: the one found or the one inserted.
		if err := tx.MarkHasLead(ctx, key.merchantID, key.conversationID); err != nil {
			return store.Lead{}, false, false, fmt.Errorf("marking conversation %s: %w", key.conversationID, err)
		}
		old, err := tx.FindLead(ctx, key.merchantID, key.conversationID, key.visitorID)
		switch {
		case err == nil:
			l, changed := mergeContact(old, c)
			if !changed {
				return l, false, false, nil
			}
			l.UpdatedAt = later(at, old.UpdatedAt)
			if err := tx.UpdateLead(ctx, l); err != nil {
				return store.Lead{}, false, false, fmt.Errorf("updating lead %s: %w", l.ID, err)
			}
			return l, false, true, nil
		case !errors.Is(err, store.ErrNotFound):
			return store.Lead{}, false, false, err
		}
	}
	at = at.UTC().Truncate(time.Millisecond)
	l = store.Lead{ID: id, MerchantID: key.merchantID, ConversationID: key.conversationID, VisitorID: key.visitorID,
		Contact: c, Source: source, CreatedAt: at, UpdatedAt: at}
	if err := tx.InsertLead(ctx, l); err != nil {
		return store.Lead{}, false, false, fmt.Errorf("inserting lead %s: %w", l.ID, err)
	}
	return l, true, true, nil
}

// later returns the later of two times, to millisecond precision in UTC: a lead's UpdatedAt never goes back.
func later(a, b time.Time) time.Time {
	a, b = a.UTC().Truncate(time.Millisecond), b.UTC().Truncate(time.Millisecond)
	if b.After(a) {
		return b
	}
	return a
}

// mergeContact returns the lead with the contact's non-empty fields replacing its own and consent kept once
// given, and whether anything changed.
func mergeContact(l store.Lead, c store.Contact) (store.Lead, bool) {
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

// validateLeadInput checks the identifiers and contact a contact form's lead must carry.
func validateLeadInput(in store.LeadInput) error {
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
