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

// InsertEvent writes an event to the outbox.
func (tx writeTx) InsertEvent(ctx context.Context, merchantID string, e store.Event) error {
	_, err := tx.execDeferring(ctx, `INSERT INTO events (merchant_id, id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
		merchantID, e.ID, e.Type, string(e.Payload), storeutil.Millis(e.CreatedAt))
	return err
}

// InsertDelivery writes the delivery of an event to an endpoint: pending, or cancelled when the endpoint is
// disabled, so that the log shows it.
func (tx writeTx) InsertDelivery(ctx context.Context, merchantID string, e store.Event, ep store.Endpoint) error {
	at := storeutil.Millis(e.CreatedAt)
	_, err := tx.execDeferring(ctx, `
		INSERT INTO deliveries (merchant_id, id, event_id, webhook_id, url, status, last_error, next_attempt_at,
			created_at, updated_at)
		SELECT ?1, ?2, ?3, ?4, ?5,
			CASE WHEN d.merchant_id IS NULL THEN 'pending' ELSE 'cancelled' END,
			CASE WHEN d.merchant_id IS NULL THEN '' ELSE ?7 END, ?6, ?6, ?6
		FROM (SELECT 1) LEFT JOIN disabled_endpoints d
			ON d.merchant_id = ?1 AND d.webhook_id = ?4 AND d.url = ?5`,
		merchantID, store.DeliveryID(e.ID, ep.WebhookID), e.ID, ep.WebhookID, ep.URL, at, store.EndpointDisabled)
	return err
}

// ClaimDeliveries leases the due pending deliveries, oldest due first, each merchant's up to perMerchant leases.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.Delivery, error) {
	at := storeutil.Millis(now)
	var claimed []store.Delivery
	err := s.write(ctx, func(tx *txn) error {
		var err error
		claimed, err = queryList(ctx, tx, `SELECT `+storeutil.DeliveryColumns+` FROM `+storeutil.DeliveriesWithEvents+`
			JOIN (`+storeutil.FairDue("?")+`) f ON f.merchant_id = d.merchant_id AND f.id = d.id
			WHERE f.slot <= ?
			ORDER BY d.next_attempt_at, d.seq LIMIT ?`, []any{at, at, at, perMerchant, limit}, scanDelivery)
		if err != nil {
			return err
		}
		for _, d := range claimed {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = ? WHERE merchant_id = ? AND id = ?`,
				storeutil.Millis(now.Add(lease)), d.MerchantID, d.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", err)
	}
	return claimed, nil
}

// RecordAttempt counts and logs an attempt and moves its delivery to the attempt's outcome, ending its lease.
func (tx writeTx) RecordAttempt(ctx context.Context, a store.Attempt) (string, error) {
	at := storeutil.Millis(a.At)
	var (
		attempts  int
		webhookID string
	)
	// An attempt to retry that was in flight while its endpoint was disabled (another delivery's 410) ends the
	// delivery instead: pending again, it would be retried to the disabled endpoint.
	err := tx.QueryRowContext(ctx, `
		UPDATE deliveries SET attempts = attempts + 1,
			status = CASE WHEN ?1 = 'pending' AND EXISTS (SELECT 1 FROM disabled_endpoints e
				WHERE e.merchant_id = deliveries.merchant_id AND e.webhook_id = deliveries.webhook_id AND e.url = ?3)
				THEN 'cancelled' ELSE ?1 END,
			next_attempt_at = ?2, lease_until = 0, url = ?3, last_status_code = ?4, last_error = ?5,
			last_latency_ms = ?6, updated_at = ?7
		WHERE merchant_id = ?8 AND id = ?9 RETURNING attempts, webhook_id`,
		a.Status, storeutil.Millis(a.NextAttemptAt), a.URL, a.StatusCode, a.Error, a.Latency.Milliseconds(), at,
		a.MerchantID, a.DeliveryID).Scan(&attempts, &webhookID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO delivery_attempts
		(merchant_id, delivery_id, attempt, at, url, status_code, latency_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.MerchantID, a.DeliveryID, attempts, at, a.URL, a.StatusCode, a.Latency.Milliseconds(), a.Error)
	return webhookID, err
}

// CancelDelivery ends a delivery that was never sent.
func (tx writeTx) CancelDelivery(ctx context.Context, merchantID, id, reason string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = ?, lease_until = 0,
		updated_at = ? WHERE merchant_id = ? AND id = ?`, reason, storeutil.Millis(at), merchantID, id)
	return err
}

// CancelPending cancels every pending delivery to the webhook except one.
func (tx writeTx) CancelPending(ctx context.Context, merchantID, webhookID, except, reason string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = ?, lease_until = 0,
		updated_at = ? WHERE merchant_id = ? AND webhook_id = ? AND status = 'pending' AND id != ?`,
		reason, storeutil.Millis(at), merchantID, webhookID, except)
	return err
}

// DisableEndpoint marks an endpoint as gone at url.
func (tx writeTx) DisableEndpoint(ctx context.Context, merchantID, webhookID, url string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO disabled_endpoints (merchant_id, webhook_id, url, disabled_at)
		VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, merchantID, webhookID, url, storeutil.Millis(at))
	return err
}

// GetDelivery returns one delivery, or store.ErrNotFound.
func (tx writeTx) GetDelivery(ctx context.Context, merchantID, id string) (store.Delivery, error) {
	return getDelivery(ctx, tx.txn, merchantID, id)
}

func getDelivery(ctx context.Context, tx *txn, merchantID, id string) (store.Delivery, error) {
	return scanDelivery(tx.QueryRowContext(ctx, `SELECT `+storeutil.DeliveryColumns+` FROM `+storeutil.DeliveriesWithEvents+`
		WHERE d.merchant_id = ? AND d.id = ?`, merchantID, id))
}

// ReopenDelivery makes a delivery pending again and enables its endpoint.
func (tx writeTx) ReopenDelivery(ctx context.Context, d store.Delivery, now time.Time) error {
	at := storeutil.Millis(now)
	if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, lease_until = 0,
		last_error = '', updated_at = ? WHERE merchant_id = ? AND id = ?`, at, at, d.MerchantID, d.ID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM disabled_endpoints WHERE merchant_id = ? AND webhook_id = ?`,
		d.MerchantID, d.WebhookID)
	return err
}
