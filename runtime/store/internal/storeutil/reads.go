package storeutil

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// Dialect is what the SQL stores' listing queries differ in.
type Dialect interface {
	// Placeholder is the placeholder of the nth argument (from 1) of a query, of SQL type typ ("timestamp",
	// "text", "integer" or "boolean").
	Placeholder(n int, typ string) string
	// Value converts a time or a bool to the form the store keeps it in; other values are returned as they are.
	Value(v any) any
	// ContainsFold is the condition that column contains the text of the argument ?, ignoring case.
	ContainsFold(column string) string
	// HasTag is the condition that the tags column holds the tag of the argument ?.
	HasTag(column string) string
	// Millis is the time column as unix milliseconds, an integer.
	Millis(column string) string
}

// Where builds a WHERE clause and its arguments for a dialect. Conditions are written with ? for their
// arguments.
type Where struct {
	d     Dialect
	conds []string
	// Args are the clause's arguments, in placeholder order.
	Args []any
}

// NewWhere starts a clause for the dialect.
func NewWhere(d Dialect) *Where { return &Where{d: d} }

// Add adds a condition and the arguments of its ? placeholders, in order.
func (w *Where) Add(cond string, args ...any) {
	var b strings.Builder
	rest := cond
	for _, arg := range args {
		before, after, _ := strings.Cut(rest, "?")
		b.WriteString(before)
		b.WriteString(w.Param(arg))
		rest = after
	}
	b.WriteString(rest)
	w.conds = append(w.conds, b.String())
}

// Param adds an argument and returns its placeholder.
func (w *Where) Param(v any) string {
	typ := ""
	switch v.(type) {
	case time.Time:
		typ = "timestamp"
	case string:
		typ = "text"
	case int, int64:
		typ = "integer"
	case bool:
		typ = "boolean"
	}
	w.Args = append(w.Args, w.d.Value(v))
	return w.d.Placeholder(len(w.Args), typ)
}

// After keeps the rows of table alias t that a listing orders after the cursor; nil keeps all.
func (w *Where) After(t string, c *Cursor) {
	if c != nil {
		w.Add("("+t+".created_at, "+t+".id) < (?, ?)", FromMillis(c.CreatedAt), c.ID)
	}
}

// Created keeps the rows of table alias t created in [from, to); zero times are unbounded.
func (w *Where) Created(t string, from, to time.Time) {
	if !from.IsZero() {
		w.Add(t+".created_at >= ?", from)
	}
	if !to.IsZero() {
		w.Add(t+".created_at < ?", to)
	}
}

// String is the clause: its conditions joined by AND.
func (w *Where) String() string { return strings.Join(w.conds, " AND ") }

// newestFirst ends a listing's query: newest first, n rows.
func (w *Where) newestFirst(t string, n int) string {
	return " WHERE " + w.String() + " ORDER BY " + t + ".created_at DESC, " + t + ".id DESC LIMIT " + w.Param(n)
}

// The columns of the listed rows, read by each store's scan functions.
const (
	// ConversationColumns are a conversation's columns, of the table alias c.
	ConversationColumns = `c.merchant_id, c.id, c.visitor_id, c.created_at, c.updated_at, c.message_count,
	c.first_message, c.unanswered, c.has_lead, c.status, c.handoff_at, c.agent_reply_at, c.answers, c.tokens`
	// KnowledgeColumns are a knowledge item's columns, of the table alias k, and its use count, kept apart in
	// knowledge_uses (see CountCitations) and 0 when it has no row there.
	KnowledgeColumns = `k.merchant_id, k.id, k.title, k.content, k.url, k.tags, k.questions, k.draft, k.curated,
	k.source_id, k.file, k.created_at, k.updated_at, COALESCE((SELECT u.uses FROM knowledge_uses u WHERE u.merchant_id = k.merchant_id AND u.id = k.id), 0)`
	// LeadColumns are a lead's columns, of the table alias l.
	LeadColumns = `l.merchant_id, l.id, l.conversation_id, l.visitor_id, l.name, l.email, l.phone, l.message, l.consent,
	l.source, l.created_at, l.updated_at`
	// DeliveryColumns are a delivery's columns and its event's, from DeliveriesWithEvents.
	DeliveryColumns = `d.merchant_id, d.id, d.event_id, e.type, d.webhook_id, d.url, e.payload, e.created_at, d.status,
	d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.last_latency_ms, d.created_at, d.updated_at`
	// MessageColumns are a message's columns, of the table alias m.
	MessageColumns = `m.id, m.role, m.text, m.created_at, m.sources, m.answered, m.author, m.confidence`
	// AttemptColumns are a delivery attempt's columns, of the table alias a.
	AttemptColumns = `a.merchant_id, a.delivery_id, a.at, a.url, a.status_code, a.latency_ms, a.error`
	// DeliveriesWithEvents joins deliveries d to their events e.
	DeliveriesWithEvents = `deliveries d JOIN events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id`
)

