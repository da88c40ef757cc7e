package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// ConversationForUpdate reads a conversation and locks its row until the transaction ends, so that two status
// changes of one conversation, on any replicas, happen one after the other.
func (tx writeTx) ConversationForUpdate(ctx context.Context, merchantID, id string) (store.Conversation, error) {
	c, err := scanConversation(tx.QueryRow(ctx, `SELECT `+storeutil.ConversationColumns+` FROM conversations c
		WHERE c.merchant_id = $1 AND c.id = $2 FOR UPDATE`, merchantID, id))
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation %s: %w", id, err)
	}
	return c, nil
}

// SetConversationStatus moves the conversation to status; the first move to waiting records its time.
func (tx writeTx) SetConversationStatus(ctx context.Context, merchantID, id string, status store.Status, at time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE conversations SET status = $1,
			handoff_at = CASE WHEN $1 = 'waiting' THEN COALESCE(handoff_at, $2) ELSE handoff_at END
		WHERE merchant_id = $3 AND id = $4`, string(status), stamp(at), merchantID, id)
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("moving conversation %s to %s: %w", id, status, err)
	}
	return nil
}

// AppendMessage counts one message in its conversation, whose CHECK keeps it within the cap, and inserts it.
func (tx writeTx) AppendMessage(ctx context.Context, merchantID, conversationID string, m store.Message) error {
	at := stamp(m.CreatedAt)
	tag, err := tx.Exec(ctx, `UPDATE conversations SET message_count = message_count + 1,
			updated_at = GREATEST(updated_at, $1),
			agent_reply_at = CASE WHEN $2 THEN COALESCE(agent_reply_at, $1) ELSE agent_reply_at END
		WHERE merchant_id = $3 AND id = $4`, at, m.Role == store.RoleAgent, merchantID, conversationID)
	if err := mustAffect(tag, refusal(err)); err != nil {
		return fmt.Errorf("adding message %s to conversation %s: %w", m.ID, conversationID, err)
	}
	normalized := ""
	if m.Role == store.RoleVisitor {
		normalized = storeutil.NormalizeQuestion(m.Text)
	}
	tx.queue("inserting message "+m.ID, `INSERT INTO messages (merchant_id, conversation_id, id, role, text, normalized,
		created_at, answered, author) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		merchantID, conversationID, m.ID, string(m.Role), m.Text, normalized, at, m.Answered, m.Author)
	return nil
}

// AppendStreamEvent numbers the event one past the merchant's head, whose row stays locked until the transaction
// ends: the merchant's events are numbered in the order their transactions commit, with no gap a reader could
// pass before the lower number commits.
func (tx writeTx) AppendStreamEvent(ctx context.Context, merchantID string, e store.StreamEvent) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, `INSERT INTO stream_heads AS h (merchant_id, seq) VALUES ($1, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET seq = h.seq + 1 RETURNING seq`, merchantID).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("numbering stream event: %w", err)
	}
	tx.queue("writing stream event", `INSERT INTO stream_events (merchant_id, seq, conversation_id, type, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, merchantID, seq, e.ConversationID, e.Type, string(e.Payload), stamp(e.CreatedAt))
	return seq, nil
}

// TouchTeamPresence records when the merchant's team was last seen.
func (tx writeTx) TouchTeamPresence(ctx context.Context, merchantID string, at time.Time) error {
	tx.queue("recording the team's presence", `INSERT INTO team_presence AS p (merchant_id, seen_at) VALUES ($1, $2)
		ON CONFLICT (merchant_id) DO UPDATE SET seen_at = GREATEST(p.seen_at, excluded.seen_at)`, merchantID, stamp(at))
	return nil
}

// StreamEvents reads the merchant's stream events after f.After, oldest first.
func (s *Store) StreamEvents(ctx context.Context, merchantID string, f store.StreamFilter) ([]store.StreamEvent, error) {
	query, args := `SELECT seq, conversation_id, type, payload, created_at FROM stream_events
		WHERE merchant_id = $1 AND seq > $2`, []any{merchantID, f.After}
	if f.ConversationID != "" {
		query += ` AND conversation_id = $4`
		args = append(args, storeutil.StreamLimit(f.Limit), f.ConversationID)
	} else {
		args = append(args, storeutil.StreamLimit(f.Limit))
	}
	events, err := queryList(ctx, s.pool, query+` ORDER BY seq LIMIT $3`, args, scanStreamEvent)
	if err != nil {
		return nil, fmt.Errorf("reading stream events: %w", err)
	}
	return events, nil
}

// StreamHead returns the number of the merchant's latest stream event.
func (s *Store) StreamHead(ctx context.Context, merchantID string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM stream_heads WHERE merchant_id = $1`, merchantID).Scan(&seq)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("reading the stream's head: %w", err)
	}
	return seq, nil
}

// TeamSeenAt returns when the merchant's team was last seen, or the zero time.
func (s *Store) TeamSeenAt(ctx context.Context, merchantID string) (time.Time, error) {
	var at time.Time
	err := s.pool.QueryRow(ctx, `SELECT seen_at FROM team_presence WHERE merchant_id = $1`, merchantID).Scan(&at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("reading the team's presence: %w", err)
	}
	return at.UTC(), nil
}

func scanStreamEvent(row storeutil.Scanner) (store.StreamEvent, error) {
	var (
		e       store.StreamEvent
		payload string
	)
	if err := row.Scan(&e.Seq, &e.ConversationID, &e.Type, &payload, &e.CreatedAt); err != nil {
		return store.StreamEvent{}, fmt.Errorf("reading stream event: %w", err)
	}
	e.Payload, e.CreatedAt = []byte(payload), e.CreatedAt.UTC()
	return e, nil
}
