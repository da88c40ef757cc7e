package sqlite

import (
	"context"
	"fmt"
	"strings"
)

// deferredWrites are the rows a write transaction's exchanges wrote and the transaction has not yet: their
// conversations (UpsertConversation) and messages (InsertMessages), the use counts of the knowledge items they
// cited (CountCitations) and the claims of a month's conversations after the first (ClaimMonthlySlot). A group
// commit holds several exchanges, mostly of the same merchant citing the same items: deferred, their inserts take
// one statement a table instead of one an exchange, and each counted row is updated once a batch.
type deferredWrites struct {
	// conversations are the values of the conversations to insert, conversationValues a conversation; continued
	// those of the conversations the runtime has read (store.Exchange.ConversationExists), to count an exchange in,
	// as many values an exchange.
	conversations, continued []any
	// messages are the values of the messages to insert, messageValues an exchange's two: those of exchanges in new
	// conversations, and continuedMessages those in conversations the runtime has read.
	messages, continuedMessages []any
	// cited are the items cited, in the order first cited, and uses their counts.
	cited []citation
	uses  map[citation]int
	// months are the months claimed in the transaction (see ClaimMonthlySlot).
	months map[monthKey]monthClaim
	// args is flush's arguments, kept to be used again.
	args []any
}

const (
	// conversationValues are the values of one conversation's insert (see UpsertConversation).
	conversationValues = 8
	// messageValues are the values of one exchange's two messages (see InsertMessages).
	messageValues = 20
	// maxRows is the most conversations or exchanges' messages one statement of flush inserts, and maxCitations
	// the most items it counts: a statement's text is prepared once for each number up to these.
	maxRows, maxCitations = 16, 32
	// maxContinuedRows is the most continued conversations or their exchanges' messages one statement of flush
	// writes. SQLite keeps a copy of each existing page a statement changes, to undo the statement alone: in
	// memory up to 64 KiB (16 pages), then in a temporary file, a system call a page. New conversations' rows go
	// to the last pages of each table and index, which a statement of maxRows shares; a continued conversation's
	// go beside its earlier rows, on pages of their own. Statements of 16 continued exchanges wrote 5 pages an
	// exchange to that file (strace -c of `parley dev` under a continued load like make bench's); statements of 3
	// still wrote some.
	maxContinuedRows = 1
)

// citation is a knowledge item whose use count a transaction adds to.
type citation struct{ merchantID, id string }

// monthKey is a merchant's month, YYYY-MM.
type monthKey struct{ merchantID, month string }

// monthClaim is what a transaction claimed of a month: the first claim is written at once; added are the
// claims after it, not written yet, against count, the month's count after the first claim, read with the
// second (read).
type monthClaim struct {
	read         bool
	count, added int
}

// cite adds one use to each of the items ids.
func (w *deferredWrites) cite(merchantID string, ids []string) {
	if w.uses == nil {
		w.uses = make(map[citation]int, len(ids))
	}
	for _, id := range ids {
		k := citation{merchantID, id}
		if w.uses[k] == 0 {
			w.cited = append(w.cited, k)
		}
		w.uses[k]++
	}
}

// claimed records the claims of month k.
func (w *deferredWrites) claimed(k monthKey, m monthClaim) {
	if w.months == nil {
		w.months = map[monthKey]monthClaim{}
	}
	w.months[k] = m
}

// pending reports whether anything waits to be written.
func (w *deferredWrites) pending() bool {
	return len(w.conversations) > 0 || len(w.continued) > 0 || len(w.messages) > 0 || len(w.continuedMessages) > 0 ||
		len(w.cited) > 0 || len(w.months) > 0
}

// reset forgets every deferred write: once written or rolled back.
func (w *deferredWrites) reset() {
	clear(w.conversations)
	w.conversations = w.conversations[:0]
	clear(w.continued)
	w.continued = w.continued[:0]
	clear(w.messages)
	w.messages = w.messages[:0]
	clear(w.continuedMessages)
	w.continuedMessages = w.continuedMessages[:0]
	w.cited = w.cited[:0]
	clear(w.uses)
	clear(w.months)
	clear(w.args)
}