// FairDue is the query that numbers the pending deliveries due at now, each merchant's oldest first, starting
// after the merchant's deliveries leased at now: a delivery's slot n means n-1 of its merchant's deliveries would
// be in flight before it, so ClaimDeliveries takes those with slot <= perMerchant. now is the dialect's
// placeholder of the time; in SQLite each of its three uses takes an argument.
func FairDue(now string) string {
	return `SELECT y.merchant_id, y.id,
			ROW_NUMBER() OVER (PARTITION BY y.merchant_id ORDER BY y.next_attempt_at, y.seq)
			+ (SELECT COUNT(*) FROM deliveries b WHERE b.merchant_id = y.merchant_id AND b.status = 'pending'
				AND b.lease_until > ` + now + `) AS slot
		FROM deliveries y WHERE y.status = 'pending' AND y.next_attempt_at <= ` + now + ` AND y.lease_until <= ` + now
}

// ConversationsQuery is the query of n conversations of a listing after the cursor, and its arguments.
func ConversationsQuery(d Dialect, merchantID string, after *Cursor, f store.ConversationFilter, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("c.merchant_id = ?", merchantID)
	w.After("c", after)
	w.Created("c", f.From, f.To)
	if f.HasLead != nil {
		w.Add("c.has_lead = ?", *f.HasLead)
	}
	if f.Status != "" {
		w.Add("c.status = ?", string(f.Status))
	}
	if f.Query != "" {
		w.Add(`EXISTS (SELECT 1 FROM messages m WHERE m.merchant_id = c.merchant_id AND m.conversation_id = c.id AND `+
			d.ContainsFold("m.text")+`)`, f.Query)
	}
	return `SELECT ` + ConversationColumns + ` FROM conversations c` + w.newestFirst("c", n), w.Args
}

// KnowledgeQuery is the query of n knowledge items of a listing after the cursor, and its arguments.
func KnowledgeQuery(d Dialect, merchantID string, after *Cursor, f store.KnowledgeFilter, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("k.merchant_id = ?", merchantID)
	w.After("k", after)
	if f.Query != "" {
		w.Add("("+d.ContainsFold("k.title")+" OR "+d.ContainsFold("k.content")+" OR "+d.ContainsFold("k.questions")+")",
			f.Query, f.Query, f.Query)
	}
	if f.Tag != "" {
		w.Add(d.HasTag("k.tags"), f.Tag)
	}
	if f.Draft != nil {
		w.Add("k.draft = ?", *f.Draft)
	}
	return `SELECT ` + KnowledgeColumns + ` FROM knowledge k` + w.newestFirst("k", n), w.Args
}

// LeadsQuery is the query of n leads of a listing after the cursor, and its arguments.
func LeadsQuery(d Dialect, merchantID string, after *Cursor, f store.LeadFilter, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("l.merchant_id = ?", merchantID)
	w.After("l", after)
	w.Created("l", f.From, f.To)
	if f.ConversationID != "" {
		w.Add("l.conversation_id = ?", f.ConversationID)
	}
	return `SELECT ` + LeadColumns + ` FROM leads l` + w.newestFirst("l", n), w.Args
}

