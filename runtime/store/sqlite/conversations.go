package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// UpsertConversation creates the exchange's conversation or counts the exchange in the existing one, and reports
// whether it created the conversation. It is an update and, when that finds no conversation, an insert: the one
// writing connection runs them with no other write between, and an upsert with RETURNING would make SQLite
// collect its result in a temporary table. A conversation the runtime has just named (ex.NewConversation) is
// inserted without the update, which could not find it, and one it has just read (ex.ConversationExists)
// upserted without a statement of its own, and reported as not created. Both are deferred (see flush): a group
// commit writes its exchanges' conversations in a statement or two.
func (tx writeTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
	q, a := storeutil.Millis(ex.Question.CreatedAt), storeutil.Millis(ex.Answer.CreatedAt)
	updated, unanswered := max(q, a), boolInt(!ex.Answer.Answered)
	if ex.ConversationExists {
		tx.deferred.continued = append(tx.deferred.continued,
			ex.MerchantID, ex.ConversationID, ex.VisitorID, q, updated, ex.Question.Text, unanswered, ex.Tokens)
		return false, nil
	}
	if !ex.NewConversation {
		// The conversation may be one a deferred write holds: those go first.
		if len(tx.deferred.conversations) > 0 || len(tx.deferred.continued) > 0 {
			if err := tx.flush(ctx); err != nil {
				return false, err
			}
		}
		n, err := affected(tx.execDeferring(ctx, `
			UPDATE conversations SET message_count = message_count + 2, unanswered = unanswered + ?,
				updated_at = MAX(updated_at, ?), answers = answers + 1, tokens = tokens + ?
			WHERE merchant_id = ? AND id = ?`, unanswered, updated, ex.Tokens, ex.MerchantID, ex.ConversationID))
		if err != nil {
			return false, fmt.Errorf("recording conversation: %w", refusal(err))
		}
		if n == 1 {
			return false, nil
		}
	}
	tx.deferred.conversations = append(tx.deferred.conversations,
		ex.MerchantID, ex.ConversationID, ex.VisitorID, q, updated, ex.Question.Text, unanswered, ex.Tokens)
	return true, nil
}

// ClaimMonthlySlot adds one to the merchant's count for the month of at, or returns store.ErrQuotaExceeded,
// changing nothing, when the count already is at limit (limit 0: no ceiling). The transaction's first claim of
// the month is a conditional upsert, which keeps the ceiling exact; its next ones, in a group commit, are added
// up against the count read once and written before any other statement and the commit (see flush), so that
// the batch updates the month's row once.
func (tx writeTx) ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) error {
	k := monthKey{merchantID, storeutil.Month(at)}
	c, claimed := tx.deferred.months[k]
	if !claimed {
		n, err := affected(tx.execDeferring(ctx, `
			INSERT INTO monthly_conversations (merchant_id, month, count) VALUES (?, ?, 1)
			ON CONFLICT (merchant_id, month) DO UPDATE SET count = count + 1 WHERE ? = 0 OR count < ?`,
			k.merchantID, k.month, limit, limit))
		if err != nil {
			return fmt.Errorf("counting conversation: %w", err)
		}
		if n == 0 {
			return store.ErrQuotaExceeded
		}
		tx.deferred.claimed(k, monthClaim{})
		return nil
	}
	if !c.read {
		err := tx.queryRowDeferring(ctx, `SELECT count FROM monthly_conversations WHERE merchant_id = ? AND month = ?`,
			k.merchantID, k.month).Scan(&c.count)
		if err != nil {
			return fmt.Errorf("counting conversation: %w", err)
		}
		c.read = true
	}
	if limit > 0 && c.count+c.added >= limit {
		return store.ErrQuotaExceeded
	}
	c.added++
	tx.deferred.claimed(k, c)
	return nil
}

// AddMonthlyTokens adds n to the merchant's model tokens of the month of at.
func (tx writeTx) AddMonthlyTokens(ctx context.Context, merchantID string, at time.Time, n int64) error {
	_, err := tx.execDeferring(ctx, `
		INSERT INTO monthly_tokens (merchant_id, month, tokens) VALUES (?, ?, ?)
		ON CONFLICT (merchant_id, month) DO UPDATE SET tokens = tokens + excluded.tokens`,
		merchantID, storeutil.Month(at), n)
	if err != nil {
		return fmt.Errorf("counting model tokens: %w", err)
	}
	return nil
}

// InsertMessages inserts the exchange's two messages, deferred (see flush): a group commit inserts the messages of
// its exchanges in new conversations in one statement.
func (tx writeTx) InsertMessages(_ context.Context, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, aSources, err := storeutil.ExchangeSources(ex)
	if err != nil {
		return err
	}
	to := &tx.deferred.messages
	if ex.ConversationExists {
		to = &tx.deferred.continuedMessages
	}
	*to = append(*to,
		ex.MerchantID, ex.ConversationID, q.ID, string(store.RoleVisitor), q.Text, storeutil.NormalizeQuestion(q.Text),
		storeutil.Millis(q.CreatedAt), qSources, boolInt(q.Answered),
		ex.MerchantID, ex.ConversationID, a.ID, string(store.RoleAssistant), a.Text, q.ID,
		storeutil.Millis(a.CreatedAt), aSources, boolInt(a.Answered), ex.Tokens, a.Confidence)
	return nil
}

// CountCitations increments the use count of each of the knowledge items that exists. The counts are added up
// in the transaction and written when it next runs a statement other than an exchange's, or commits (see flush),
// so that a group commit writes each cited item's count once however many of its exchanges cite it. The counts
// live in knowledge_uses, a narrow table, so that counting rewrites a few bytes instead of the item's row.
func (tx writeTx) CountCitations(_ context.Context, merchantID string, ids []string) error {
	tx.deferred.cite(merchantID, ids)
	return nil
}

// refusal is the store's error for a statement the database refused by a rule of the store's, or err: the
// trigger that keeps a conversation within store.MaxConversationMessages (migration 9) raises an error of its name.
func refusal(err error) error {
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_TRIGGER && strings.Contains(e.Error(), "conversations_within_message_cap") {
		return store.ErrConversationFull
	}
	return err
}
