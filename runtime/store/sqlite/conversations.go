package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// UpsertConversation creates the exchange's conversation or counts the exchange in the existing one, and reports
// whether it created the conversation. It is an update and, when that finds no conversation, an insert: the one
// writing connection runs them with no other write between, and an upsert with RETURNING would make SQLite
// collect its result in a temporary table. A conversation the runtime has just named (ex.NewConversation) is
// inserted at once: the update could not find it.
func (tx writeTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
	q, a := storeutil.Millis(ex.Question.CreatedAt), storeutil.Millis(ex.Answer.CreatedAt)
	updated, unanswered := max(q, a), boolInt(!ex.Answer.Answered)
	if !ex.NewConversation {
		n, err := affected(tx.execDeferring(ctx, `
			UPDATE conversations SET message_count = message_count + 2, unanswered = unanswered + ?,
				updated_at = MAX(updated_at, ?)
			WHERE merchant_id = ? AND id = ?`, unanswered, updated, ex.MerchantID, ex.ConversationID))
		if err != nil {
			return false, fmt.Errorf("recording conversation: %w", err)
		}
		if n == 1 {
			return false, nil
		}
	}
	_, err := tx.execDeferring(ctx, `
		INSERT INTO conversations
			(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered)
		VALUES (?, ?, ?, ?, ?, ?, 2, ?)`,
		ex.MerchantID, ex.ConversationID, ex.VisitorID, q, updated, ex.Question.Text, unanswered)
	if err != nil {
		return false, fmt.Errorf("recording conversation: %w", err)
	}
	return true, nil
}

// ClaimMonthlySlot adds one to the merchant's count for the month of at, or returns store.ErrQuotaExceeded,
// changing nothing, when the count already is at limit (limit 0: no ceiling). The conditional upsert keeps the
// ceiling exact.
func (tx writeTx) ClaimMonthlySlot(ctx context.Context, merchantID string, at time.Time, limit int) error {
	n, err := affected(tx.execDeferring(ctx, `
		INSERT INTO monthly_conversations (merchant_id, month, count) VALUES (?, ?, 1)
		ON CONFLICT (merchant_id, month) DO UPDATE SET count = count + 1 WHERE ? = 0 OR count < ?`,
		merchantID, storeutil.Month(at), limit, limit))
	if err != nil {
		return fmt.Errorf("counting conversation: %w", err)
	}
	if n == 0 {
		return store.ErrQuotaExceeded
	}
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

// InsertMessages inserts the exchange's two messages.
func (tx writeTx) InsertMessages(ctx context.Context, ex store.Exchange) error {
	q, a := ex.Question, ex.Answer
	qSources, aSources, err := storeutil.ExchangeSources(ex)
	if err != nil {
		return err
	}
	_, err = tx.execDeferring(ctx, `
		INSERT INTO messages
			(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
		VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, 0), (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?)`,
		ex.MerchantID, ex.ConversationID, q.ID, string(store.RoleVisitor), q.Text, storeutil.NormalizeQuestion(q.Text),
		storeutil.Millis(q.CreatedAt), qSources, boolInt(q.Answered),
		ex.MerchantID, ex.ConversationID, a.ID, string(store.RoleAssistant), a.Text, q.ID,
		storeutil.Millis(a.CreatedAt), aSources, boolInt(a.Answered), ex.Tokens)
	if err != nil {
		return fmt.Errorf("inserting messages %s and %s: %w", q.ID, a.ID, err)
	}
	return nil
}

// CountCitations increments the use count of each of the knowledge items that exists. The counts are added up
// in the transaction and written when it next runs a statement other than an exchange's, or commits (see flush),
// so that a group commit writes each cited item's count once however many of its exchanges cite it. The counts
// live in knowledge_uses, a narrow table, so that counting rewrites a few bytes instead of the item's row.
func (tx writeTx) CountCitations(_ context.Context, merchantID string, ids []string) error {
	tx.citations.add(merchantID, ids)
	return nil
}

// citation is a knowledge item whose use count a transaction adds to.
type citation struct{ merchantID, id string }

// citationCounts are the use counts a write transaction added and has not written yet, by item in the order
// first cited.
type citationCounts struct {
	items []citation
	n     map[citation]int
	// args is flush's arguments, kept to be used again.
	args []any
}

func (c *citationCounts) add(merchantID string, ids []string) {
	if c.n == nil {
		c.n = make(map[citation]int, len(ids))
	}
	for _, id := range ids {
		k := citation{merchantID, id}
		if c.n[k] == 0 {
			c.items = append(c.items, k)
		}
		c.n[k]++
	}
}

func (c *citationCounts) reset() {
	c.items = c.items[:0]
	clear(c.n)
	clear(c.args)
}

// flush writes the deferred use counts, at most maxCitations items a statement. It runs before any statement
// that is not an exchange's (those touch neither the items nor their counts) and before the commit, so every
// statement and the commit see the counts as if each exchange had written its own at once. A failure is kept:
// the transaction does not commit.
func (t *txn) flush(ctx context.Context) error {
	if t.flushErr != nil || t.citations == nil || len(t.citations.items) == 0 {
		return t.flushErr
	}
	items := t.citations.items
	for len(items) > 0 {
		chunk := items[:min(len(items), maxCitations)]
		items = items[len(chunk):]
		args := t.citations.args[:0]
		for _, k := range chunk {
			args = append(args, t.citations.n[k], k.merchantID, k.id)
		}
		t.citations.args = args
		if _, err := t.execDeferring(ctx, t.db.countCitationsQuery(len(chunk)), args...); err != nil {
			t.flushErr = fmt.Errorf("counting citations: %w", err)
			return t.flushErr
		}
	}
	t.citations.reset()
	return nil
}

// maxCitations is the most items one statement of flush counts; a group commit's exchanges cite a few dozen.
const maxCitations = 32

// countCitationsQuery returns flush's statement for n items (n <= maxCitations), its text built once per n.
func (d *db) countCitationsQuery(n int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.citations[n] == "" {
		d.citations[n] = buildCountCitations(n)
	}
	return d.citations[n]
}

// buildCountCitations is flush's statement for n items, each bound as its count, merchant and ID. The items are
// looked up one per branch of a UNION ALL: SQLite would copy the values of an IN list into a temporary table
// first.
func buildCountCitations(n int) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO knowledge_uses (merchant_id, id, uses) `)
	for i := range n {
		if i > 0 {
			q.WriteString(` UNION ALL `)
		}
		q.WriteString(`SELECT merchant_id, id, ? FROM knowledge WHERE merchant_id = ? AND id = ?`)
	}
	// AND true: SQLite needs a WHERE to tell the upsert's ON CONFLICT from a join's ON.
	q.WriteString(` AND true ON CONFLICT (merchant_id, id) DO UPDATE SET uses = uses + excluded.uses`)
	return q.String()
}
