package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// FindLead returns the lead of a visitor in a conversation, locked until the transaction ends so that two
// replicas completing one lead at once do not lose a field, or store.ErrNotFound. A lead another transaction
// inserts after this finds none makes InsertLead fail, and Write runs the callback again.
func (tx writeTx) FindLead(ctx context.Context, merchantID, conversationID, visitorID string) (store.Lead, error) {
	l, err := scanLead(tx.QueryRow(ctx, `SELECT `+storeutil.LeadColumns+` FROM leads l
		WHERE l.merchant_id = $1 AND l.conversation_id = $2 AND l.visitor_id = $3 FOR UPDATE`,
		merchantID, conversationID, visitorID))
	if err != nil {
		return store.Lead{}, fmt.Errorf("finding lead of visitor %q in conversation %s: %w", visitorID, conversationID, err)
	}
	return l, nil
}

// InsertLead stores a new lead.
func (tx writeTx) InsertLead(ctx context.Context, l store.Lead) error {
	tx.queue("inserting lead "+l.ID, `INSERT INTO leads (merchant_id, id, conversation_id, visitor_id, name, email, phone, message, consent,
		source, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		l.MerchantID, l.ID, l.ConversationID, l.VisitorID, l.Name, l.Email, l.Phone, l.Message, l.Consent, l.Source,
		stamp(l.CreatedAt), stamp(l.UpdatedAt))
	return nil
}

// UpdateLead replaces a lead's contact details and UpdatedAt.
func (tx writeTx) UpdateLead(ctx context.Context, l store.Lead) error {
	tx.queue("updating lead "+l.ID, `UPDATE leads SET name = $1, email = $2, phone = $3, message = $4, consent = $5,
		updated_at = $6 WHERE merchant_id = $7 AND id = $8`,
		l.Name, l.Email, l.Phone, l.Message, l.Consent, stamp(l.UpdatedAt), l.MerchantID, l.ID)
	return nil
}

// MarkHasLead records that a conversation has a lead; a conversation marked already is left as it is.
func (tx writeTx) MarkHasLead(ctx context.Context, merchantID, conversationID string) error {
	tx.queue("marking conversation "+conversationID+" as having a lead", `UPDATE conversations SET has_lead = TRUE WHERE merchant_id = $1 AND id = $2 AND NOT has_lead`,
		merchantID, conversationID)
	return nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryList runs a query and reads every row with scan.
func queryList[T any](ctx context.Context, q querier, query string, args []any, scan func(storeutil.Scanner) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
}
