package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// personalTable is one table of the personal data map: its name, and the conditions, after merchant_id = ?1, that
// select the rows of the conversation or the lead ?2; "" where the table holds nothing of one (counters,
// knowledge, keys: a conversation's deletion does not give its month's slot back). expires names the retention
// that deletes its rows, and expired the condition, after merchant_id = ?1, that selects the rows of the expired
// records whose IDs ?2 holds as a JSON array ("" where no retention deletes the table's rows).
type personalTable struct {
	name               string
	conversation, lead string
	expires            store.Expiring
	expired            string
}

// expiredIDs are the IDs of expired records, ?2 of a personalTable's expired condition.
const expiredIDs = `SELECT value FROM json_each(?2)`

// expiringRecords selects, for each kind of record a retention deletes, the IDs of up to ?3 of the merchant ?1's
// records last changed before ?2, oldest first.
var expiringRecords = map[store.Expiring]string{
	store.ExpiringConversations: `SELECT id FROM conversations WHERE merchant_id = ?1 AND updated_at < ?2 ORDER BY updated_at LIMIT ?3`,
	store.ExpiringLeads:         `SELECT id FROM leads WHERE merchant_id = ?1 AND updated_at < ?2 ORDER BY updated_at LIMIT ?3`,
	store.ExpiringDeliveries:    `SELECT id FROM events WHERE merchant_id = ?1 AND created_at < ?2 ORDER BY created_at LIMIT ?3`,
}

// The events of a conversation or a lead, known by their payloads (the data of the webhook payloads, public wire
// format): a conversation's own event and the events of its leads name it; a lead's events name the lead.
const (
	conversationEvents = `SELECT id FROM events WHERE merchant_id = ?1 AND json_extract(payload, '$.data.conversation_id') = ?2`
	leadEvents         = `SELECT id FROM events WHERE merchant_id = ?1 AND json_extract(payload, '$.data.lead_id') = ?2`
)

