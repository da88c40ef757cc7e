package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// InsertEvent writes an event to the outbox.
func (tx writeTx) InsertEvent(ctx context.Context, merchantID string, e store.Event) error {
	tx.queue("writing event "+e.ID, `INSERT INTO events (merchant_id, id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
		merchantID, e.ID, e.Type, string(e.Payload), stamp(e.CreatedAt))
	return nil
}

// InsertDelivery writes the delivery of an event to an endpoint: pending, or cancelled when the endpoint is
// disabled, so that the log shows it.
func (tx writeTx) InsertDelivery(ctx context.Context, merchantID string, e store.Event, ep store.Endpoint) error {
	at := stamp(e.CreatedAt)
	tx.queue(fmt.Sprintf("writing delivery of event %s to %s", e.ID, ep.WebhookID), `
		INSERT INTO deliveries (merchant_id, id, event_id, webhook_id, url, status, last_error, next_attempt_at,
			created_at, updated_at)
		SELECT $1, $2, $3, $4, $5,
			CASE WHEN d.merchant_id IS NULL THEN 'pending' ELSE 'cancelled' END,
			CASE WHEN d.merchant_id IS NULL THEN '' ELSE $7 END, $6, $6, $6
		FROM (SELECT 1) one LEFT JOIN disabled_endpoints d
			ON d.merchant_id = $1 AND d.webhook_id = $4 AND d.url = $5`,
		merchantID, store.DeliveryID(e.ID, ep.WebhookID), e.ID, ep.WebhookID, ep.URL, at, store.EndpointDisabled)
	return nil
}

// ClaimDeliveries leases the due pending deliveries, oldest due first, each merchant's up to perMerchant leases.
// SKIP LOCKED lets replicas claiming at the same time take disjoint deliveries instead of waiting on one another
// (two replicas claiming at the same instant may together pass perMerchant, by at most one claim's worth).
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.Delivery, error) {
	// One statement: it is its own transaction.
	claimed, err := queryList(ctx, s.pool, `
		WITH fair AS (`+storeutil.FairDue("$1")+`),
		due AS (
			SELECT x.merchant_id, x.id FROM deliveries x JOIN fair f ON f.merchant_id = x.merchant_id AND f.id = x.id
			WHERE f.slot <= $3 AND x.status = 'pending' AND x.next_attempt_at <= $1 AND x.lease_until <= $1
			ORDER BY x.next_attempt_at, x.seq LIMIT $4 FOR UPDATE OF x SKIP LOCKED)
		UPDATE deliveries d SET lease_until = $2 FROM due, events e
		WHERE d.merchant_id = due.merchant_id AND d.id = due.id AND e.merchant_id = d.merchant_id AND e.id = d.event_id
		RETURNING `+storeutil.DeliveryColumns, []any{stamp(now), stamp(now.Add(lease)), perMerchant, limit}, scanDelivery)
	if err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", err)
	}
	slices.SortStableFunc(claimed, func(a, b store.Delivery) int { return a.NextAttemptAt.Compare(b.NextAttemptAt) })
	return claimed, nil
}

// RecordAttempt counts and logs an attempt, moves its delivery to the attempt's outcome and ends its lease. It
// returns the delivery's endpoint, or store.ErrNotFound.
func (tx writeTx) RecordAttempt(ctx context.Context, a store.Attempt) (string, error) {
	at := stamp(a.At)
	var (
		attempts  int
		webhookID string
	)
	// An attempt to retry that was in flight while its endpoint was disabled (another delivery's 410) ends the
	// delivery instead: pending again, it would be retried to the disabled endpoint.
	err := tx.QueryRow(ctx, `
		UPDATE deliveries SET attempts = attempts + 1,
			status = CASE WHEN $1::text = 'pending' AND EXISTS (SELECT 1 FROM disabled_endpoints e
				WHERE e.merchant_id = deliveries.merchant_id AND e.webhook_id = deliveries.webhook_id AND e.url = $3)
				THEN 'cancelled' ELSE $1::text END,
			next_attempt_at = $2, lease_until = 'epoch', url = $3, last_status_code = $4, last_error = $5,
			last_latency_ms = $6, updated_at = $7
		WHERE merchant_id = $8 AND id = $9 RETURNING attempts, webhook_id`,
		a.Status, stamp(a.NextAttemptAt), a.URL, a.StatusCode, a.Error, a.Latency.Milliseconds(), at,
		a.MerchantID, a.DeliveryID).Scan(&attempts, &webhookID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("updating delivery: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO delivery_attempts
		(merchant_id, delivery_id, attempt, at, url, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.MerchantID, a.DeliveryID, attempts, at, a.URL, a.StatusCode, a.Latency.Milliseconds(), a.Error)
	if err != nil {
		return "", fmt.Errorf("logging attempt %d: %w", attempts, err)
	}
	return webhookID, nil
}

// CancelDelivery ends a delivery that was never sent, with reason as its last error and no lease, or returns
// store.ErrNotFound.
func (tx writeTx) CancelDelivery(ctx context.Context, merchantID, id, reason string, at time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = $1, lease_until = 'epoch',
		updated_at = $2 WHERE merchant_id = $3 AND id = $4`, reason, stamp(at), merchantID, id)
	if err := mustAffect(tag, err); err != nil {
		return fmt.Errorf("cancelling delivery %s: %w", id, err)
	}
	return nil
}

