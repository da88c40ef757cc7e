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

// RecordExchange stores a visitor message and its reply, creating and counting the conversation if it is new.
func (s *Store) RecordExchange(ctx context.Context, ex store.Exchange) (store.ExchangeResult, error) {
	if err := storeutil.ValidateExchange(ex); err != nil {
		return store.ExchangeResult{}, fmt.Errorf("recording exchange: %w", err)
	}
	var res store.ExchangeResult
	err := s.write(ctx, func(tx pgx.Tx) error {
		created, err := upsertConversation(ctx, tx, ex)
		if err != nil {
			return err
		}
		res = store.ExchangeResult{Created: created}
		if err := insertMessages(ctx, tx, ex); err != nil {
			return err
		}
		if err := countCitations(ctx, tx, ex.MerchantID, ex.Answer.Sources); err != nil {
			return err
		}
		var happened []storeutil.EventData
		if created {
			happened = append(happened, storeutil.ConversationCreated(ex))
		}
		if ex.Contact != nil {
			l, leadCreated, changed, err := saveLead(ctx, tx, leadKey{ex.MerchantID, ex.ConversationID, ex.VisitorID},
				ex.LeadID, store.LeadFromChat, *ex.Contact, ex.Question.CreatedAt)
			if err != nil {
				return err
			}
			res.Lead = &l
			if changed {
				happened = append(happened, storeutil.LeadSaved(l, leadCreated))
			}
		}
		events, err := storeutil.Events(ex.MerchantID, ex.Outbox, happened...)
		if err != nil {
			return err
		}
		res.Deliveries, err = writeEvents(ctx, tx, ex.MerchantID, events)
		return err
	})
	if err != nil {
		return store.ExchangeResult{}, fmt.Errorf("recording exchange in conversation %s: %w", ex.ConversationID, err)
	}
	return res, nil
}

// upsertConversation creates the exchange's conversation, claiming a slot of the month's ceiling, or counts the
// exchange in the existing one. It reports whether it created the conversation. A first exchange sent twice at
// once waits on the other's insert, so exactly one creates the conversation. A refused slot leaves the
// conversation inserted: the caller's transaction is rolled back on the error.
func upsertConversation(ctx context.Context, tx pgx.Tx, ex store.Exchange) (bool, error) {
	unanswered := 0
	if !ex.Answer.Answered {
		unanswered = 1
	}
	var count int
	err := tx.QueryRow(ctx, `
		INSERT INTO conversations AS c
			(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered)
		VALUES ($1, $2, $3, $4, GREATEST($4::timestamptz, $5::timestamptz), $6, 2, $7)
		ON CONFLICT (merchant_id, id) DO UPDATE SET message_count = c.message_count + 2,
			unanswered = c.unanswered + excluded.unanswered, updated_at = GREATEST(c.updated_at, excluded.updated_at)
		RETURNING message_count`,
		ex.MerchantID, ex.ConversationID, ex.VisitorID, stamp(ex.Question.CreatedAt), stamp(ex.Answer.CreatedAt),
		ex.Question.Text, unanswered).Scan(&count)
	if err != nil {
		return false, fmt.Errorf("recording conversation: %w", err)
	}
	if count != 2 { // an existing conversation: it had messages already
		return false, nil
	}
	return true, claimMonthlySlot(ctx, tx, ex.MerchantID, storeutil.Month(ex.Question.CreatedAt), ex.MonthlyLimit)
}

// claimMonthlySlot adds one to the merchant's count for month, or returns store.ErrQuotaExceeded when the count
// already is at limit (limit 0: no ceiling). The upsert locks the counter row and evaluates its condition on the
// latest committed count, so concurrent claims, from any replica, never pass the limit.
func claimMonthlySlot(ctx context.Context, tx pgx.Tx, merchantID, month string, limit int) error {
	tag, err := tx.Exec(ctx, `
		INSERT INTO monthly_conversations AS mc (merchant_id, month, count) VALUES ($1, $2, 1)
		ON CONFLICT (merchant_id, month) DO UPDATE SET count = mc.count + 1
		WHERE $3::integer = 0 OR mc.count < $3::integer`,
		merchantID, month, limit)
	if err != nil {
		return fmt.Errorf("counting conversation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrQuotaExceeded
	}
	return nil
}

// insertMessages inserts the exchange's two messages.
func insertMessages(ctx context.Context, tx pgx.Tx, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, err := storeutil.EncodeSources(q.Sources)
	if err != nil {
		return err
	}
	aSources, err := storeutil.EncodeSources(a.Sources)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO messages
			(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered)
		VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8, $9), ($1, $2, $10, $11, $12, '', $3, $13, $14, $15)`,
		ex.MerchantID, ex.ConversationID, q.ID, string(store.RoleVisitor), q.Text, storeutil.NormalizeQuestion(q.Text),
		stamp(q.CreatedAt), qSources, q.Answered,
		a.ID, string(store.RoleAssistant), a.Text, stamp(a.CreatedAt), aSources, a.Answered)
	if err != nil {
		return fmt.Errorf("inserting messages %s and %s: %w", q.ID, a.ID, err)
	}
	return nil
}

// countCitations increments the use count of each knowledge item the sources cite. The rows are locked in ID
// order, so that concurrent exchanges citing the same items in another order cannot deadlock.
func countCitations(ctx context.Context, tx pgx.Tx, merchantID string, sources []store.Source) error {
	ids := storeutil.CitedIDs(sources)
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `
		UPDATE knowledge k SET use_count = k.use_count + 1
		FROM (SELECT id FROM knowledge WHERE merchant_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE) l
		WHERE k.merchant_id = $1 AND k.id = l.id`, merchantID, ids)
	if err != nil {
		return fmt.Errorf("counting citations: %w", err)
	}
	return nil
}

// ConversationsThisMonth returns how many conversations the merchant started in the UTC month of now.
func (s *Store) ConversationsThisMonth(ctx context.Context, merchantID string, now time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count FROM monthly_conversations WHERE merchant_id = $1 AND month = $2`,
		merchantID, storeutil.Month(now)).Scan(&n)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("counting conversations of the month: %w", err)
	}
	return n, nil
}

