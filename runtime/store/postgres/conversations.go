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
// other's insert and then counts itself in the conversation, so exactly one creates it. Such an upsert waits for
// its answer; the conversations the runtime knows about need none and are written with the next statement or the
// commit (see deferredWrites), so that their exchanges take one round trip: one the runtime has just named
// (ex.NewConversation) is inserted, one it has just read (ex.ConversationExists) upserted and reported as not
// created.
func (tx writeTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
	switch {
	case ex.NewConversation:
		tx.deferred.conversations.add(ex, false)
		return true, nil
	case ex.ConversationExists:
		tx.deferred.continued.add(ex, true)
		return false, nil
	}
	unanswered := 0
	if !ex.Answer.Answered {
		unanswered = 1
	}
	var count int
	err := tx.QueryRow(ctx, `
		INSERT INTO conversations AS c
			(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered, answers, tokens)
		VALUES ($1, $2, $3, $4, GREATEST($4::timestamptz, $5::timestamptz), $6, 2, $7, 1, $8)
		ON CONFLICT (merchant_id, id) DO UPDATE SET message_count = c.message_count + 2,
			unanswered = c.unanswered + excluded.unanswered, updated_at = GREATEST(c.updated_at, excluded.updated_at),
			answers = c.answers + 1, tokens = c.tokens + excluded.tokens
		RETURNING message_count`,
		ex.MerchantID, ex.ConversationID, ex.VisitorID, stamp(ex.Question.CreatedAt), stamp(ex.Answer.CreatedAt),
		ex.Question.Text, unanswered, ex.Tokens).Scan(&count)
	if err != nil {
		return false, fmt.Errorf("recording conversation: %w", refusal(err))
	}
	return count == 2, nil // an existing conversation had messages already
}

// ClaimMonthlySlot adds one to the merchant's count for the month of at, under the ceiling limit (0: none), which
// the row keeps and its CHECK constraint enforces. The claim is deferred to the commit (see deferredWrites); a
// claim past the ceiling fails it, and the error, store.ErrQuotaExceeded, comes back from the write.
func (tx writeTx) ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) error {
	tx.deferred.claim(monthKey{merchantID, storeutil.Month(at)}, limit)
	return nil
}

// AddMonthlyTokens adds n to the merchant's model tokens of the month of at, with the commit.
func (tx writeTx) AddMonthlyTokens(ctx context.Context, merchantID string, at time.Time, n int64) error {
	tx.deferred.addTokens(monthKey{merchantID, storeutil.Month(at)}, n)
	return nil
}

// InsertMessages inserts the exchange's two messages, with the next statement or the commit.
func (tx writeTx) InsertMessages(ctx context.Context, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, aSources, err := storeutil.ExchangeSources(ex)
	if err != nil {
		return err
	}
	m := &tx.deferred.messages
	m.merchantIDs = append(m.merchantIDs, ex.MerchantID, ex.MerchantID)
	m.conversationIDs = append(m.conversationIDs, ex.ConversationID, ex.ConversationID)
	m.ids = append(m.ids, q.ID, a.ID)
	m.roles = append(m.roles, string(store.RoleVisitor), string(store.RoleAssistant))
	m.texts = append(m.texts, q.Text, a.Text)
	m.normalized = append(m.normalized, storeutil.NormalizeQuestion(q.Text), "")
	m.replyTo = append(m.replyTo, "", q.ID)
	m.createdAt = append(m.createdAt, stamp(q.CreatedAt), stamp(a.CreatedAt))
	m.sources = append(m.sources, qSources, aSources)
	m.answered = append(m.answered, q.Answered, a.Answered)
	m.tokens = append(m.tokens, 0, ex.Tokens)
	m.confidence = append(m.confidence, 0, a.Confidence)
	return nil
}

// CountCitations adds one to the use count of each of the knowledge items that exists, with the commit (see
// deferredWrites). The counts live in knowledge_uses, a narrow table, so that counting writes a small row version
// instead of the item's.
func (tx writeTx) CountCitations(ctx context.Context, merchantID string, ids []string) error {
	tx.deferred.cite(merchantID, ids)
	return nil
}
