package postgres

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// deferredWrites are the rows a write transaction's exchanges wrote and the transaction has not sent yet: new
// conversations, messages, and the counts of cited items, of the month's conversations and of its model tokens.
// A group of exchanges (see writers) is then a few statements, each writing the rows of every exchange at once
// (from arrays, unnest), instead of five statements an exchange; and each counted row is updated once a group,
// not once an exchange, which matters because every new conversation of a merchant updates the same counter row.
//
// The rows go out before any other statement (flushRows), so every statement sees them as if each exchange had
// written its own at once. The counts go out with the commit (flushCounts), in key order, so that groups running
// at once lock the counted rows in one order and cannot deadlock. A statement that reads or writes a counted row
// must send the counts first: EraseMerchant does.
type deferredWrites struct {
	conversations conversationRows
	// continued are the exchanges of conversations the runtime has read (store.Exchange.ConversationExists),
	// one element a conversation: each conversation's exchanges of the group are counted together.
	continued conversationRows
	messages  messageRows
	// uses counts the citations of each item, claims the new conversations of each month, tokens the model
	// tokens of each month.
	uses   map[rowKey]int32
	claims map[monthKey]monthClaim
	tokens map[monthKey]int64
}

// rowKey is a merchant's knowledge item or conversation.
type rowKey struct{ merchantID, id string }

// monthKey is a merchant's month, YYYY-MM.
type monthKey struct{ merchantID, month string }

// monthClaim is the conversations a transaction counts in a month, against the ceiling its last one gave (0:
// none).
type monthClaim struct{ count, ceiling int }

// conversationRows are the columns of conversations, one element a conversation, with the messages and
// unanswered questions to count in it.
type conversationRows struct {
	merchantIDs, ids, visitorIDs, firstMessages []string
	createdAt, updatedAt                        []time.Time
	messageCounts, unanswered, answers          []int32
	tokens                                      []int64
	// index is the element of each conversation, when rows are merged by conversation (see add).
	index map[rowKey]int
}