// DeliveriesQuery is the query of n deliveries of a listing after the cursor, and its arguments.
func DeliveriesQuery(d Dialect, merchantID string, after *Cursor, f store.DeliveryFilter, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("d.merchant_id = ?", merchantID)
	w.After("d", after)
	for _, eq := range []struct{ column, value string }{
		{"d.status", f.Status}, {"e.type", f.EventType}, {"d.webhook_id", f.WebhookID},
	} {
		if eq.value != "" {
			w.Add(eq.column+" = ?", eq.value)
		}
	}
	w.Created("d", f.From, f.To)
	return `SELECT ` + DeliveryColumns + ` FROM ` + DeliveriesWithEvents + w.newestFirst("d", n), w.Args
}

// Reads are the reads both SQL stores make alike, written once: a store embeds them with its dialect, its way to
// run a query and its scan functions.
type Reads struct {
	Dialect Dialect
	// Query runs a read query outside a transaction.
	Query QueryFunc
	// Snapshot runs fn in a read-only transaction that sees one snapshot of the database.
	Snapshot         func(ctx context.Context, fn func(QueryFunc) error) error
	ScanConversation func(Scanner) (store.Conversation, error)
	ScanMessage      func(Scanner) (store.Message, error)
	ScanAttempt      func(Scanner) (store.Attempt, error)
	ScanKnowledge    func(Scanner) (store.Knowledge, error)
	ScanLead         func(Scanner) (store.Lead, error)
	ScanDelivery     func(Scanner) (store.Delivery, error)
}

// ListConversations returns a page of the merchant's conversations, newest first, and the next page's cursor.
func (l Reads) ListConversations(ctx context.Context, merchantID string, f store.ConversationFilter) ([]store.Conversation, string, error) {
	return ListPage(KindConversations, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Conversation, error) {
		query, args := ConversationsQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanConversation)
	})
}

// ListKnowledge returns a page of the merchant's knowledge items, newest first, and the next page's cursor.
func (l Reads) ListKnowledge(ctx context.Context, merchantID string, f store.KnowledgeFilter) ([]store.Knowledge, string, error) {
	return ListPage(KindKnowledge, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Knowledge, error) {
		query, args := KnowledgeQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanKnowledge)
	})
}

// KnowledgeCharacters returns how many characters the titles, contents and questions of the merchant's items hold,
// without the item except, queried with q (a write transaction's, see store.Tx). LENGTH counts characters in both
// SQLite and PostgreSQL.
func KnowledgeCharacters(ctx context.Context, d Dialect, q QueryFunc, merchantID, except string) (int, error) {
	w := NewWhere(d)
	w.Add("k.merchant_id = ? AND k.id <> ?", merchantID, except)
	n, err := QueryList(ctx, q, `SELECT COALESCE(SUM(LENGTH(k.title) + LENGTH(k.content) + LENGTH(k.questions)), 0) FROM knowledge k WHERE `+w.String(), w.Args, scanInt)
	if err != nil {
		return 0, fmt.Errorf("counting knowledge characters: %w", err)
	}
	return n[0], nil
}

// AllKnowledge returns every item of the merchant, newest first.
func (l Reads) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	query, args := KnowledgeQuery(l.Dialect, merchantID, nil, store.KnowledgeFilter{}, math.MaxInt32)
	items, err := QueryList(ctx, l.Query, query, args, l.ScanKnowledge)
	if err != nil {
		return nil, fmt.Errorf("listing all knowledge: %w", err)
	}
	return items, nil
}

// ListLeads returns a page of the merchant's leads, newest first, and the next page's cursor.
func (l Reads) ListLeads(ctx context.Context, merchantID string, f store.LeadFilter) ([]store.Lead, string, error) {
	return ListPage(KindLeads, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Lead, error) {
		query, args := LeadsQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanLead)
	})
}

