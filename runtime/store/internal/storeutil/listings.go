package storeutil

import (
	"context"
	"fmt"
	"math"
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
	c.first_message, c.unanswered, c.has_lead`
	// KnowledgeColumns are a knowledge item's columns, of the table alias k.
	KnowledgeColumns = `k.merchant_id, k.id, k.title, k.content, k.url, k.tags, k.created_at, k.updated_at, k.use_count`
	// LeadColumns are a lead's columns, of the table alias l.
	LeadColumns = `l.merchant_id, l.id, l.conversation_id, l.visitor_id, l.name, l.email, l.phone, l.message, l.consent,
	l.source, l.created_at, l.updated_at`
	// DeliveryColumns are a delivery's columns and its event's, from DeliveriesWithEvents.
	DeliveryColumns = `d.merchant_id, d.id, d.event_id, e.type, d.webhook_id, d.url, e.payload, e.created_at, d.status,
	d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.last_latency_ms, d.created_at, d.updated_at`
	// DeliveriesWithEvents joins deliveries d to their events e.
	DeliveriesWithEvents = `deliveries d JOIN events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id`
)

// ConversationsQuery is the query of n conversations of a listing after the cursor, and its arguments.
func ConversationsQuery(d Dialect, merchantID string, after *Cursor, f store.ConversationFilter, n int) (string, []any) {
	w := NewWhere(d)
	w.Add("c.merchant_id = ?", merchantID)
	w.After("c", after)
	w.Created("c", f.From, f.To)
	if f.HasLead != nil {
		w.Add("c.has_lead = ?", *f.HasLead)
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
		w.Add("("+d.ContainsFold("k.title")+" OR "+d.ContainsFold("k.content")+")", f.Query, f.Query)
	}
	if f.Tag != "" {
		w.Add(d.HasTag("k.tags"), f.Tag)
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

// Listings are the four listings of a SQL store, written once: a store embeds them with its dialect, its way to
// run a query and its scan functions.
type Listings struct {
	Dialect Dialect
	// Query runs a read query and returns its rows and the function that closes them.
	Query            func(ctx context.Context, query string, args []any) (Rows, func(), error)
	ScanConversation func(Scanner) (store.Conversation, error)
	ScanKnowledge    func(Scanner) (store.Knowledge, error)
	ScanLead         func(Scanner) (store.Lead, error)
	ScanDelivery     func(Scanner) (store.Delivery, error)
}

// ListConversations returns a page of the merchant's conversations, newest first, and the next page's cursor.
func (l Listings) ListConversations(ctx context.Context, merchantID string, f store.ConversationFilter) ([]store.Conversation, string, error) {
	return ListPage(KindConversations, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Conversation, error) {
		query, args := ConversationsQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanConversation)
	})
}

// ListKnowledge returns a page of the merchant's knowledge items, newest first, and the next page's cursor.
func (l Listings) ListKnowledge(ctx context.Context, merchantID string, f store.KnowledgeFilter) ([]store.Knowledge, string, error) {
	return ListPage(KindKnowledge, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Knowledge, error) {
		query, args := KnowledgeQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanKnowledge)
	})
}

// AllKnowledge returns every item of the merchant, newest first.
func (l Listings) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	query, args := KnowledgeQuery(l.Dialect, merchantID, nil, store.KnowledgeFilter{}, math.MaxInt32)
	items, err := QueryList(ctx, l.Query, query, args, l.ScanKnowledge)
	if err != nil {
		return nil, fmt.Errorf("listing all knowledge: %w", err)
	}
	return items, nil
}

// ListLeads returns a page of the merchant's leads, newest first, and the next page's cursor.
func (l Listings) ListLeads(ctx context.Context, merchantID string, f store.LeadFilter) ([]store.Lead, string, error) {
	return ListPage(KindLeads, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Lead, error) {
		query, args := LeadsQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanLead)
	})
}

// ListDeliveries returns a page of the merchant's deliveries, newest first, and the next page's cursor.
func (l Listings) ListDeliveries(ctx context.Context, merchantID string, f store.DeliveryFilter) ([]store.Delivery, string, error) {
	return ListPage(KindDeliveries, merchantID, f.Limit, f.Cursor, func(after *Cursor, n int) ([]store.Delivery, error) {
		query, args := DeliveriesQuery(l.Dialect, merchantID, after, f, n)
		return QueryList(ctx, l.Query, query, args, l.ScanDelivery)
	})
}

// QueryList runs a read query with query and reads every row with scan.
func QueryList[T any](ctx context.Context, query func(context.Context, string, []any) (Rows, func(), error), q string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	rows, closeRows, err := query(ctx, q, args)
	if err != nil {
		return nil, err
	}
	defer closeRows()
	return Collect(rows, scan)
}
