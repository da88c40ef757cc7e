package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	err := s.write(ctx, func(tx pgx.Tx) error {
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

// saveLead creates the lead of key with the contact, or merges the contact into the existing one, which it locks
// first so that two replicas completing one lead at once do not lose a field. It reports whether it created the
// lead and whether anything changed, and marks the conversation as having a lead.
func saveLead(ctx context.Context, tx pgx.Tx, key leadKey, id, source string, c store.Contact, at time.Time) (store.Lead, bool, bool, error) {
	at = stamp(at)
	if key.conversationID != "" {
		// Insert-or-nothing first, so that a lead created concurrently is found by the locking read below.
		l := store.Lead{ID: id, MerchantID: key.merchantID, ConversationID: key.conversationID, VisitorID: key.visitorID,
			Contact: c, Source: source, CreatedAt: at, UpdatedAt: at}
		tag, err := tx.Exec(ctx, `INSERT INTO leads (`+leadColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
			ON CONFLICT (merchant_id, conversation_id, visitor_id) WHERE conversation_id <> '' DO NOTHING`,
			l.MerchantID, l.ID, l.ConversationID, l.VisitorID, l.Name, l.Email, l.Phone, l.Message, l.Consent, l.Source, at)
		if err != nil {
			return store.Lead{}, false, false, fmt.Errorf("inserting lead %s: %w", id, err)
		}
		if tag.RowsAffected() == 1 {
			return l, true, true, markLead(ctx, tx, key)
		}
		old, err := scanLead(tx.QueryRow(ctx, `SELECT `+leadColumns+` FROM leads
			WHERE merchant_id = $1 AND conversation_id = $2 AND visitor_id = $3 FOR UPDATE`,
			key.merchantID, key.conversationID, key.visitorID))
		if err != nil {
			return store.Lead{}, false, false, err
		}
		l, changed := storeutil.MergeContact(old, c)
		if !changed {
			return l, false, false, nil
		}
		if at.After(l.UpdatedAt) {
			l.UpdatedAt = at
		}
		_, err = tx.Exec(ctx, `UPDATE leads SET name = $1, email = $2, phone = $3, message = $4, consent = $5,
			updated_at = $6 WHERE merchant_id = $7 AND id = $8`,
			l.Name, l.Email, l.Phone, l.Message, l.Consent, l.UpdatedAt, l.MerchantID, l.ID)
		if err != nil {
			return store.Lead{}, false, false, fmt.Errorf("updating lead %s: %w", l.ID, err)
		}
		return l, false, true, nil
	}
	l := store.Lead{ID: id, MerchantID: key.merchantID, VisitorID: key.visitorID, Contact: c, Source: source,
		CreatedAt: at, UpdatedAt: at}
	_, err := tx.Exec(ctx, `INSERT INTO leads (`+leadColumns+`) VALUES ($1, $2, '', $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		l.MerchantID, l.ID, l.VisitorID, l.Name, l.Email, l.Phone, l.Message, l.Consent, l.Source, at)
	if err != nil {
		return store.Lead{}, false, false, fmt.Errorf("inserting lead %s: %w", id, err)
	}
	return l, true, true, nil
}

// markLead marks the lead's conversation as having a lead.
func markLead(ctx context.Context, tx pgx.Tx, key leadKey) error {
	_, err := tx.Exec(ctx, `UPDATE conversations SET has_lead = TRUE WHERE merchant_id = $1 AND id = $2 AND NOT has_lead`,
		key.merchantID, key.conversationID)
	if err != nil {
		return fmt.Errorf("marking conversation %s: %w", key.conversationID, err)
	}
	return nil
}

// scanLead reads leadColumns; no row is store.ErrNotFound.
func scanLead(row pgx.Row) (store.Lead, error) {
	var l store.Lead
	err := row.Scan(&l.MerchantID, &l.ID, &l.ConversationID, &l.VisitorID, &l.Name, &l.Email, &l.Phone, &l.Message,
		&l.Consent, &l.Source, &l.CreatedAt, &l.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Lead{}, store.ErrNotFound
	}
	if err != nil {
		return store.Lead{}, fmt.Errorf("reading lead: %w", err)
	}
	l.CreatedAt, l.UpdatedAt = l.CreatedAt.UTC(), l.UpdatedAt.UTC()
	return l, nil
}

// ListLeads returns a page of the merchant's leads, newest first, and the next page's cursor.
func (s *Store) ListLeads(ctx context.Context, merchantID string, f store.LeadFilter) ([]store.Lead, string, error) {
	var p params
	conds := []string{"merchant_id = " + p.add(merchantID)}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindLeads, merchantID)
		if err != nil {
			return nil, "", fmt.Errorf("listing leads: %w", err)
		}
		conds = append(conds, "(created_at, id) < ("+p.add(storeutil.FromMillis(cur.CreatedAt))+"::timestamptz, "+p.add(cur.ID)+"::text)")
	}
	conds = timeBounds(conds, &p, "created_at", f.From, f.To)
	if f.ConversationID != "" {
		conds = append(conds, "conversation_id = "+p.add(f.ConversationID))
	}
	size := storeutil.PageSize(f.Limit)
	list, err := queryList(ctx, s.pool, `SELECT `+leadColumns+` FROM leads WHERE `+strings.Join(conds, " AND ")+`
		ORDER BY created_at DESC, id DESC LIMIT `+p.add(size+1), p, scanLead)
	if err != nil {
		return nil, "", fmt.Errorf("listing leads: %w", err)
	}
	page, next := storeutil.Page(list, size, storeutil.KindLeads, merchantID, func(l store.Lead) (time.Time, string) { return l.CreatedAt, l.ID })
	return page, next, nil
}

// timeBounds adds from <= column < to to a WHERE clause; zero times are unbounded.
func timeBounds(conds []string, p *params, column string, from, to time.Time) []string {
	if !from.IsZero() {
		conds = append(conds, column+" >= "+p.add(stamp(from)))
	}
	if !to.IsZero() {
		conds = append(conds, column+" < "+p.add(stamp(to)))
	}
	return conds
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryList runs a query and reads every row with scan.
func queryList[T any](ctx context.Context, q querier, query string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
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