// eachLeadPage is how many leads EachLead reads at once: a few hundred kilobytes at most.
const eachLeadPage = 500

// EachLead calls fn with each of the merchant's leads that f keeps, newest first, reading a page at a time: a
// page is read and its rows closed before fn sees its leads.
func (l Reads) EachLead(ctx context.Context, merchantID string, f store.LeadFilter, fn func(store.Lead) error) error {
	var after *Cursor
	for {
		query, args := LeadsQuery(l.Dialect, merchantID, after, f, eachLeadPage)
		page, err := QueryList(ctx, l.Query, query, args, l.ScanLead)
		if err != nil {
			return fmt.Errorf("reading the leads of merchant %s: %w", merchantID, err)
		}
		for _, lead := range page {
			if err := fn(lead); err != nil {
				return err
			}
		}
		if len(page) < eachLeadPage {
			return nil
		}
		at, id := page[len(page)-1].Key()
		after = &Cursor{CreatedAt: Millis(at), ID: id}
	}
}

// ListDeliveries returns a page of the merchant's deliveries, newest first, and the next page's cursor.
func (l Reads) ListDeliveries(ctx context.Context, merchantID string, f store.DeliveryFilter) ([]store.Delivery, string, error) {
	return ListPage(KindDeliveries, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Delivery, error) {
		query, args := DeliveriesQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanDelivery)
	})
}

// QueryFunc runs a read query and returns its rows and the function that closes them.
type QueryFunc func(ctx context.Context, query string, args []any) (Rows, func(), error)

// QueryList runs a read query with query and reads every row with scan.
func QueryList[T any](ctx context.Context, query QueryFunc, q string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	rows, closeRows, err := query(ctx, q, args)
	if err != nil {
		return nil, err
	}
	defer closeRows()
	return Collect(rows, scan)
}

// ConversationsThisMonth returns how many conversations the merchant started in the UTC month of now.
func (l Reads) ConversationsThisMonth(ctx context.Context, merchantID string, now time.Time) (int, error) {
	w := NewWhere(l.Dialect)
	w.Add("merchant_id = ? AND month = ?", merchantID, Month(now))
	counts, err := QueryList(ctx, l.Query, `SELECT count FROM monthly_conversations WHERE `+w.String(), w.Args, scanInt)
	if err != nil {
		return 0, fmt.Errorf("counting conversations of the month: %w", err)
	}
	if len(counts) == 0 {
		return 0, nil
	}
	return counts[0], nil
}

// TokensThisMonth returns the model tokens the merchant's answers took in the UTC month of now.
func (l Reads) TokensThisMonth(ctx context.Context, merchantID string, now time.Time) (int64, error) {
	w := NewWhere(l.Dialect)
	w.Add("merchant_id = ? AND month = ?", merchantID, Month(now))
	counts, err := QueryList(ctx, l.Query, `SELECT tokens FROM monthly_tokens WHERE `+w.String(), w.Args, scanInt64)
	if err != nil {
		return 0, fmt.Errorf("counting model tokens of the month: %w", err)
	}
	if len(counts) == 0 {
		return 0, nil
	}
	return counts[0], nil
}

// VisitorUse returns the answers and model tokens of the conversations the merchant's visitor started since
// then, found through the index conversations_by_visitor: a turn reads that visitor's day of conversations only,
// whose rows count their answers and tokens.
func (l Reads) VisitorUse(ctx context.Context, merchantID, visitorID string, since time.Time) (store.Use, error) {
	query, args := VisitorUseQuery(l.Dialect, merchantID, visitorID, since)
	uses, err := QueryList(ctx, l.Query, query, args, func(row Scanner) (store.Use, error) {
		var u store.Use
		err := row.Scan(&u.Answers, &u.Tokens)
		return u, err
	})
	if err != nil || len(uses) == 0 {
		return store.Use{}, fmt.Errorf("counting the visitor's answers: %w", err)
	}
	return uses[0], nil
}