// ConversationExists reports whether the merchant has a conversation with this ID.
func (s *Store) ConversationExists(ctx context.Context, merchantID, id string) (bool, error) {
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM conversations WHERE merchant_id = $1 AND id = $2)`,
		merchantID, id).Scan(&exists)
	if err != nil {
		return false, fmt.Errorf("looking up conversation %s: %w", id, err)
	}
	return exists, nil
}

const conversationColumns = `c.merchant_id, c.id, c.visitor_id, c.created_at, c.updated_at, c.message_count,
	c.first_message, c.unanswered, c.has_lead`

// GetConversation returns a conversation and its messages, oldest first, or store.ErrNotFound.
func (s *Store) GetConversation(ctx context.Context, merchantID, id string) (store.Conversation, []store.Message, error) {
	var (
		c    store.Conversation
		msgs []store.Message
	)
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		row := tx.QueryRow(ctx, `SELECT `+conversationColumns+`
			FROM conversations c WHERE c.merchant_id = $1 AND c.id = $2`, merchantID, id)
		if c, err = scanConversation(row); err != nil {
			return err
		}
		msgs, err = messages(ctx, tx, merchantID, id)
		return err
	})
	if err != nil {
		return store.Conversation{}, nil, fmt.Errorf("getting conversation %s: %w", id, err)
	}
	return c, msgs, nil
}

func messages(ctx context.Context, tx pgx.Tx, merchantID, conversationID string) ([]store.Message, error) {
	rows, err := tx.Query(ctx, `
		SELECT id, role, text, created_at, sources::text, answered FROM messages
		WHERE merchant_id = $1 AND conversation_id = $2 ORDER BY created_at, seq`, merchantID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("listing messages: %w", err)
	}
	defer rows.Close()
	var msgs []store.Message
	for rows.Next() {
		var (
			m             store.Message
			role, sources string
		)
		if err := rows.Scan(&m.ID, &role, &m.Text, &m.CreatedAt, &sources, &m.Answered); err != nil {
			return nil, fmt.Errorf("reading message: %w", err)
		}
		m.Role, m.CreatedAt = store.Role(role), m.CreatedAt.UTC()
		if m.Sources, err = storeutil.DecodeSources(sources); err != nil {
			return nil, fmt.Errorf("reading sources of message %s: %w", m.ID, err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing messages: %w", err)
	}
	return msgs, nil
}

// scanConversation reads conversationColumns; no row is store.ErrNotFound.
func scanConversation(row pgx.Row) (store.Conversation, error) {
	var c store.Conversation
	err := row.Scan(&c.MerchantID, &c.ID, &c.VisitorID, &c.CreatedAt, &c.UpdatedAt, &c.MessageCount, &c.FirstMessage,
		&c.Unanswered, &c.HasLead)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Conversation{}, store.ErrNotFound
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// ListConversations returns a page of the merchant's conversations, newest first, and the next page's cursor.
func (s *Store) ListConversations(ctx context.Context, merchantID string, f store.ConversationFilter) ([]store.Conversation, string, error) {
	where, args, err := conversationFilter(merchantID, f)
	if err != nil {
		return nil, "", fmt.Errorf("listing conversations: %w", err)
	}
	size := storeutil.PageSize(f.Limit)
	rows, err := s.pool.Query(ctx, `SELECT `+conversationColumns+` FROM conversations c
		WHERE `+where+` ORDER BY c.created_at DESC, c.id DESC LIMIT `+args.add(size+1), args...)
	if err != nil {
		return nil, "", fmt.Errorf("listing conversations: %w", err)
	}
	defer rows.Close()
	var list []store.Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, "", fmt.Errorf("listing conversations: %w", err)
		}
		list = append(list, c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("listing conversations: %w", err)
	}
	if len(list) <= size {
		return list, "", nil
	}
	list = list[:size]
	last := list[size-1]
	next := storeutil.EncodeCursor(storeutil.Cursor{Kind: storeutil.KindConversations, MerchantID: merchantID,
		CreatedAt: storeutil.Millis(last.CreatedAt), ID: last.ID})
	return list, next, nil
}

// conversationFilter builds the WHERE clause (over conversations c) and its arguments for a listing.
func conversationFilter(merchantID string, f store.ConversationFilter) (string, params, error) {
	var p params
	conds := []string{"c.merchant_id = " + p.add(merchantID)}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindConversations, merchantID)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(c.created_at, c.id) < ("+p.add(storeutil.FromMillis(cur.CreatedAt))+"::timestamptz, "+
			p.add(cur.ID)+"::text)")
	}
	if !f.From.IsZero() {
		conds = append(conds, "c.created_at >= "+p.add(stamp(f.From)))
	}
	if !f.To.IsZero() {
		conds = append(conds, "c.created_at < "+p.add(stamp(f.To)))
	}
	if f.HasLead != nil {
		conds = append(conds, "c.has_lead = "+p.add(*f.HasLead))
	}
	if f.Query != "" {
		conds = append(conds, `EXISTS (SELECT 1 FROM messages m
			WHERE m.merchant_id = c.merchant_id AND m.conversation_id = c.id AND `+containsFold("m.text", p.add(f.Query))+`)`)
	}
	return strings.Join(conds, " AND "), p, nil
}
