package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// ConversationForUpdate reads a conversation in the write transaction; SQLite's one writer keeps it unchanged
// until the transaction ends.
func (tx writeTx) ConversationForUpdate(ctx context.Context, merchantID, id string) (store.Conversation, error) {
	c, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+storeutil.ConversationColumns+` FROM conversations c
		WHERE c.merchant_id = ? AND c.id = ?`, merchantID, id))
	if err != nil {
		return store.Conversation{}, fmt.Errorf("reading conversation %s: %w", id, err)
	}
	return c, nil
}

// SetConversationStatus moves the conversation to status; the first move to waiting records its time.
func (tx writeTx) SetConversationStatus(ctx context.Context, merchantID, id string, status store.Status, at time.Time) error {
	ms := storeutil.Millis(at)
	n, err := affected(tx.ExecContext(ctx, `UPDATE conversations SET status = ?,
			handoff_at = CASE WHEN ? = 'waiting' AND handoff_at = 0 THEN ? ELSE handoff_at END
		WHERE merchant_id = ? AND id = ?`, string(status), string(status), ms, merchantID, id))
	if err != nil {
		return fmt.Errorf("moving conversation %s to %s: %w", id, status, err)
	}
	if n == 0 {
		return fmt.Errorf("moving conversation %s to %s: %w", id, status, store.ErrNotFound)
	}
	return nil
}

// AppendMessage inserts one message and counts it in its conversation, whose trigger keeps it within the cap.
func (tx writeTx) AppendMessage(ctx context.Context, merchantID, conversationID string, m store.Message) error {
	at := storeutil.Millis(m.CreatedAt)
	agentAt := int64(0)
	if m.Role == store.RoleAgent {
		agentAt = at
	}
	n, err := affected(tx.ExecContext(ctx, `UPDATE conversations SET message_count = message_count + 1,
			updated_at = MAX(updated_at, ?),
			agent_reply_at = CASE WHEN agent_reply_at = 0 THEN ? ELSE agent_reply_at END
		WHERE merchant_id = ? AND id = ?`, at, agentAt, merchantID, conversationID))
	if err != nil {
		return fmt.Errorf("counting message %s: %w", m.ID, refusal(err))
	}
	if n == 0 {
		return fmt.Errorf("adding message %s to conversation %s: %w", m.ID, conversationID, store.ErrNotFound)
	}
	normalized := ""
	if m.Role == store.RoleVisitor {
		normalized = storeutil.NormalizeQuestion(m.Text)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO messages (merchant_id, conversation_id, id, role, text, normalized,
		created_at, answered, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		merchantID, conversationID, m.ID, string(m.Role), m.Text, normalized, at, boolInt(m.Answered), m.Author)
	if err != nil {
		return fmt.Errorf("inserting message %s: %w", m.ID, err)
	}
	return nil
}

// AppendStreamEvent numbers the event one past the merchant's head and stores it. SQLite has one writer, so the
// numbers follow the commits.
func (tx writeTx) AppendStreamEvent(ctx context.Context, merchantID string, e store.StreamEvent) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `INSERT INTO stream_heads (merchant_id, seq) VALUES (?, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET seq = seq + 1 RETURNING seq`, merchantID).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("numbering stream event: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO stream_events (merchant_id, seq, conversation_id, type, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, merchantID, seq, e.ConversationID, e.Type, string(e.Payload), storeutil.Millis(e.CreatedAt))
	if err != nil {
		return 0, fmt.Errorf("writing stream event: %w", err)
	}
	return seq, nil
}

// TouchTeamPresence records when the merchant's team was last seen.
func (tx writeTx) TouchTeamPresence(ctx context.Context, merchantID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO team_presence (merchant_id, seen_at) VALUES (?, ?)
		ON CONFLICT (merchant_id) DO UPDATE SET seen_at = MAX(seen_at, excluded.seen_at)`, merchantID, storeutil.Millis(at))
	if err != nil {
		return fmt.Errorf("recording the team's presence: %w", err)
	}
	return nil
}

// StreamEvents reads the merchant's stream events after f.After, oldest first.
func (s *Store) StreamEvents(ctx context.Context, merchantID string, f store.StreamFilter) ([]store.StreamEvent, error) {
	query, args := `SELECT seq, conversation_id, type, payload, created_at FROM stream_events
		WHERE merchant_id = ? AND seq > ?`, []any{merchantID, f.After}
	if f.ConversationID != "" {
		query += ` AND conversation_id = ?`
		args = append(args, f.ConversationID)
	}
	query += ` ORDER BY seq LIMIT ?`
	args = append(args, storeutil.StreamLimit(f.Limit))
	events, err := queryList(ctx, s.reader, query, args, scanStreamEvent)
	if err != nil {
		return nil, fmt.Errorf("reading stream events: %w", err)
	}
	return events, nil
}

// StreamHead returns the number of the merchant's latest stream event.
func (s *Store) StreamHead(ctx context.Context, merchantID string) (int64, error) {
	var seq int64
	err := s.reader.QueryRowContext(ctx, `SELECT seq FROM stream_heads WHERE merchant_id = ?`, merchantID).Scan(&seq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("reading the stream's head: %w", err)
	}
	return seq, nil
}

// TeamSeenAt returns when the merchant's team was last seen, or the zero time.
func (s *Store) TeamSeenAt(ctx context.Context, merchantID string) (time.Time, error) {
	var ms int64
	err := s.reader.QueryRowContext(ctx, `SELECT seen_at FROM team_presence WHERE merchant_id = ?`, merchantID).Scan(&ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("reading the team's presence: %w", err)
	}
	return storeutil.FromMillis(ms), nil
}

func scanStreamEvent(row storeutil.Scanner) (store.StreamEvent, error) {
	var (
		e       store.StreamEvent
		payload string
		at      int64
	)
	if err := row.Scan(&e.Seq, &e.ConversationID, &e.Type, &payload, &at); err != nil {
		return store.StreamEvent{}, fmt.Errorf("reading stream event: %w", err)
	}
	e.Payload, e.CreatedAt = []byte(payload), storeutil.FromMillis(at)
	return e, nil
}
