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

// RecordExchange stores a visitor message and its reply, creating and counting the conversation if it is new.
func (s *Store) RecordExchange(ctx context.Context, ex store.Exchange) (store.ExchangeResult, error) {
	if err := storeutil.ValidateExchange(ex); err != nil {
		return store.ExchangeResult{}, fmt.Errorf("recording exchange: %w", err)
	}
	var res store.ExchangeResult
	err := s.write(ctx, func(tx *txn) error {
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
// exchange in the existing one, in one statement. It reports whether it created the conversation. A refused slot
// leaves the conversation inserted: the caller's transaction is rolled back on the error.
func upsertConversation(ctx context.Context, tx *txn, ex store.Exchange) (bool, error) {
	q, a := storeutil.Millis(ex.Question.CreatedAt), storeutil.Millis(ex.Answer.CreatedAt)
	var count int
	err := tx.QueryRowContext(ctx, `
		INSERT INTO conversations
			(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered)
		VALUES (?, ?, ?, ?, MAX(?, ?), ?, 2, ?)
		ON CONFLICT (merchant_id, id) DO UPDATE SET message_count = message_count + 2,
			unanswered = unanswered + excluded.unanswered, updated_at = MAX(updated_at, excluded.updated_at)
		RETURNING message_count`,
		ex.MerchantID, ex.ConversationID, ex.VisitorID, q, q, a, ex.Question.Text, boolInt(!ex.Answer.Answered)).Scan(&count)
	if err != nil {
		return false, fmt.Errorf("recording conversation: %w", err)
	}
	if count != 2 { // an existing conversation: it had messages already
		return false, nil
	}
	return true, claimMonthlySlot(ctx, tx, ex.MerchantID, storeutil.Month(ex.Question.CreatedAt), ex.MonthlyLimit)
}

// claimMonthlySlot adds one to the merchant's count for month, or returns store.ErrQuotaExceeded when the count
// already is at limit (limit 0: no ceiling). The conditional upsert keeps the ceiling exact.
func claimMonthlySlot(ctx context.Context, tx *txn, merchantID, month string, limit int) error {
	r, err := tx.ExecContext(ctx, `
		INSERT INTO monthly_conversations (merchant_id, month, count) VALUES (?, ?, 1)
		ON CONFLICT (merchant_id, month) DO UPDATE SET count = count + 1 WHERE ? = 0 OR count < ?`,
		merchantID, month, limit, limit)
	if err != nil {
		return fmt.Errorf("counting conversation: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return fmt.Errorf("counting conversation: %w", err)
	}
	if n == 0 {
		return store.ErrQuotaExceeded
	}
	return nil
}

// insertMessages inserts the exchange's two messages.
func insertMessages(ctx context.Context, tx *txn, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, err := storeutil.EncodeSources(q.Sources)
	if err != nil {
		return err
	}
	aSources, err := storeutil.EncodeSources(a.Sources)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO messages
			(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered)
		VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?), (?, ?, ?, ?, ?, '', ?, ?, ?, ?)`,
		ex.MerchantID, ex.ConversationID, q.ID, string(store.RoleVisitor), q.Text, storeutil.NormalizeQuestion(q.Text),
		storeutil.Millis(q.CreatedAt), qSources, boolInt(q.Answered),
		ex.MerchantID, ex.ConversationID, a.ID, string(store.RoleAssistant), a.Text, q.ID,
		storeutil.Millis(a.CreatedAt), aSources, boolInt(a.Answered))
	if err != nil {
		return fmt.Errorf("inserting messages %s and %s: %w", q.ID, a.ID, err)
	}
	return nil
}

// countCitations increments the use count of each knowledge item the sources cite, in one statement.
func countCitations(ctx context.Context, tx *txn, merchantID string, sources []store.Source) error {
	ids := storeutil.CitedIDs(sources)
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, merchantID)
	for _, id := range ids {
		args = append(args, id)
	}
	placeholders := strings.Repeat(", ?", len(ids))[2:]
	_, err := tx.ExecContext(ctx, `UPDATE knowledge SET use_count = use_count + 1 WHERE merchant_id = ? AND id IN (`+placeholders+`)`, args...)
	if err != nil {
		return fmt.Errorf("counting citations: %w", err)
	}
	return nil
}

// ConversationsThisMonth returns how many conversations the merchant started in the UTC month of now.
func (s *Store) ConversationsThisMonth(ctx context.Context, merchantID string, now time.Time) (int, error) {
	var n int
	err := s.reader.QueryRowContext(ctx, `
		SELECT count FROM monthly_conversations WHERE merchant_id = ? AND month = ?`,
		merchantID, storeutil.Month(now)).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("counting conversations of the month: %w", err)
	}
	return n, nil
}

// ConversationExists reports whether the merchant has a conversation with this ID.
func (s *Store) ConversationExists(ctx context.Context, merchantID, id string) (bool, error) {
	var exists bool
	err := s.read(ctx, func(tx *txn) error {
		var err error
		exists, err = conversationExists(ctx, tx, merchantID, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("looking up conversation %s: %w", id, err)
	}
	return exists, nil
}

func conversationExists(ctx context.Context, tx *txn, merchantID, id string) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE merchant_id = ? AND id = ?`,
		merchantID, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up conversation: %w", err)
	}
	return true, nil
}

const conversationColumns = `merchant_id, id, visitor_id, created_at, updated_at, message_count, first_message,
	unanswered, has_lead`

// GetConversation returns a conversation and its messages, oldest first, or store.ErrNotFound.
func (s *Store) GetConversation(ctx context.Context, merchantID, id string) (store.Conversation, []store.Message, error) {
	var (
		c    store.Conversation
		msgs []store.Message
	)
	err := s.read(ctx, func(tx *txn) error {
		var err error
		row := tx.QueryRowContext(ctx, `SELECT `+conversationColumns+`
			FROM conversations WHERE merchant_id = ? AND id = ?`, merchantID, id)
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

func messages(ctx context.Context, tx *txn, merchantID, conversationID string) ([]store.Message, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT id, role, text, created_at, sources, answered FROM messages
		WHERE merchant_id = ? AND conversation_id = ? ORDER BY created_at, seq`, merchantID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("listing messages: %w", err)
	}
	defer rows.Close()
	var msgs []store.Message
	for rows.Next() {
		var (
			m       store.Message
			at      int64
			sources string
		)
		if err := rows.Scan(&m.ID, &m.Role, &m.Text, &at, &sources, &m.Answered); err != nil {
			return nil, fmt.Errorf("reading message: %w", err)
		}
		m.CreatedAt = storeutil.FromMillis(at)
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

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// scanConversation reads conversationColumns; no row is store.ErrNotFound.
func scanConversation(row rowScanner) (store.Conversation, error) {
	var (
		c                store.Conversation
		created, updated int64
	)
	err := row.Scan(&c.MerchantID, &c.ID, &c.VisitorID, &created, &updated, &c.MessageCount, &c.FirstMessage,
		&c.Unanswered, &c.HasLead)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Conversation{}, store.ErrNotFound
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return c, nil
}

// ListConversations returns a page of the merchant's conversations, newest first, and the next page's cursor.
func (s *Store) ListConversations(ctx context.Context, merchantID string, f store.ConversationFilter) ([]store.Conversation, string, error) {
	where, args, err := conversationFilter(merchantID, f)
	if err != nil {
		return nil, "", fmt.Errorf("listing conversations: %w", err)
	}
	size := storeutil.PageSize(f.Limit)
	rows, err := s.reader.QueryContext(ctx, `SELECT `+conversationColumns+` FROM conversations c
		WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, size+1)...)
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
func conversationFilter(merchantID string, f store.ConversationFilter) (string, []any, error) {
	conds := []string{"c.merchant_id = ?"}
	args := []any{merchantID}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindConversations, merchantID)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(c.created_at, c.id) < (?, ?)")
		args = append(args, cur.CreatedAt, cur.ID)
	}
	if !f.From.IsZero() {
		conds = append(conds, "c.created_at >= ?")
		args = append(args, storeutil.Millis(f.From))
	}
	if !f.To.IsZero() {
		conds = append(conds, "c.created_at < ?")
		args = append(args, storeutil.Millis(f.To))
	}
	if f.HasLead != nil {
		conds = append(conds, "c.has_lead = ?")
		args = append(args, boolInt(*f.HasLead))
	}
	if f.Query != "" {
		conds = append(conds, `EXISTS (SELECT 1 FROM messages m
			WHERE m.merchant_id = c.merchant_id AND m.conversation_id = c.id AND `+containsFoldFunc+`(m.text, ?))`)
		args = append(args, f.Query)
	}
	return strings.Join(conds, " AND "), args, nil
}
