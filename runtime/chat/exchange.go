package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
)

// RecordExchange stores a visitor's message and the assistant's reply in one transaction. When the conversation
// does not exist for the merchant it is created and counted against the month of ex.Question.CreatedAt (UTC);
// with ex.MonthlyLimit > 0 and the month's count already at the limit, nothing is written and
// store.ErrQuotaExceeded is returned. Existing conversations always go on. Each knowledge item an answer cites
// has its use count incremented; the items a reply without an answer suggests are no use of them. A contact in
// the exchange creates or completes the visitor's lead of the conversation, and the events (conversation.created,
// lead.created or lead.updated) go to the outbox in the same transaction.
func RecordExchange(ctx context.Context, st store.Store, ex store.Exchange) (store.ExchangeResult, error) {
	return recordExchange(ctx, st.WriteExchange, ex, nil)
}

// recordExchange is RecordExchange through write, with then, when not nil, run in the transaction after the
// exchange's statements (its deliveries counted with the exchange's): a handoff's status change and events.
// Its conversation.created event then says the conversation waits for a person.
func recordExchange(ctx context.Context, write func(context.Context, func(store.Tx) error) error, ex store.Exchange,
	then func(tx store.Tx, created bool) (int, error)) (store.ExchangeResult, error) {
	if err := validateExchange(ex); err != nil {
		return store.ExchangeResult{}, fmt.Errorf("recording exchange: %w", err)
	}
	status := store.StatusBot
	if then != nil {
		status = store.StatusWaiting
	}
	var res store.ExchangeResult
	err := write(ctx, func(tx store.Tx) error {
		res = store.ExchangeResult{}
		created, err := tx.UpsertConversation(ctx, ex)
		if err != nil {
			return err
		}
		res.Created = created
		var happened []event.Happened
		if created {
			happened = append(happened, event.ConversationStarted(ex, status))
		}
		if err := tx.InsertMessages(ctx, ex); err != nil {
			return err
		}
		if ex.Tokens > 0 {
			if err := tx.AddMonthlyTokens(ctx, ex.MerchantID, ex.Question.CreatedAt, ex.Tokens); err != nil {
				return err
			}
		}
		if ids := citedIDs(ex.Answer.Sources); len(ids) > 0 && ex.Answer.Answered {
			if err := tx.CountCitations(ctx, ex.MerchantID, ids); err != nil {
				return err
			}
		}
		if ex.Contact != nil {
			key := leadKey{ex.MerchantID, ex.ConversationID, ex.VisitorID}
			l, leadCreated, changed, err := saveLead(ctx, tx, key, ex.LeadID, store.LeadFromChat, *ex.Contact, ex.Question.CreatedAt)
			if err != nil {
				return err
			}
			res.Lead = &l
			if changed {
				happened = append(happened, event.LeadSaved(l, leadCreated))
			}
		}
		if res.Deliveries, err = writeEvents(ctx, tx, ex.MerchantID, ex.Outbox, happened); err != nil {
			return err
		}
		if then != nil {
			n, err := then(tx, created)
			if err != nil {
				return err
			}
			res.Deliveries += n
		}
		if created {
			// Last: every new conversation of the merchant updates the month's counter row, which stays locked
			// until the commit. store.ErrQuotaExceeded rolls the conversation back.
			return tx.ClaimMonthlySlot(ctx, ex.MerchantID, ex.Question.CreatedAt, ex.MonthlyLimit)
		}
		return nil
	})
	if err != nil {
		return store.ExchangeResult{}, fmt.Errorf("recording exchange in conversation %s: %w", ex.ConversationID, err)
	}
	return res, nil
}

// writeEvents puts the events of one write that have subscribers in the outbox, with one delivery per subscribed
// endpoint, and returns the deliveries written.
func writeEvents(ctx context.Context, tx store.Tx, merchantID string, o store.Outbox, happened []event.Happened) (int, error) {
	events, err := event.Build(merchantID, o, happened...)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events {
		if err := tx.InsertEvent(ctx, merchantID, e); err != nil {
			return 0, fmt.Errorf("writing event %s: %w", e.ID, err)
		}
		for _, ep := range e.Endpoints {
			if err := tx.InsertDelivery(ctx, merchantID, e, ep); err != nil {
				return 0, fmt.Errorf("writing delivery of event %s to %s: %w", e.ID, ep.WebhookID, err)
			}
			n++
		}
	}
	return n, nil
}

// validateExchange checks the identifiers an exchange must carry.
func validateExchange(ex store.Exchange) error {
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
	case ex.Tokens < 0:
		return fmt.Errorf("tokens %d are negative", ex.Tokens)
	case ex.Contact != nil && ex.LeadID == "":
		return errors.New("lead ID is empty")
	}
	return nil
}

// citedIDs returns the distinct knowledge IDs of sources, in order of first citation.
func citedIDs(sources []store.Source) []string {
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
