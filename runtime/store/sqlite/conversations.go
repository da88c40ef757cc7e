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

// UpsertConversation creates the exchange's conversation or counts the exchange in the existing one, in one
// statement, and reports whether it created the conversation.
func (tx writeTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
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
	return count == 2, nil // an existing conversation had messages already
}

// ClaimMonthlySlot adds one to the merchant's count for the month of at, or reports false when the count already
// is at limit (limit 0: no ceiling). The conditional upsert keeps the ceiling exact.
func (tx writeTx) ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) (bool, error) {
	n, err := affected(tx.ExecContext(ctx, `
		INSERT INTO monthly_conversations (merchant_id, month, count) VALUES (?, ?, 1)
		ON CONFLICT (merchant_id, month) DO UPDATE SET count = count + 1 WHERE ? = 0 OR count < ?`,
		merchantID, storeutil.Month(at), limit, limit))
	if err != nil {
		return false, fmt.Errorf("counting conversation: %w", err)
	}
	return n == 1, nil
}

// InsertMessages inserts the exchange's two messages.
func (tx writeTx) InsertMessages(ctx context.Context, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, aSources, err := storeutil.ExchangeSources(ex)
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

// CountCitations increments the use count of each of the knowledge items, in one statement.
func (tx writeTx) CountCitations(ctx context.Context, merchantID string, ids []string) error {
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
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM conversations c WHERE c.merchant_id = ? AND c.id = ?`,
		merchantID, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up conversation: %w", err)
	}
	return true, nil
}

// GetConversation returns a conversation and its messages, oldest first, or store.ErrNotFound.
func (s *Store) GetConversation(ctx context.Context, merchantID, id string) (store.Conversation, []store.Message, error) {
	var (
		c    store.Conversation
		msgs []store.Message
	)
	err := s.read(ctx, func(tx *txn) error {
		var err error
		row := tx.QueryRowContext(ctx, `SELECT `+storeutil.ConversationColumns+`
			FROM conversations c WHERE c.merchant_id = ? AND c.id = ?`, merchantID, id)
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
	msgs, err := queryList(ctx, tx, `
		SELECT id, role, text, created_at, sources, answered FROM messages
		WHERE merchant_id = ? AND conversation_id = ? ORDER BY created_at, seq`, []any{merchantID, conversationID}, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("listing messages: %w", err)
	}
	return msgs, nil
}

// scanMessage reads a message: id, role, text, created_at, sources, answered.
func scanMessage(row storeutil.Scanner) (store.Message, error) {
	var (
		m       store.Message
		at      int64
		sources string
	)
	if err := row.Scan(&m.ID, &m.Role, &m.Text, &at, &sources, &m.Answered); err != nil {
		return store.Message{}, fmt.Errorf("reading message: %w", err)
	}
	m.CreatedAt = storeutil.FromMillis(at)
	var err error
	if m.Sources, err = storeutil.DecodeSources(sources); err != nil {
		return store.Message{}, fmt.Errorf("reading sources of message %s: %w", m.ID, err)
	}
	return m, nil
}

// scanConversation reads storeutil.ConversationColumns; no row is store.ErrNotFound.
func scanConversation(row storeutil.Scanner) (store.Conversation, error) {
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
