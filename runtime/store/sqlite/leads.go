package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

const leadColumns = `merchant_id, id, conversation_id, visitor_id, name, email, phone, message, consent, source,
	created_at, updated_at`

// SaveLead stores a contact form's lead, updating the visitor's lead of the conversation if there is one.
func (s *Store) SaveLead(ctx context.Context, in store.LeadInput) (store.LeadResult, error) {
	if err := storeutil.ValidateLeadInput(in); err != nil {
		return store.LeadResult{}, fmt.Errorf("saving lead: %w", err)
	}
	var res store.LeadResult
	err := s.write(ctx, func(tx *txn) error {
		l, created, changed, err := saveLead(ctx, tx, leadKey{in.MerchantID, in.ConversationID, in.VisitorID},
			in.ID, store.LeadFromForm, in.Contact, in.At)
		if err != nil {
			return err
		}
		res = store.LeadResult{Lead: l, Created: created}
		if !changed {
			return nil
		}
		events, err := storeutil.Events(in.MerchantID, in.Outbox, storeutil.LeadSaved(l, created))
		if err != nil {
			return err
		}
		res.Deliveries, err = writeEvents(ctx, tx, in.MerchantID, events)
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
func saveLead(ctx context.Context, tx *txn, key leadKey, id, source string, c store.Contact, at time.Time) (store.Lead, bool, bool, error) {
	ms := storeutil.Millis(at)
	if key.conversationID != "" {
		row := tx.QueryRowContext(ctx, `SELECT `+leadColumns+` FROM leads
			WHERE merchant_id = ? AND conversation_id = ? AND visitor_id = ?`, key.merchantID, key.conversationID, key.visitorID)
		old, err := scanLead(row)
		switch {
		case err == nil:
			l, changed := storeutil.MergeContact(old, c)
			if !changed {
				return l, false, false, nil
			}
			l.UpdatedAt = storeutil.FromMillis(max(ms, storeutil.Millis(old.UpdatedAt)))
			_, err := tx.ExecContext(ctx, `UPDATE leads SET name = ?, email = ?, phone = ?, message = ?, consent = ?,
				updated_at = ? WHERE merchant_id = ? AND id = ?`,
				l.Name, l.Email, l.Phone, l.Message, boolInt(l.Consent), storeutil.Millis(l.UpdatedAt), l.MerchantID, l.ID)
			if err != nil {
				return store.Lead{}, false, false, fmt.Errorf("updating lead %s: %w", l.ID, err)
			}
			return l, false, true, nil
		case !errors.Is(err, store.ErrNotFound):
			return store.Lead{}, false, false, err
		}
	}
	l := store.Lead{ID: id, MerchantID: key.merchantID, ConversationID: key.conversationID, VisitorID: key.visitorID,
		Contact: c, Source: source, CreatedAt: storeutil.FromMillis(ms), UpdatedAt: storeutil.FromMillis(ms)}
	_, err := tx.ExecContext(ctx, `INSERT INTO leads (`+leadColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.MerchantID, l.ID, l.ConversationID, l.VisitorID, l.Name, l.Email, l.Phone, l.Message, boolInt(l.Consent),
		l.Source, ms, ms)
	if err != nil {
		return store.Lead{}, false, false, fmt.Errorf("inserting lead %s: %w", l.ID, err)
	}
	if key.conversationID != "" {
		_, err := tx.ExecContext(ctx, `UPDATE conversations SET has_lead = 1 WHERE merchant_id = ? AND id = ?`,
			key.merchantID, key.conversationID)
		if err != nil {
			return store.Lead{}, false, false, fmt.Errorf("marking conversation %s: %w", key.conversationID, err)
		}
	}
	return l, true, true, nil
}

// scanLead reads leadColumns; no row is store.ErrNotFound.
func scanLead(row rowScanner) (store.Lead, error) {
	var (
		l                store.Lead
		created, updated int64
	)
	err := row.Scan(&l.MerchantID, &l.ID, &l.ConversationID, &l.VisitorID, &l.Name, &l.Email, &l.Phone, &l.Message,
		&l.Consent, &l.Source, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Lead{}, store.ErrNotFound
	}
	if err != nil {
		return store.Lead{}, fmt.Errorf("reading lead: %w", err)
	}
	l.CreatedAt, l.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return l, nil
}

// ListLeads returns a page of the merchant's leads, newest first, and the next page's cursor.
func (s *Store) ListLeads(ctx context.Context, merchantID string, f store.LeadFilter) ([]store.Lead, string, error) {
	conds := []string{"merchant_id = ?"}
	args := []any{merchantID}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindLeads, merchantID)
		if err != nil {
			return nil, "", fmt.Errorf("listing leads: %w", err)
		}
		conds = append(conds, "(created_at, id) < (?, ?)")
		args = append(args, cur.CreatedAt, cur.ID)
	}
	conds, args = timeBounds(conds, args, f.From, f.To)
	if f.ConversationID != "" {
		conds = append(conds, "conversation_id = ?")
		args = append(args, f.ConversationID)
	}
	size := storeutil.PageSize(f.Limit)
	list, err := queryList(ctx, s.reader, `SELECT `+leadColumns+` FROM leads WHERE `+strings.Join(conds, " AND ")+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, size+1), scanLead)
	if err != nil {
		return nil, "", fmt.Errorf("listing leads: %w", err)
	}
	page, next := storeutil.Page(list, size, storeutil.KindLeads, merchantID, func(l store.Lead) (time.Time, string) { return l.CreatedAt, l.ID })
	return page, next, nil
}

// timeBounds adds From <= created_at < To to a WHERE clause; zero times are unbounded.
func timeBounds(conds []string, args []any, from, to time.Time) ([]string, []any) {
	if !from.IsZero() {
		conds = append(conds, "created_at >= ?")
		args = append(args, storeutil.Millis(from))
	}
	if !to.IsZero() {
		conds = append(conds, "created_at < ?")
		args = append(args, storeutil.Millis(to))
	}
	return conds, args
}

// queryList runs a query and reads every row with scan.
func queryList[T any](ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args []any, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}