// VisitorUseQuery is VisitorUse's query and its arguments.
func VisitorUseQuery(d Dialect, merchantID, visitorID string, since time.Time) (string, []any) {
	w := NewWhere(d)
	w.Add("c.merchant_id = ? AND c.visitor_id = ? AND c.created_at >= ?", merchantID, visitorID, since)
	return `SELECT COALESCE(SUM(c.answers), 0), COALESCE(SUM(c.tokens), 0) FROM conversations c WHERE ` + w.String(), w.Args
}

func scanInt64(row Scanner) (int64, error) {
	var n int64
	err := row.Scan(&n)
	return n, err
}

// ConversationExists reports whether the merchant has a conversation with this ID.
func (l Reads) ConversationExists(ctx context.Context, merchantID, id string) (bool, error) {
	w := NewWhere(l.Dialect)
	w.Add("c.merchant_id = ? AND c.id = ?", merchantID, id)
	found, err := QueryList(ctx, l.Query, `SELECT 1 FROM conversations c WHERE `+w.String(), w.Args, scanInt)
	if err != nil {
		return false, fmt.Errorf("looking up conversation %s: %w", id, err)
	}
	return len(found) > 0, nil
}

// ConversationVisitor returns the visitor ID a conversation was started with ("" when none), or
// store.ErrNotFound.
func (l Reads) ConversationVisitor(ctx context.Context, merchantID, id string) (string, error) {
	w := NewWhere(l.Dialect)
	w.Add("c.merchant_id = ? AND c.id = ?", merchantID, id)
	found, err := QueryList(ctx, l.Query, `SELECT c.visitor_id FROM conversations c WHERE `+w.String(), w.Args, scanString)
	if err != nil {
		return "", fmt.Errorf("looking up the visitor of conversation %s: %w", id, err)
	}
	if len(found) == 0 {
		return "", store.ErrNotFound
	}
	return found[0], nil
}

func scanString(row Scanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

func scanInt(row Scanner) (int, error) {
	var n int
	err := row.Scan(&n)
	return n, err
}

// GetConversation returns a conversation and all its messages, oldest first, from one snapshot, or
// store.ErrNotFound.
func (l Reads) GetConversation(ctx context.Context, merchantID, id string) (store.Conversation, []store.Message, error) {
	var (
		c    store.Conversation
		msgs []store.Message
	)
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		var err error
		if c, err = l.getConversation(ctx, q, merchantID, id); err != nil {
			return err
		}
		w := NewWhere(l.Dialect)
		w.Add("m.merchant_id = ? AND m.conversation_id = ?", merchantID, id)
		msgs, err = QueryList(ctx, q, `SELECT `+MessageColumns+` FROM messages m WHERE `+w.String()+` ORDER BY m.created_at, m.seq`, w.Args, l.ScanMessage)
		return err
	})
	if err != nil {
		return store.Conversation{}, nil, fmt.Errorf("getting conversation %s: %w", id, err)
	}
	return c, msgs, nil
}

// ConversationTail returns a conversation and its latest n messages' roles and texts, oldest first, or
// store.ErrNotFound; when n is 0, the conversation alone. The messages come newest first from the index
// messages_by_conversation, which stops after n, and are put back in order. The two are read by two statements
// outside a snapshot, one round trip each instead of four: an exchange written between them may be counted in
// the conversation and not among the messages, or the other way round, which a chat turn does not mind.
func (l Reads) ConversationTail(ctx context.Context, merchantID, id string, n int) (store.Conversation, []store.Turn, error) {
	c, err := l.getConversation(ctx, l.Query, merchantID, id)
	if err != nil {
		return store.Conversation{}, nil, fmt.Errorf("getting conversation %s: %w", id, err)
	}
	if n <= 0 {
		return c, nil, nil
	}
	query, args := TailQuery(l.Dialect, merchantID, id, n)
	turns, err := QueryList(ctx, l.Query, query, args, scanTurn)
	if err != nil {
		return store.Conversation{}, nil, fmt.Errorf("getting the latest messages of conversation %s: %w", id, err)
	}
	slices.Reverse(turns)
	return c, turns, nil
}

