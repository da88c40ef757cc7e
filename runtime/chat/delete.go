package chat

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// deleteConversation deletes one of the merchant's conversations with everything that belongs to it (its
// messages and their citations, its leads, and the outbox events, delivery payloads and attempts of both), in
// one write, and returns how many rows it deleted. Another merchant's conversation, or one that does not exist,
// is store.ErrNotFound, and nothing is deleted.
func deleteConversation(ctx context.Context, st store.Store, merchantID, id string) (int64, error) {
	return deleteRecord(ctx, st, "conversation", merchantID, id, store.Tx.DeleteConversation)
}

// deleteLead deletes one of the merchant's leads with its outbox events, delivery payloads and attempts, in one
// write, and returns how many rows it deleted; its conversation stays. Another merchant's lead, or one that does
// not exist, is store.ErrNotFound, and nothing is deleted.
func deleteLead(ctx context.Context, st store.Store, merchantID, id string) (int64, error) {
	return deleteRecord(ctx, st, "lead", merchantID, id, store.Tx.DeleteLead)
}

// deleteRecord runs one per-record deletion of the store (which follows the store's map of personal data) in
// its own transaction.
func deleteRecord(ctx context.Context, st store.Store, what, merchantID, id string,
	del func(store.Tx, context.Context, string, string) (int64, error)) (int64, error) {
	if merchantID == "" {
		return 0, fmt.Errorf("deleting a %s: no merchant ID", what)
	}
	if id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		// No record has such an ID, and PostgreSQL would refuse it as a parameter: not found, whoever asks.
		return 0, fmt.Errorf("deleting a %s of merchant %s: %w", what, merchantID, store.ErrNotFound)
	}
	var rows int64
	err := st.Write(ctx, func(tx store.Tx) error {
		var err error
		rows, err = del(tx, ctx, merchantID, id)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("deleting %s %s of merchant %s: %w", what, id, merchantID, err)
	}
	return rows, nil
}

// DeleteConversation deletes one of the merchant's conversations; see the function deleteConversation. The log
// line counts the rows and names no content.
func (s *Service) DeleteConversation(ctx context.Context, m *tenant.Bundle, id string) error {
	rows, err := deleteConversation(ctx, s.store, m.MerchantID, id)
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "deleted a conversation", "merchant", m.MerchantID, "conversation", id, "rows", rows)
	return nil
}

// DeleteLead deletes one of the merchant's leads; see the function deleteLead. The log line counts the rows and
// names no content.
func (s *Service) DeleteLead(ctx context.Context, m *tenant.Bundle, id string) error {
	rows, err := deleteLead(ctx, s.store, m.MerchantID, id)
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "deleted a lead", "merchant", m.MerchantID, "lead", id, "rows", rows)
	return nil
}
