package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// UpsertConversation creates the exchange's conversation or counts the exchange in the existing one, in one
// statement, and reports whether it created the conversation. A first exchange sent twice at once waits on the
// other's insert and then counts itself in the conversation, so exactly one creates it.
func (tx writeTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
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
	return count == 2, nil // an existing conversation had messages already
}

// ClaimMonthlySlot adds one to the merchant's count for the month of at, under the ceiling limit (0: none), which
// the row keeps and its CHECK constraint enforces: the upsert locks the counter row and counts on the latest
// committed count, so concurrent claims, from any replica, never pass the limit. A claim past it fails the
// statement, which needs no answer: it goes to the server with the COMMIT, and the error, store.ErrQuotaExceeded,
// comes back from Write.
func (tx writeTx) ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) error {
	tx.queue("counting conversation", `
		INSERT INTO monthly_conversations AS mc (merchant_id, month, count, ceiling) VALUES ($1, $2, 1, $3)
		ON CONFLICT (merchant_id, month) DO UPDATE SET count = mc.count + 1, ceiling = excluded.ceiling`,
		merchantID, storeutil.Month(at), limit)
	return nil
}

// AddMonthlyTokens adds n to the merchant's model tokens of the month of at.
func (tx writeTx) AddMonthlyTokens(ctx context.Context, merchantID string, at time.Time, n int64) error {
	tx.queue("counting model tokens", `
		INSERT INTO monthly_tokens AS mt (merchant_id, month, tokens) VALUES ($1, $2, $3)
		ON CONFLICT (merchant_id, month) DO UPDATE SET tokens = mt.tokens + excluded.tokens`,
		merchantID, storeutil.Month(at), n)
	return nil
}

// InsertMessages inserts the exchange's two messages.
func (tx writeTx) InsertMessages(ctx context.Context, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, aSources, err := storeutil.ExchangeSources(ex)
	if err != nil {
		return err
	}
	tx.queue(fmt.Sprintf("inserting messages %s and %s", q.ID, a.ID), `
		INSERT INTO messages
			(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
		VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8, $9, 0), ($1, $2, $10, $11, $12, '', $3, $13, $14, $15, $16)`,
		ex.MerchantID, ex.ConversationID, q.ID, string(store.RoleVisitor), q.Text, storeutil.NormalizeQuestion(q.Text),
		stamp(q.CreatedAt), qSources, q.Answered,
		a.ID, string(store.RoleAssistant), a.Text, stamp(a.CreatedAt), aSources, a.Answered, ex.Tokens)
	return nil
}

// CountCitations increments the use count of each of the knowledge items that exists. The counts live in
// knowledge_uses, a narrow table, so that counting writes a small row version instead of the item's. The items
// are locked FOR KEY SHARE, in ID order: an item deleted meanwhile is skipped rather than counted (its count is
// deleted with it), edits of the items are not blocked, and concurrent exchanges citing the same items in
// another order cannot deadlock.
func (tx writeTx) CountCitations(ctx context.Context, merchantID string, ids []string) error {
	tx.queue("counting citations", `
		INSERT INTO knowledge_uses AS u (merchant_id, id, uses)
		SELECT merchant_id, id, 1 FROM knowledge WHERE merchant_id = $1 AND id = ANY($2::text[])
		ORDER BY id FOR KEY SHARE
		ON CONFLICT (merchant_id, id) DO UPDATE SET uses = u.uses + 1`, merchantID, ids)
	return nil
}
