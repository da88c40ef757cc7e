package sqlite

import (
	"context"
	"database/sql"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// FindLead returns the lead of a visitor in a conversation, or store.ErrNotFound.
func (tx writeTx) FindLead(ctx context.Context, merchantID, conversationID, visitorID string) (store.Lead, error) {
	return scanLead(tx.QueryRowContext(ctx, `SELECT `+storeutil.LeadColumns+` FROM leads l
		WHERE l.merchant_id = ? AND l.conversation_id = ? AND l.visitor_id = ?`, merchantID, conversationID, visitorID))
}

// InsertLead stores a new lead.
func (tx writeTx) InsertLead(ctx context.Context, l store.Lead) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO leads (merchant_id, id, conversation_id, visitor_id, name, email, phone, message, consent,
		source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.MerchantID, l.ID, l.ConversationID, l.VisitorID, l.Name, l.Email, l.Phone, l.Message, boolInt(l.Consent),
		l.Source, storeutil.Millis(l.CreatedAt), storeutil.Millis(l.UpdatedAt))
	return err
}

// UpdateLead replaces a lead's contact details and UpdatedAt.
func (tx writeTx) UpdateLead(ctx context.Context, l store.Lead) error {
	_, err := tx.ExecContext(ctx, `UPDATE leads SET name = ?, email = ?, phone = ?, message = ?, consent = ?,
		updated_at = ? WHERE merchant_id = ? AND id = ?`,
		l.Name, l.Email, l.Phone, l.Message, boolInt(l.Consent), storeutil.Millis(l.UpdatedAt), l.MerchantID, l.ID)
	return err
}

// MarkHasLead records that a conversation has a lead.
func (tx writeTx) MarkHasLead(ctx context.Context, merchantID, conversationID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE conversations SET has_lead = 1 WHERE merchant_id = ? AND id = ?`,
		merchantID, conversationID)
	return err
}

// queryList runs a query and reads every row with scan.
func queryList[T any](ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args []any, scan func(storeutil.Scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return storeutil.Collect(rows, scan)
}