// TailQuery is the query of the roles and texts of a conversation's latest n messages, newest first, and its
// arguments.
func TailQuery(d Dialect, merchantID, id string, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("m.merchant_id = ? AND m.conversation_id = ?", merchantID, id)
	return `SELECT m.role, m.text FROM messages m WHERE ` + w.String() +
		` ORDER BY m.created_at DESC, m.seq DESC LIMIT ` + w.Param(n), w.Args
}

// getConversation reads one conversation with q.
func (l Reads) getConversation(ctx context.Context, q QueryFunc, merchantID, id string) (store.Conversation, error) {
	w := NewWhere(l.Dialect)
	w.Add("c.merchant_id = ? AND c.id = ?", merchantID, id)
	return one(QueryList(ctx, q, `SELECT `+ConversationColumns+` FROM conversations c WHERE `+w.String(), w.Args, l.ScanConversation))
}

func scanTurn(row Scanner) (store.Turn, error) {
	var t store.Turn
	err := row.Scan(&t.Role, &t.Text)
	return t, err
}

// GetDelivery returns one delivery with its attempts, oldest first, from one snapshot, or store.ErrNotFound.
func (l Reads) GetDelivery(ctx context.Context, merchantID, id string) (store.Delivery, []store.Attempt, error) {
	var (
		d        store.Delivery
		attempts []store.Attempt
	)
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		w := NewWhere(l.Dialect)
		w.Add("d.merchant_id = ? AND d.id = ?", merchantID, id)
		var err error
		if d, err = one(QueryList(ctx, q, `SELECT `+DeliveryColumns+` FROM `+DeliveriesWithEvents+` WHERE `+w.String(), w.Args, l.ScanDelivery)); err != nil {
			return err
		}
		w = NewWhere(l.Dialect)
		w.Add("a.merchant_id = ? AND a.delivery_id = ?", merchantID, id)
		attempts, err = QueryList(ctx, q, `SELECT `+AttemptColumns+` FROM delivery_attempts a WHERE `+w.String()+` ORDER BY a.attempt`, w.Args, l.ScanAttempt)
		return err
	})
	if err != nil {
		return store.Delivery{}, nil, fmt.Errorf("getting delivery %s: %w", id, err)
	}
	return d, attempts, nil
}

// one returns the only item of a lookup by key, or store.ErrNotFound.
func one[T any](list []T, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if len(list) == 0 {
		return zero, store.ErrNotFound
	}
	return list[0], nil
}

// The bounds of a page of EachConversation: at most eachConversationPage conversations, and no more than
// eachConversationMessages messages unless one conversation alone has more (it holds at most
// store.MaxConversationMessages): a few megabytes at most.
const (
	eachConversationPage     = 100
	eachConversationMessages = 2000
)

// EachConversation calls fn with each of the merchant's conversations that f keeps (its Limit and Cursor aside)
// and its messages, newest first, reading a page of conversations and then their messages in one query; each
// page is read and its rows closed before fn sees its conversations.
func (l Reads) EachConversation(ctx context.Context, merchantID string, f store.ConversationFilter,
	fn func(store.Conversation, []store.Message) error) error {
	var after *Cursor
	for {
		query, args := ConversationsQuery(l.Dialect, merchantID, after, f, eachConversationPage)
		page, err := QueryList(ctx, l.Query, query, args, l.ScanConversation)
		if err != nil {
			return fmt.Errorf("reading the conversations of merchant %s: %w", merchantID, err)
		}
		if len(page) == 0 {
			return nil
		}
		// Cut the page where its messages pass the bound, keeping at least one conversation.
		n, msgs := 0, 0
		for n < len(page) && (n == 0 || msgs+page[n].MessageCount <= eachConversationMessages) {
			msgs += page[n].MessageCount
			n++
		}
		full := len(page) == eachConversationPage || n < len(page)
		page = page[:n]
		messages, err := l.messagesOf(ctx, merchantID, page)
		if err != nil {
			return err
		}
		for _, c := range page {
			if err := fn(c, messages[c.ID]); err != nil {
				return err
			}
		}
		if !full {
			return nil
		}
		at, id := page[len(page)-1].Key()
		after = &Cursor{CreatedAt: Millis(at), ID: id}
	}
}