// personalData maps every table that holds a merchant's data, children before their parents (deliveries refer
// to events, messages to conversations): EraseMerchant deletes the merchant's rows from each, DeleteConversation
// and DeleteLead the rows their conditions select. A table added to the schema must be added here (the schema
// test fails otherwise) and say what of a conversation or a lead it holds (the conformance suite's deletion test
// finds what it keeps).
var personalData = []personalTable{
	{name: "delivery_attempts",
		conversation: `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = ?1 AND event_id IN (` + conversationEvents + `))`,
		lead:         `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = ?1 AND event_id IN (` + leadEvents + `))`,
		expires:      store.ExpiringDeliveries,
		expired:      `delivery_id IN (SELECT id FROM deliveries WHERE merchant_id = ?1 AND event_id IN (` + expiredIDs + `))`},
	{name: "deliveries", conversation: `event_id IN (` + conversationEvents + `)`, lead: `event_id IN (` + leadEvents + `)`,
		expires: store.ExpiringDeliveries, expired: `event_id IN (` + expiredIDs + `)`},
	{name: "events", conversation: `id IN (` + conversationEvents + `)`, lead: `id IN (` + leadEvents + `)`,
		expires: store.ExpiringDeliveries, expired: `id IN (` + expiredIDs + `)`},
	{name: "disabled_endpoints"},
	{name: "answer_ratings", conversation: `conversation_id = ?2`,
		expires: store.ExpiringConversations, expired: `conversation_id IN (` + expiredIDs + `)`},
	{name: "conversation_ratings", conversation: `conversation_id = ?2`,
		expires: store.ExpiringConversations, expired: `conversation_id IN (` + expiredIDs + `)`},
	{name: "stream_events", conversation: `conversation_id = ?2`,
		expires: store.ExpiringConversations, expired: `conversation_id IN (` + expiredIDs + `)`},
	{name: "messages", conversation: `conversation_id = ?2`,
		expires: store.ExpiringConversations, expired: `conversation_id IN (` + expiredIDs + `)`},
	{name: "leads", conversation: `conversation_id = ?2`, lead: `id = ?2`,
		expires: store.ExpiringLeads, expired: `id IN (` + expiredIDs + `)`},
	{name: "conversations", conversation: `id = ?2`,
		expires: store.ExpiringConversations, expired: `id IN (` + expiredIDs + `)`},
	{name: "monthly_conversations"},
	{name: "monthly_tokens"},
	{name: "knowledge_uses"},
	{name: "knowledge_vectors"},
	{name: "knowledge"},
	{name: "source_pages"},
	{name: "knowledge_sources"},
	{name: "review_fixes"},
	{name: "knowledge_revisions"},
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

// EraseMerchant deletes the merchant's rows from every table, in the caller's transaction, and gives the freed
// pages back to the file system.
func (tx writeTx) EraseMerchant(ctx context.Context, merchantID string) (int64, error) {
	var total int64
	for _, table := range merchantTables {
		n, err := affected(tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE merchant_id = ?`, merchantID))
		if err != nil {
			return 0, fmt.Errorf("erasing %s: %w", table, err)
		}
		total += n
	}
	return total, tx.reclaim(ctx)
}

// DeleteConversation deletes a conversation and everything of it: its messages (their citations with them), its
// leads, and the events of both with their deliveries and attempts. It returns how many rows it deleted, or
// store.ErrNotFound.
func (tx writeTx) DeleteConversation(ctx context.Context, merchantID, id string) (int64, error) {
	if err := tx.mustExist(ctx, `SELECT 1 FROM conversations WHERE merchant_id = ? AND id = ?`, merchantID, id); err != nil {
		return 0, err
	}
	return tx.deleteRecord(ctx, merchantID, id, func(t personalTable) string { return t.conversation })
}

// DeleteLead deletes a lead, its events with their deliveries and attempts, and clears its conversation's lead
// flag when it was the conversation's last lead. It returns how many rows it deleted, or store.ErrNotFound.
func (tx writeTx) DeleteLead(ctx context.Context, merchantID, id string) (int64, error) {
	var conversationID string
	err := tx.QueryRowContext(ctx, `SELECT conversation_id FROM leads WHERE merchant_id = ? AND id = ?`,
		merchantID, id).Scan(&conversationID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("finding lead: %w", err)
	}
	n, err := tx.deleteRecord(ctx, merchantID, id, func(t personalTable) string { return t.lead })
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE conversations SET has_lead = EXISTS (SELECT 1 FROM leads
		WHERE merchant_id = ?1 AND conversation_id = ?2) WHERE merchant_id = ?1 AND id = ?2`, merchantID, conversationID); err != nil {
		return 0, fmt.Errorf("updating the lead's conversation: %w", err)
	}
	return n, nil
}

// DeleteExpired deletes up to limit of the merchant's records of the kind last changed before before, with what
// belongs to them in every table of the map. The last batch of a sweep (fewer records than limit) gives the freed
// pages back and has the log emptied, once: after every batch, the log's truncation would hold the chat's writes
// up (BenchmarkSweepUnderChat), and secure_delete has overwritten the rows already.
func (tx writeTx) DeleteExpired(ctx context.Context, merchantID string, kind store.Expiring, before time.Time, limit int) (int, int64, error) {
	query, ok := expiringRecords[kind]
	if !ok {
		return 0, 0, fmt.Errorf("no retention of %q", kind)
	}
	rows, err := tx.QueryContext(ctx, query, merchantID, storeutil.Millis(before), limit)
	if err != nil {
		return 0, 0, fmt.Errorf("finding expired %s: %w", kind, err)
	}
	ids, err := storeutil.Collect(rows, func(row storeutil.Scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
	_ = rows.Close()
	if err != nil {
		return 0, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, t := range personalData {
		if t.expires != kind {
			continue
		}
		n, err := affected(tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE merchant_id = ?1 AND `+t.expired, merchantID, string(list)))
		if err != nil {
			return 0, 0, fmt.Errorf("deleting expired %s from %s: %w", kind, t.name, err)
		}
		total += n
	}
	if len(ids) < limit {
		return len(ids), total, tx.reclaim(ctx)
	}
	return len(ids), total, nil
}

// ClaimLease takes or renews the merchant's lease name for holder, unless another holder's has not ended; with
// ttl 0 it ends holder's lease, if there is one.
func (tx writeTx) ClaimLease(ctx context.Context, merchantID, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		n, err := affected(tx.ExecContext(ctx, `UPDATE leases SET until = ? WHERE merchant_id = ? AND name = ? AND holder = ?`,
			storeutil.Millis(now), merchantID, name, holder))
		if err != nil {
			return false, fmt.Errorf("releasing lease %s: %w", name, err)
		}
		return n == 1, nil
	}
	n, err := affected(tx.ExecContext(ctx, `INSERT INTO leases (merchant_id, name, holder, until) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (merchant_id, name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.holder = excluded.holder OR leases.until <= ?5`,
		merchantID, name, holder, storeutil.Millis(now.Add(ttl)), storeutil.Millis(now)))
	if err != nil {
		return false, fmt.Errorf("claiming lease %s: %w", name, err)
	}
	return n == 1, nil
}

func (tx writeTx) mustExist(ctx context.Context, query string, args ...any) error {
	var one int
	err := tx.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// deleteRecord deletes, from every table of the map that holds some, the rows of the record id that cond selects.
func (tx writeTx) deleteRecord(ctx context.Context, merchantID, id string, cond func(personalTable) string) (int64, error) {
	var total int64
	for _, t := range personalData {
		c := cond(t)
		if c == "" {
			continue
		}
		n, err := affected(tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE merchant_id = ?1 AND `+c, merchantID, id))
		if err != nil {
			return 0, fmt.Errorf("deleting from %s: %w", t.name, err)
		}
		total += n
	}
	return total, tx.reclaim(ctx)
}

// reclaim gives the pages a deletion freed back to the file system (auto_vacuum is INCREMENTAL: migration 16),
// so that the file shrinks after a large erasure, secure_delete having overwritten what they held; and has the
// checkpointer empty the log, whose older frames still hold the deleted rows.
func (tx writeTx) reclaim(ctx context.Context) error {
	if _, err := tx.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("reclaiming free pages: %w", err)
	}
	tx.erased()
	return nil
}