// CancelPending cancels, with reason, every pending delivery to the webhook except the one named.
func (tx writeTx) CancelPending(ctx context.Context, merchantID, webhookID, except, reason string, at time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = $1, lease_until = 'epoch',
		updated_at = $2 WHERE merchant_id = $3 AND webhook_id = $4 AND status = 'pending' AND id <> $5`,
		reason, stamp(at), merchantID, webhookID, except)
	if err != nil {
		return fmt.Errorf("cancelling pending deliveries to %s: %w", webhookID, err)
	}
	return nil
}

// DisableEndpoint marks an endpoint as gone at url; marking it again changes nothing.
func (tx writeTx) DisableEndpoint(ctx context.Context, merchantID, webhookID, url string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO disabled_endpoints (merchant_id, webhook_id, url, disabled_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, merchantID, webhookID, url, stamp(at))
	if err != nil {
		return fmt.Errorf("disabling endpoint %s: %w", webhookID, err)
	}
	return nil
}

// GetDelivery returns one delivery, locked until the transaction ends, or store.ErrNotFound.
func (tx writeTx) GetDelivery(ctx context.Context, merchantID, id string) (store.Delivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, `SELECT `+storeutil.DeliveryColumns+` FROM `+storeutil.DeliveriesWithEvents+`
		WHERE d.merchant_id = $1 AND d.id = $2 FOR UPDATE OF d`, merchantID, id))
	if err != nil {
		return store.Delivery{}, fmt.Errorf("getting delivery %s: %w", id, err)
	}
	return d, nil
}

// ReopenDelivery makes a delivery pending again, due at now, with no lease and no last error, and enables its
// endpoint again.
func (tx writeTx) ReopenDelivery(ctx context.Context, d store.Delivery, now time.Time) error {
	at := stamp(now)
	if _, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $1, lease_until = 'epoch',
		last_error = '', updated_at = $1 WHERE merchant_id = $2 AND id = $3`, at, d.MerchantID, d.ID); err != nil {
		return fmt.Errorf("reopening delivery %s: %w", d.ID, err)
	}
	_, err := tx.Exec(ctx, `DELETE FROM disabled_endpoints WHERE merchant_id = $1 AND webhook_id = $2`,
		d.MerchantID, d.WebhookID)
	if err != nil {
		return fmt.Errorf("enabling endpoint %s: %w", d.WebhookID, err)
	}
	return nil
}