// messagesOf reads the messages of the conversations, each one's oldest first.
func (l Reads) messagesOf(ctx context.Context, merchantID string, conversations []store.Conversation) (map[string][]store.Message, error) {
	ids := make([]string, len(conversations))
	for i, c := range conversations {
		ids[i] = c.ID
	}
	w := NewWhere(l.Dialect)
	w.Add("m.merchant_id = ?", merchantID)
	w.Add(in(w, "m.conversation_id", ids))
	type conversationMessage struct {
		conversationID string
		msg            store.Message
	}
	rows, err := QueryList(ctx, l.Query, `SELECT m.conversation_id, `+MessageColumns+` FROM messages m WHERE `+w.String()+
		` ORDER BY m.conversation_id, m.created_at, m.seq`, w.Args, func(row Scanner) (conversationMessage, error) {
		var cm conversationMessage
		var err error
		cm.msg, err = l.ScanMessage(prefixed{Scanner: row, first: &cm.conversationID})
		return cm, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the messages of merchant %s's conversations: %w", merchantID, err)
	}
	out := make(map[string][]store.Message, len(conversations))
	for _, cm := range rows {
		out[cm.conversationID] = append(out[cm.conversationID], cm.msg)
	}
	return out, nil
}

// prefixed is a row whose first column is scanned into first, and the others as a scan function reads them.
type prefixed struct {
	Scanner
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.Scanner.Scan(append([]any{p.first}, dest...)...) }

// KnowledgeVectors returns the stored embeddings of the merchant's items' passages, by item and passage.
func (l Reads) KnowledgeVectors(ctx context.Context, merchantID string) ([]store.KnowledgeVector, error) {
	vs, err := QueryList(ctx, l.Query, `SELECT knowledge_id, passage, model, text_hash, vector FROM knowledge_vectors
		WHERE merchant_id = `+l.Dialect.Placeholder(1, "text")+` ORDER BY knowledge_id, passage`, []any{merchantID},
		scanKnowledgeVector)
	if err != nil {
		return nil, fmt.Errorf("reading knowledge vectors: %w", err)
	}
	return vs, nil
}

// KnowledgeVectorStamps returns what the stored embeddings of the merchant's items' passages are of, by item and
// passage, without their vectors: a check of which items need embedding reads no vector.
func (l Reads) KnowledgeVectorStamps(ctx context.Context, merchantID string) ([]store.KnowledgeVector, error) {
	vs, err := QueryList(ctx, l.Query, `SELECT knowledge_id, passage, model, text_hash FROM knowledge_vectors
		WHERE merchant_id = `+l.Dialect.Placeholder(1, "text")+` ORDER BY knowledge_id, passage`, []any{merchantID},
		func(s Scanner) (store.KnowledgeVector, error) {
			var v store.KnowledgeVector
			return v, s.Scan(&v.KnowledgeID, &v.Passage, &v.Model, &v.TextHash)
		})
	if err != nil {
		return nil, fmt.Errorf("reading knowledge vector stamps: %w", err)
	}
	return vs, nil
}

func scanKnowledgeVector(s Scanner) (store.KnowledgeVector, error) {
	var v store.KnowledgeVector
	var raw []byte
	if err := s.Scan(&v.KnowledgeID, &v.Passage, &v.Model, &v.TextHash, &raw); err != nil {
		return v, err
	}
	var err error
	v.Vector, err = DecodeVector(raw)
	return v, err
}

// EncodeVector is a vector as the stores keep it: its values as little-endian IEEE 754 float32s.
func EncodeVector(v []float32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// DecodeVector reads a vector EncodeVector wrote.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("a stored vector of %d bytes, not a multiple of 4", len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}
