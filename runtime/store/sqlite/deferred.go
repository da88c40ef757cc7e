package sqlite

import (
	"context"
	"fmt"
	"strings"
)

// deferredCounts are the counters a write transaction's exchanges added to and has not written yet: the use
// counts of cited knowledge items (CountCitations) and the claims of a month's conversations after the first
// (ClaimMonthlySlot). A group commit holds several exchanges, mostly of the same merchant citing the same items;
// adding their counts up writes each counted row once a batch instead of once an exchange.
type deferredCounts struct {
	// cited are the items cited, in the order first cited, and uses their counts.
	cited []citation
	uses  map[citation]int
	// months are the months claimed in the transaction (see ClaimMonthlySlot).
	months map[monthKey]monthClaim
	// args is flush's arguments, kept to be used again.
	args []any
}

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
func (c *deferredCounts) cite(merchantID string, ids []string) {
	if c.uses == nil {
		c.uses = make(map[citation]int, len(ids))
	}
	for _, id := range ids {
		k := citation{merchantID, id}
		if c.uses[k] == 0 {
			c.cited = append(c.cited, k)
		}
		c.uses[k]++
	}
}

// claimed records the claims of month k.
func (c *deferredCounts) claimed(k monthKey, m monthClaim) {
	if c.months == nil {
		c.months = map[monthKey]monthClaim{}
	}
	c.months[k] = m
}

// reset forgets every count: after they are written or rolled back.
func (c *deferredCounts) reset() {
	c.cited = c.cited[:0]
	clear(c.uses)
	clear(c.months)
	clear(c.args)
}

// flush writes the deferred counts, at most maxCitations items a statement. It runs before any statement that is
// not an exchange's (those read and write neither the items, their counts nor the month's count) and before the
// commit, so every statement and the commit see the counts as if each exchange had written its own at once. A
// failure is kept: the transaction does not commit.
func (t *txn) flush(ctx context.Context) error {
	c := t.counts
	if t.flushErr != nil || c == nil || len(c.cited) == 0 && len(c.months) == 0 {
		return t.flushErr
	}
	for k, m := range c.months {
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
	items := c.cited
	for len(items) > 0 {
		chunk := items[:min(len(items), maxCitations)]
		items = items[len(chunk):]
		args := c.args[:0]
		for _, k := range chunk {
			args = append(args, c.uses[k], k.merchantID, k.id)
		}
		c.args = args
		if _, err := t.execDeferring(ctx, t.db.countCitationsQuery(len(chunk)), args...); err != nil {
			t.flushErr = fmt.Errorf("counting citations: %w", err)
			return t.flushErr
		}
	}
	c.reset()
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