// add adds ex's conversation, or counts ex in its element when merge is set and it has one already.
func (c *conversationRows) add(ex store.Exchange, merge bool) {
	unanswered := int32(0)
	if !ex.Answer.Answered {
		unanswered = 1
	}
	updated := stamp(later(ex.Question.CreatedAt, ex.Answer.CreatedAt))
	k := rowKey{ex.MerchantID, ex.ConversationID}
	if i, ok := c.index[k]; merge && ok {
		c.messageCounts[i] += 2
		c.unanswered[i] += unanswered
		c.answers[i]++
		c.tokens[i] += ex.Tokens
		c.updatedAt[i] = later(c.updatedAt[i], updated)
		return
	}
	if merge {
		if c.index == nil {
			c.index = map[rowKey]int{}
		}
		c.index[k] = len(c.ids)
	}
	c.merchantIDs = append(c.merchantIDs, ex.MerchantID)
	c.ids = append(c.ids, ex.ConversationID)
	c.visitorIDs = append(c.visitorIDs, ex.VisitorID)
	c.firstMessages = append(c.firstMessages, ex.Question.Text)
	c.createdAt = append(c.createdAt, stamp(ex.Question.CreatedAt))
	c.updatedAt = append(c.updatedAt, updated)
	c.messageCounts = append(c.messageCounts, 2)
	c.unanswered = append(c.unanswered, unanswered)
	c.answers = append(c.answers, 1)
	c.tokens = append(c.tokens, ex.Tokens)
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// messageRows are the columns of messages, one element a message.
type messageRows struct {
	merchantIDs, conversationIDs, ids, roles, texts, normalized, replyTo, sources []string
	createdAt                                                                     []time.Time
	answered                                                                      []bool
	tokens                                                                        []int64
	confidence                                                                    []float64
}

// cite counts one use of each of the items ids.
func (d *deferredWrites) cite(merchantID string, ids []string) {
	if d.uses == nil {
		d.uses = map[rowKey]int32{}
	}
	for _, id := range ids {
		d.uses[rowKey{merchantID, id}]++
	}
}

// claim counts one more conversation in month k, against ceiling.
func (d *deferredWrites) claim(k monthKey, ceiling int) {
	if d.claims == nil {
		d.claims = map[monthKey]monthClaim{}
	}
	c := d.claims[k]
	d.claims[k] = monthClaim{count: c.count + 1, ceiling: ceiling}
}

// addTokens counts n more model tokens in month k.
func (d *deferredWrites) addTokens(k monthKey, n int64) {
	if d.tokens == nil {
		d.tokens = map[monthKey]int64{}
	}
	d.tokens[k] += n
}

// flushRows queues the deferred conversations and messages, conversations first: the messages refer to them.
func (p *pipeline) flushRows() {
	d := &p.deferred
	if c := &d.conversations; len(c.ids) > 0 {
		p.batch.Queue(`
			INSERT INTO conversations
				(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered, answers, tokens)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::text[],
				$7::int[], $8::int[], $9::int[], $10::bigint[])`,
			c.merchantIDs, c.ids, c.visitorIDs, c.createdAt, c.updatedAt, c.firstMessages, c.messageCounts, c.unanswered,
			c.answers, c.tokens)
		p.whats = append(p.whats, fmt.Sprintf("recording %d new conversations", len(c.ids)))
		*c = conversationRows{}
	}
	if c := &d.continued; len(c.ids) > 0 {
		// In key order, so that groups running at once lock the conversations in one order.
		p.batch.Queue(`
			INSERT INTO conversations AS c
				(merchant_id, id, visitor_id, created_at, updated_at, first_message, message_count, unanswered, answers, tokens)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::text[],
				$7::int[], $8::int[], $9::int[], $10::bigint[]) ORDER BY 1, 2
			ON CONFLICT (merchant_id, id) DO UPDATE SET message_count = c.message_count + excluded.message_count,
				unanswered = c.unanswered + excluded.unanswered, updated_at = GREATEST(c.updated_at, excluded.updated_at),
				answers = c.answers + excluded.answers, tokens = c.tokens + excluded.tokens`,
			c.merchantIDs, c.ids, c.visitorIDs, c.createdAt, c.updatedAt, c.firstMessages, c.messageCounts, c.unanswered,
			c.answers, c.tokens)
		p.whats = append(p.whats, fmt.Sprintf("counting exchanges in %d conversations", len(c.ids)))
		*c = conversationRows{}
	}
	if m := &d.messages; len(m.ids) > 0 {
		p.batch.Queue(`
			INSERT INTO messages
				(merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens,
				confidence)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
				$8::timestamptz[], $9::jsonb[], $10::bool[], $11::bigint[], $12::float8[])`,
			m.merchantIDs, m.conversationIDs, m.ids, m.roles, m.texts, m.normalized, m.replyTo, m.createdAt, m.sources,
			m.answered, m.tokens, m.confidence)
		p.whats = append(p.whats, fmt.Sprintf("inserting %d messages", len(m.ids)))
		*m = messageRows{}
	}
}

// flushCounts queues the rows and then the deferred counts, each table's in key order: the citations, the
// model tokens, and last the month's conversations, whose counter row every new conversation of the merchant
// locks, so that it stays locked for the commit only.
func (p *pipeline) flushCounts() {
	p.flushRows()
	d := &p.deferred
	if len(d.uses) > 0 {
		keys := sortedKeys(d.uses, func(a, b rowKey) int {
			return cmp.Or(cmp.Compare(a.merchantID, b.merchantID), cmp.Compare(a.id, b.id))
		})
		merchants, ids, uses := make([]string, len(keys)), make([]string, len(keys)), make([]int32, len(keys))
		for i, k := range keys {
			merchants[i], ids[i], uses[i] = k.merchantID, k.id, d.uses[k]
		}
		// The items are locked FOR KEY SHARE, in key order: an item deleted meanwhile is skipped rather than
		// counted (its count is deleted with it), and edits of the items are not blocked.
		p.batch.Queue(`
			INSERT INTO knowledge_uses AS u (merchant_id, id, uses)
			SELECT k.merchant_id, k.id, c.uses
			FROM unnest($1::text[], $2::text[], $3::int[]) AS c(merchant_id, id, uses)
			JOIN knowledge k ON k.merchant_id = c.merchant_id AND k.id = c.id
			ORDER BY k.merchant_id, k.id FOR KEY SHARE OF k
			ON CONFLICT (merchant_id, id) DO UPDATE SET uses = u.uses + excluded.uses`, merchants, ids, uses)
		p.whats = append(p.whats, "counting citations")
		clear(d.uses)
	}
	if len(d.tokens) > 0 {
		keys := sortedKeys(d.tokens, compareMonths)
		merchants, months, tokens := make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			merchants[i], months[i], tokens[i] = k.merchantID, k.month, d.tokens[k]
		}
		p.batch.Queue(`
			INSERT INTO monthly_tokens AS mt (merchant_id, month, tokens)
			SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ORDER BY 1, 2
			ON CONFLICT (merchant_id, month) DO UPDATE SET tokens = mt.tokens + excluded.tokens`, merchants, months, tokens)
		p.whats = append(p.whats, "counting model tokens")
		clear(d.tokens)
	}
	if len(d.claims) > 0 {
		keys := sortedKeys(d.claims, compareMonths)
		merchants, months := make([]string, len(keys)), make([]string, len(keys))
		counts, ceilings := make([]int, len(keys)), make([]int, len(keys))
		for i, k := range keys {
			c := d.claims[k]
			merchants[i], months[i], counts[i], ceilings[i] = k.merchantID, k.month, c.count, c.ceiling
		}
		// The row keeps the ceiling, which its CHECK constraint enforces: the upsert locks the counter row and
		// counts on the latest committed count, so concurrent claims, from any replica, never pass the ceiling.
		p.batch.Queue(`
			INSERT INTO monthly_conversations AS mc (merchant_id, month, count, ceiling)
			SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) ORDER BY 1, 2
			ON CONFLICT (merchant_id, month) DO UPDATE SET count = mc.count + excluded.count, ceiling = excluded.ceiling`,
			merchants, months, counts, ceilings)
		p.whats = append(p.whats, "counting conversations")
		clear(d.claims)
	}
}

func compareMonths(a, b monthKey) int {
	return cmp.Or(cmp.Compare(a.merchantID, b.merchantID), cmp.Compare(a.month, b.month))
}

// sortedKeys returns the keys of m in the order of compare.
func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}
