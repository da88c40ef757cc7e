package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// The row readers: PostgreSQL keeps times as timestamptz, tags as text[] and sources as jsonb.

// scanMessage reads a message: id, role, text, created_at, sources, answered.
func scanMessage(row storeutil.Scanner) (store.Message, error) {
	var (
		m             store.Message
		role, sources string
	)
	if err := row.Scan(&m.ID, &role, &m.Text, &m.CreatedAt, &sources, &m.Answered, &m.Author, &m.Confidence); err != nil {
		return store.Message{}, fmt.Errorf("reading message: %w", err)
	}
	m.Role, m.CreatedAt = store.Role(role), m.CreatedAt.UTC()
	return storeutil.WithSources(m, sources)
}

// scanConversation reads storeutil.ConversationColumns; no row is store.ErrNotFound.
func scanConversation(row storeutil.Scanner) (store.Conversation, error) {
	var (
		c                store.Conversation
		status           string
		handoff, replied *time.Time
	)
	err := row.Scan(&c.MerchantID, &c.ID, &c.VisitorID, &c.CreatedAt, &c.UpdatedAt, &c.MessageCount, &c.FirstMessage,
		&c.Unanswered, &c.HasLead, &status, &handoff, &replied, &c.Answers, &c.Tokens)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Conversation{}, store.ErrNotFound
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation: %w", err)
	}
	c.CreatedAt, c.UpdatedAt, c.Status = c.CreatedAt.UTC(), c.UpdatedAt.UTC(), store.Status(status)
	if handoff != nil {
		c.HandoffAt = handoff.UTC()
	}
	if replied != nil {
		c.AgentReplyAt = replied.UTC()
	}
	return c, nil
}

// scanKnowledge reads storeutil.KnowledgeColumns; no row is store.ErrNotFound.
func scanKnowledge(row storeutil.Scanner) (store.Knowledge, error) {
	var (
		k         store.Knowledge
		questions string
	)
	err := row.Scan(&k.MerchantID, &k.ID, &k.Title, &k.Content, &k.URL, &k.Tags, &questions, &k.Draft, &k.Curated, &k.SourceID, &k.File,
		&k.CreatedAt, &k.UpdatedAt,
		&k.UseCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Knowledge{}, store.ErrNotFound
	}
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("reading knowledge item: %w", err)
	}
	if len(k.Tags) == 0 {
		k.Tags = nil
	}
	k.Questions = store.SplitQuestions(questions)
	k.CreatedAt, k.UpdatedAt = k.CreatedAt.UTC(), k.UpdatedAt.UTC()
	return k, nil
}

// scanLead reads storeutil.LeadColumns; no row is store.ErrNotFound.
func scanLead(row storeutil.Scanner) (store.Lead, error) {
	var l store.Lead
	err := row.Scan(&l.MerchantID, &l.ID, &l.ConversationID, &l.VisitorID, &l.Name, &l.Email, &l.Phone, &l.Message,
		&l.Consent, &l.Source, &l.CreatedAt, &l.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Lead{}, store.ErrNotFound
	}
	if err != nil {
		return store.Lead{}, fmt.Errorf("reading lead: %w", err)
	}
	l.CreatedAt, l.UpdatedAt = l.CreatedAt.UTC(), l.UpdatedAt.UTC()
	return l, nil
}

// scanDelivery reads storeutil.DeliveryColumns; no row is store.ErrNotFound.
func scanDelivery(row storeutil.Scanner) (store.Delivery, error) {
	var (
		d       store.Delivery
		payload string
		latency int64
	)
	err := row.Scan(&d.MerchantID, &d.ID, &d.EventID, &d.EventType, &d.WebhookID, &d.URL, &payload, &d.EventCreatedAt,
		&d.Status, &d.Attempts, &d.NextAttemptAt, &d.LastStatusCode, &d.LastError, &latency, &d.CreatedAt, &d.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Delivery{}, store.ErrNotFound
	}
	if err != nil {
		return store.Delivery{}, fmt.Errorf("reading delivery: %w", err)
	}
	d.Payload = []byte(payload)
	d.LastLatency = time.Duration(latency) * time.Millisecond
	for _, t := range []*time.Time{&d.EventCreatedAt, &d.NextAttemptAt, &d.CreatedAt, &d.UpdatedAt} {
		*t = t.UTC()
	}
	return d, nil
}

func scanAttempt(row storeutil.Scanner) (store.Attempt, error) {
	var (
		a       store.Attempt
		latency int64
	)
	if err := row.Scan(&a.MerchantID, &a.DeliveryID, &a.At, &a.URL, &a.StatusCode, &latency, &a.Error); err != nil {
		return store.Attempt{}, fmt.Errorf("reading attempt: %w", err)
	}
	a.At, a.Latency = a.At.UTC(), time.Duration(latency)*time.Millisecond
	return a, nil
}