// flush writes the deferred rows: the conversations, then their messages, then the counts. It runs before any
// statement that is not an exchange's (those read and write no row a deferred write touches) and before the
// commit, so every statement and the commit see the rows as if each exchange had written its own at once. A
// failure is kept: the transaction does not commit; in a group commit, its writes run again each alone, so that
// the failure is one write's.
func (t *txn) flush(ctx context.Context) error {
	w := t.deferred
	if t.flushErr != nil || w == nil || !w.pending() {
		return t.flushErr
	}
	if err := t.insertRows(ctx, w.conversations, conversationValues, maxRows, t.db.conversationInserts[:], buildInsertConversations); err != nil {
		t.flushErr = fmt.Errorf("recording conversations: %w", err)
		return t.flushErr
	}
	if err := t.insertRows(ctx, w.continued, conversationValues, maxContinuedRows, t.db.conversationUpserts[:], buildUpsertConversations); err != nil {
		t.flushErr = fmt.Errorf("recording conversations: %w", refusal(err))
		return t.flushErr
	}
	if err := t.insertRows(ctx, w.messages, messageValues, maxRows, t.db.messageInserts[:], buildInsertMessages); err != nil {
		t.flushErr = fmt.Errorf("inserting messages: %w", err)
		return t.flushErr
	}
	if err := t.insertRows(ctx, w.continuedMessages, messageValues, maxContinuedRows, t.db.messageInserts[:], buildInsertMessages); err != nil {
		t.flushErr = fmt.Errorf("inserting messages: %w", err)
		return t.flushErr
	}
	for k, m := range w.months {
		if m.added == 0 {
			continue
		}
		// The row exists: the month's first claim in the transaction wrote it.
		if _, err := t.execDeferring(ctx, `UPDATE monthly_conversations SET count = count + ? WHERE merchant_id = ? AND month = ?`,
			m.added, k.merchantID, k.month); err != nil {
			t.flushErr = fmt.Errorf("counting conversations: %w", err)
			return t.flushErr
		}
	}
	items := w.cited
	for len(items) > 0 {
		chunk := items[:min(len(items), maxCitations)]
		items = items[len(chunk):]
		args := w.args[:0]
		for _, k := range chunk {
			args = append(args, w.uses[k], k.merchantID, k.id)
		}
		w.args = args
		if _, err := t.execDeferring(ctx, t.db.statementText(t.db.citationCounts[:], len(chunk), buildCountCitations), args...); err != nil {
			t.flushErr = fmt.Errorf("counting citations: %w", err)
			return t.flushErr
		}
	}
	w.reset()
	return nil
}

// insertRows inserts values, perRow a row, at most perStatement rows a statement, with the statement texts texts
// holds and build makes.
func (t *txn) insertRows(ctx context.Context, values []any, perRow, perStatement int, texts []string, build func(n int) string) error {
	for len(values) > 0 {
		n := min(len(values)/perRow, perStatement)
		if _, err := t.execDeferring(ctx, t.db.statementText(texts, n, build), values[:n*perRow]...); err != nil {
			return err
		}
		values = values[n*perRow:]
	}
	return nil
}

// statementText returns texts[n], made by build once.
func (d *db) statementText(texts []string, n int, build func(n int) string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if texts[n] == "" {
		texts[n] = build(n)
	}
	return texts[n]
}

// buildInsertConversations is flush's insert of n conversations, each bound as UpsertConversation appends it.
func buildInsertConversations(n int) string {
	return `INSERT INTO conversations
		(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered, answers, tokens)
		VALUES ` + repeatJoin(`(?, ?, ?, ?, ?, ?, 2, ?, 1, ?)`, n)
}

// buildUpsertConversations is flush's statement counting n exchanges in their conversations, each bound as
// UpsertConversation appends it: a conversation deleted since the runtime read it is inserted again. One
// conversation's exchanges may be rows of one statement: SQLite upserts the rows in order.
func buildUpsertConversations(n int) string {
	return buildInsertConversations(n) + `
		ON CONFLICT (merchant_id, id) DO UPDATE SET message_count = message_count + 2,
			unanswered = unanswered + excluded.unanswered, updated_at = MAX(updated_at, excluded.updated_at),
			answers = answers + 1, tokens = tokens + excluded.tokens`
}

// buildInsertMessages is flush's insert of n exchanges' messages, each exchange bound as InsertMessages appends
// it.
func buildInsertMessages(n int) string {
	return `INSERT INTO messages
		(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens,
		confidence) VALUES ` +
		repeatJoin(`(?, ?, ?, ?, ?, ?, '', ?, ?, ?, 0, 0), (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?)`, n)
}

// buildCountCitations is flush's statement for n items, each bound as its count, merchant and ID. The items are
// looked up one per branch of a UNION ALL: SQLite would copy the values of an IN list into a temporary table
// first.
func buildCountCitations(n int) string {
	// AND true: SQLite needs a WHERE to tell the upsert's ON CONFLICT from a join's ON.
	return `INSERT INTO knowledge_uses (merchant_id, id, uses) ` +
		strings.Repeat(`SELECT merchant_id, id, ? FROM knowledge WHERE merchant_id = ? AND id = ? UNION ALL `, n-1) +
		`SELECT merchant_id, id, ? FROM knowledge WHERE merchant_id = ? AND id = ? AND true
		ON CONFLICT (merchant_id, id) DO UPDATE SET uses = uses + excluded.uses`
}

// repeatJoin is n copies of s separated by commas.
func repeatJoin(s string, n int) string {
	return strings.Repeat(s+", ", n-1) + s
}
