package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
)

// personalTable is one table of the personal data map: its name, and the conditions, after merchant_id = $1, that
// select the rows of the conversation or the lead $2; "" where the table holds nothing of one (counters,
// knowledge, keys: a conversation's deletion does not give its month's slot back).
//
// expires names the retention that deletes its rows, and expired the condition, after merchant_id = $1, that
// selects the rows of the expired records whose IDs the array $2 holds ("" where no retention deletes them).
type personalTable struct {
	name               string
	conversation, lead string
	expires            store.Expiring
	expired            string
}

// expiringRecords selects, for each kind of record a retention deletes, the IDs of up to $3 of the merchant $1's
// records last changed before $2, oldest first.
var expiringRecords = map[store.Expiring]string{
	store.ExpiringConversations: `SELECT id FROM conversations WHERE merchant_id = $1 AND updated_at < $2 ORDER BY updated_at LIMIT $3`,
	store.ExpiringLeads:         `SELECT id FROM leads WHERE merchant_id = $1 AND updated_at < $2 ORDER BY updated_at LIMIT $3`,
	store.ExpiringDeliveries:    `SELECT id FROM events WHERE merchant_id = $1 AND created_at < $2 ORDER BY created_at LIMIT $3`,
}

// The events of a conversation or a lead, known by their payloads (the data of the webhook payloads, public wire
// format): a conversation's own event and the events of its leads name it; a lead's events name the lead.
const (
	conversationEvents = `SELECT id FROM events WHERE merchant_id = $1 AND payload::jsonb -> 'data' ->> 'conversation_id' = $2`
	leadEvents         = `SELECT id FROM events WHERE merchant_id = $1 AND payload::jsonb -> 'data' ->> 'lead_id' = $2`
)

// personalData maps every table that holds a merchant's data, children before their parents (deliveries refer
// to events, messages to conversations): EraseMerchant deletes the merchant's rows from each, DeleteConversation
// and DeleteLead the rows their conditions select. A table added to the schema must be added here (the schema
// test fails otherwise) and say what of a conversation or a lead it holds (the conformance suite's deletion test
// finds what it keeps).
var personalData = []personalTable{
	{name: "delivery_attempts",
		conversation: `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = $1 AND event_id IN (` + conversationEvents + `))`,
		lead:         `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = $1 AND event_id IN (` + leadEvents + `))`,
		expires:      store.ExpiringDeliveries,
		expired:      `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = $1 AND event_id = ANY($2::text[]))`},
	{name: "deliveries", conversation: `event_id IN (` + conversationEvents + `)`, lead: `event_id IN (` + leadEvents + `)`,
		expires: store.ExpiringDeliveries, expired: `event_id = ANY($2::text[])`},
	{name: "events", conversation: `id IN (` + conversationEvents + `)`, lead: `id IN (` + leadEvents + `)`,
		expires: store.ExpiringDeliveries, expired: `id = ANY($2::text[])`},
	{name: "disabled_endpoints"},
	{name: "answer_ratings", conversation: `conversation_id = $2`,
		expires: store.ExpiringConversations, expired: `conversation_id = ANY($2::text[])`},
	{name: "conversation_ratings", conversation: `conversation_id = $2`,
		expires: store.ExpiringConversations, expired: `conversation_id = ANY($2::text[])`},
	{name: "stream_events", conversation: `conversation_id = $2`,
		expires: store.ExpiringConversations, expired: `conversation_id = ANY($2::text[])`},
	{name: "messages", conversation: `conversation_id = $2`,
		expires: store.ExpiringConversations, expired: `conversation_id = ANY($2::text[])`},
	{name: "leads", conversation: `conversation_id = $2`, lead: `id = $2`,
		expires: store.ExpiringLeads, expired: `id = ANY($2::text[])`},
	{name: "conversations", conversation: `id = $2`,
		expires: store.ExpiringConversations, expired: `id = ANY($2::text[])`},
	{name: "monthly_conversations"},
	{name: "monthly_tokens"},
	{name: "knowledge_uses"},
	{name: "knowledge_vectors"},
	{name: "knowledge"},
	{name: "source_pages"},
	{name: "knowledge_sources"},
	{name: "review_fixes"},
	{name: "knowledge_state"},
	{name: "api_keys"},
	{name: "stream_heads"},
	{name: "team_presence"},
	{name: "leases"},
	{name: "merchant_uids"}, // whose Merchant the rest is
}

