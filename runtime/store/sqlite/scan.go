package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// The row readers: SQLite keeps times as unix milliseconds, tags and sources as JSON text.

// scanMessage reads a message: id, role, text, created_at, sources, answered.
func scanMessage(row storeutil.Scanner) (store.Message, error) {
	var (
		m       store.Message
		at      int64
		sources string
	)
	if err := row.Scan(&m.ID, &m.Role, &m.Text, &at, &sources, &m.Answered, &m.Author, &m.Confidence); err != nil {
		return store.Message{}, fmt.Errorf("reading message: %w", err)
	}
	m.CreatedAt = storeutil.FromMillis(at)
	return storeutil.WithSources(m, sources)
}

// scanConversation reads storeutil.ConversationColumns; no row is store.ErrNotFound.
func scanConversation(row storeutil.Scanner) (store.Conversation, error) {
	var (
		c                                store.Conversation
		created, updated, handoff, reply int64
	)
	err := row.Scan(&c.MerchantID, &c.ID, &c.VisitorID, &created, &updated, &c.MessageCount, &c.FirstMessage,
		&c.Unanswered, &c.HasLead, &c.Status, &handoff, &reply, &c.Answers, &c.Tokens)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Conversation{}, store.ErrNotFound
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	c.HandoffAt, c.AgentReplyAt = optionalMillis(handoff), optionalMillis(reply)
	return c, nil
}

// scanKnowledge reads storeutil.KnowledgeColumns; no row is store.ErrNotFound.
func scanKnowledge(row storeutil.Scanner) (store.Knowledge, error) {
	var (
		k                store.Knowledge
		tags, questions  string
		created, updated int64
	)
	err := row.Scan(&k.MerchantID, &k.ID, &k.Title, &k.Content, &k.URL, &tags, &questions, &k.Draft, &k.Curated, &k.SourceID, &k.File,
		&created, &updated,
		&k.UseCount)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Knowledge{}, store.ErrNotFound
	}
	if err != nil {
		return store.Knowledge{}, fmt.Errorf("reading knowledge item: %w", err)
	}
	if err := json.Unmarshal([]byte(tags), &k.Tags); err != nil {
		return store.Knowledge{}, fmt.Errorf("reading tags of knowledge item %s: %w", k.ID, err)
	}
	if len(k.Tags) == 0 {
		k.Tags = nil
	}
	k.Questions = store.SplitQuestions(questions)
	k.CreatedAt, k.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return k, nil
}

// scanLead reads storeutil.LeadColumns; no row is store.ErrNotFound.
func scanLead(row storeutil.Scanner) (store.Lead, error) {
	var (
		l                store.Lead
		created, updated int64
	)
	err := row.Scan(&l.MerchantID, &l.ID, &l.ConversationID, &l.VisitorID, &l.Name, &l.Email, &l.Phone, &l.Message,
		&l.Consent, &l.Source, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Lead{}, store.ErrNotFound
	}
	if err != nil {
		return store.Lead{}, fmt.Errorf("reading lead: %w", err)
	}
	l.CreatedAt, l.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(updated)
	return l, nil
}

// scanDelivery reads storeutil.DeliveryColumns; no row is store.ErrNotFound.
func scanDelivery(row storeutil.Scanner) (store.Delivery, error) {
	var (
		d                                   store.Delivery
		payload                             string
		eventAt, next, latency, created, up int64
	)
	err := row.Scan(&d.MerchantID, &d.ID, &d.EventID, &d.EventType, &d.WebhookID, &d.URL, &payload, &eventAt,
		&d.Status, &d.Attempts, &next, &d.LastStatusCode, &d.LastError, &latency, &created, &up)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Delivery{}, store.ErrNotFound
	}
	if err != nil {
		return store.Delivery{}, fmt.Errorf("reading delivery: %w", err)
	}
	d.Payload = []byte(payload)
	d.EventCreatedAt, d.NextAttemptAt = storeutil.FromMillis(eventAt), storeutil.FromMillis(next)
	d.CreatedAt, d.UpdatedAt = storeutil.FromMillis(created), storeutil.FromMillis(up)
	d.LastLatency = time.Duration(latency) * time.Millisecond
	return d, nil
}

func scanAttempt(row storeutil.Scanner) (store.Attempt, error) {
	var (
		a           store.Attempt
		at, latency int64
	)
	if err := row.Scan(&a.MerchantID, &a.DeliveryID, &at, &a.URL, &a.StatusCode, &latency, &a.Error); err != nil {
		return store.Attempt{}, fmt.Errorf("reading attempt: %w", err)
	}
	a.At, a.Latency = storeutil.FromMillis(at), time.Duration(latency)*time.Millisecond
	return a, nil
}

// optionalMillis is a time kept as unix milliseconds where 0 means none: the zero time for 0.
func optionalMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return storeutil.FromMillis(ms)
}