// merchantTables are the names of the tables of personalData.
var merchantTables = func() []string {
	names := make([]string, len(personalData))
	for i, t := range personalData {
		names[i] = t.name
	}
	return names
}()

// EraseMerchant deletes the merchant's rows from every table, in the caller's transaction.
func (tx writeTx) EraseMerchant(ctx context.Context, merchantID string) (int64, error) {
	tx.flushCounts() // the counts of exchanges written before in the transaction are erased too
	var total int64
	for _, table := range merchantTables {
		tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE merchant_id = $1`, merchantID)
		if err != nil {
			return 0, fmt.Errorf("erasing %s: %w", table, err)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}

// DeleteConversation deletes a conversation and everything of it: its messages (their citations with them), its
// leads, and the events of both with their deliveries and attempts. It returns how many rows it deleted, or
// store.ErrNotFound.
func (tx writeTx) DeleteConversation(ctx context.Context, merchantID, id string) (int64, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM conversations WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
		merchantID, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("finding conversation: %w", err)
	}
	return tx.deleteRecord(ctx, merchantID, id, func(t personalTable) string { return t.conversation })
}

// DeleteLead deletes a lead, its events with their deliveries and attempts, and clears its conversation's lead
// flag when it was the conversation's last lead. It returns how many rows it deleted, or store.ErrNotFound.
func (tx writeTx) DeleteLead(ctx context.Context, merchantID, id string) (int64, error) {
	var conversationID string
	err := tx.QueryRow(ctx, `SELECT conversation_id FROM leads WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
		merchantID, id).Scan(&conversationID)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("finding lead: %w", err)
	}
	n, err := tx.deleteRecord(ctx, merchantID, id, func(t personalTable) string { return t.lead })
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE conversations SET has_lead = EXISTS (SELECT 1 FROM leads
		WHERE merchant_id = $1 AND conversation_id = $2) WHERE merchant_id = $1 AND id = $2`, merchantID, conversationID); err != nil {
		return 0, fmt.Errorf("updating the lead's conversation: %w", err)
	}
	return n, nil
}

// DeleteExpired deletes up to limit of the merchant's records of the kind last changed before before, with what
// belongs to them in every table of the map.
func (tx writeTx) DeleteExpired(ctx context.Context, merchantID string, kind store.Expiring, before time.Time, limit int) (int, int64, error) {
	query, ok := expiringRecords[kind]
	if !ok {
		return 0, 0, fmt.Errorf("no retention of %q", kind)
	}
	rows, err := tx.Query(ctx, query, merchantID, stamp(before), limit)
	if err != nil {
		return 0, 0, fmt.Errorf("finding expired %s: %w", kind, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return 0, 0, err
	}
	var total int64
	for _, t := range personalData {
		if t.expires != kind {
			continue
		}
		tag, err := tx.Exec(ctx, `DELETE FROM `+t.name+` WHERE merchant_id = $1 AND `+t.expired, merchantID, ids)
		if err != nil {
			return 0, 0, fmt.Errorf("deleting expired %s from %s: %w", kind, t.name, err)
		}
		total += tag.RowsAffected()
	}
	return len(ids), total, nil
}

// ClaimLease takes or renews the merchant's lease name for holder, unless another holder's has not ended; with
// ttl 0 it ends holder's lease, if there is one.
func (tx writeTx) ClaimLease(ctx context.Context, merchantID, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		tag, err := tx.Exec(ctx, `UPDATE leases SET until = $1 WHERE merchant_id = $2 AND name = $3 AND holder = $4`,
			stamp(now), merchantID, name, holder)
		if err != nil {
			return false, fmt.Errorf("releasing lease %s: %w", name, err)
		}
		return tag.RowsAffected() == 1, nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO leases (merchant_id, name, holder, until) VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id, name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.holder = excluded.holder OR leases.until <= $5`,
		merchantID, name, holder, stamp(now.Add(ttl)), stamp(now))
	if err != nil {
		return false, fmt.Errorf("claiming lease %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// deleteRecord deletes, from every table of the map that holds some, the rows of the record id that cond selects.
func (tx writeTx) deleteRecord(ctx context.Context, merchantID, id string, cond func(personalTable) string) (int64, error) {
	var total int64
	for _, t := range personalData {
		c := cond(t)
		if c == "" {
			continue
		}
		tag, err := tx.Exec(ctx, `DELETE FROM `+t.name+` WHERE merchant_id = $1 AND `+c, merchantID, id)
		if err != nil {
			return 0, fmt.Errorf("deleting from %s: %w", t.name, err)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}
