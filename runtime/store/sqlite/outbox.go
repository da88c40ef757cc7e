package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// endpointDisabled says why deliveries to an endpoint that answered 410 Gone are cancelled.
const endpointDisabled = "the endpoint answered 410 Gone and is disabled until a delivery to it is replayed"

// writeEvents writes events and one delivery per endpoint to the outbox, and returns the number of deliveries.
// A delivery to a disabled endpoint is written as cancelled, so that the log shows it.
func writeEvents(ctx context.Context, tx *txn, merchantID string, events []storeutil.Event) (int, error) {
	n := 0
	for _, e := range events {
		at := storeutil.Millis(e.CreatedAt)
		_, err := tx.ExecContext(ctx, `INSERT INTO events (merchant_id, id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
			merchantID, e.ID, e.Type, string(e.Payload), at)
		if err != nil {
			return 0, fmt.Errorf("writing event %s: %w", e.ID, err)
		}
		for _, ep := range e.Endpoints {
			_, err := tx.ExecContext(ctx, `
				INSERT INTO deliveries (merchant_id, id, event_id, webhook_id, url, status, last_error, next_attempt_at,
					created_at, updated_at)
				SELECT ?1, ?2, ?3, ?4, ?5,
					CASE WHEN d.merchant_id IS NULL THEN 'pending' ELSE 'cancelled' END,
					CASE WHEN d.merchant_id IS NULL THEN '' ELSE ?7 END, ?6, ?6, ?6
				FROM (SELECT 1) LEFT JOIN disabled_endpoints d
					ON d.merchant_id = ?1 AND d.webhook_id = ?4 AND d.url = ?5`,
				merchantID, storeutil.DeliveryID(e.ID, ep.WebhookID), e.ID, ep.WebhookID, ep.URL, at, endpointDisabled)
			if err != nil {
				return 0, fmt.Errorf("writing delivery of event %s to %s: %w", e.ID, ep.WebhookID, err)
			}
			n++
		}
	}
	return n, nil
}

const deliveryColumns = `d.merchant_id, d.id, d.event_id, e.type, d.webhook_id, d.url, e.payload, e.created_at, d.status,
	d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.last_latency_ms, d.created_at, d.updated_at`

const deliveriesWithEvents = `deliveries d JOIN events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id`

// scanDelivery reads deliveryColumns; no row is store.ErrNotFound.
func scanDelivery(row rowScanner) (store.Delivery, error) {
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

// ClaimDeliveries leases the due pending deliveries, oldest due first.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.Delivery, error) {
	at := storeutil.Millis(now)
	var claimed []store.Delivery
	err := s.write(ctx, func(tx *txn) error {
		var err error
		claimed, err = queryList(ctx, tx, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ?
			ORDER BY d.next_attempt_at, d.seq LIMIT ?`, []any{at, at, limit}, scanDelivery)
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

// RecordAttempt logs an attempt and moves its delivery to the attempt's outcome.
func (s *Store) RecordAttempt(ctx context.Context, a store.Attempt) error {
	at := storeutil.Millis(a.At)
	err := s.write(ctx, func(tx *txn) error {
		if a.Status == store.DeliveryCancelled {
			_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = ?, lease_until = 0,
				updated_at = ? WHERE merchant_id = ? AND id = ?`, a.Error, at, a.MerchantID, a.DeliveryID)
			return err
		}
		var (
			attempts  int
			webhookID string
		)
		err := tx.QueryRowContext(ctx, `
			UPDATE deliveries SET attempts = attempts + 1, status = ?, next_attempt_at = ?, lease_until = 0, url = ?,
				last_status_code = ?, last_error = ?, last_latency_ms = ?, updated_at = ?
			WHERE merchant_id = ? AND id = ? RETURNING attempts, webhook_id`,
			a.Status, storeutil.Millis(a.NextAttemptAt), a.URL, a.StatusCode, a.Error, a.Latency.Milliseconds(), at,
			a.MerchantID, a.DeliveryID).Scan(&attempts, &webhookID)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO delivery_attempts
			(merchant_id, delivery_id, attempt, at, url, status_code, latency_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			a.MerchantID, a.DeliveryID, attempts, at, a.URL, a.StatusCode, a.Latency.Milliseconds(), a.Error)
		if err != nil || !a.DisableEndpoint {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO disabled_endpoints (merchant_id, webhook_id, url, disabled_at)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, a.MerchantID, webhookID, a.URL, at); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = ?, lease_until = 0,
			updated_at = ? WHERE merchant_id = ? AND webhook_id = ? AND status = 'pending' AND id != ?`,
			endpointDisabled, at, a.MerchantID, webhookID, a.DeliveryID)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording attempt of delivery %s: %w", a.DeliveryID, err)
	}
	return nil
}

// ListDeliveries returns a page of the merchant's deliveries, newest first, and the next page's cursor.
func (s *Store) ListDeliveries(ctx context.Context, merchantID string, f store.DeliveryFilter) ([]store.Delivery, string, error) {
	conds := []string{"d.merchant_id = ?"}
	args := []any{merchantID}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindDeliveries, merchantID)
		if err != nil {
			return nil, "", fmt.Errorf("listing deliveries: %w", err)
		}
		conds = append(conds, "(d.created_at, d.id) < (?, ?)")
		args = append(args, cur.CreatedAt, cur.ID)
	}
	for _, eq := range []struct{ column, value string }{
		{"d.status", f.Status}, {"e.type", f.EventType}, {"d.webhook_id", f.WebhookID},
	} {
		if eq.value != "" {
			conds = append(conds, eq.column+" = ?")
			args = append(args, eq.value)
		}
	}
	if !f.From.IsZero() {
		conds = append(conds, "d.created_at >= ?")
		args = append(args, storeutil.Millis(f.From))
	}
	if !f.To.IsZero() {
		conds = append(conds, "d.created_at < ?")
		args = append(args, storeutil.Millis(f.To))
	}
	size := storeutil.PageSize(f.Limit)
	list, err := queryList(ctx, s.reader, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY d.created_at DESC, d.id DESC LIMIT ?`, append(args, size+1), scanDelivery)
	if err != nil {
		return nil, "", fmt.Errorf("listing deliveries: %w", err)
	}
	page, next := storeutil.Page(list, size, storeutil.KindDeliveries, merchantID, func(d store.Delivery) (time.Time, string) { return d.CreatedAt, d.ID })
	return page, next, nil
}

// GetDelivery returns a delivery and its attempts, oldest first.
func (s *Store) GetDelivery(ctx context.Context, merchantID, id string) (store.Delivery, []store.Attempt, error) {
	var (
		d        store.Delivery
		attempts []store.Attempt
	)
	err := s.read(ctx, func(tx *txn) error {
		var err error
		d, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
			WHERE d.merchant_id = ? AND d.id = ?`, merchantID, id))
		if err != nil {
			return err
		}
		attempts, err = queryList(ctx, tx, `SELECT merchant_id, delivery_id, at, url, status_code, latency_ms, error
			FROM delivery_attempts WHERE merchant_id = ? AND delivery_id = ? ORDER BY attempt`,
			[]any{merchantID, id}, scanAttempt)
		return err
	})
	if err != nil {
		return store.Delivery{}, nil, fmt.Errorf("getting delivery %s: %w", id, err)
	}
	return d, attempts, nil
}

func scanAttempt(row rowScanner) (store.Attempt, error) {
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

// ReplayDelivery makes a finished delivery pending again and enables its endpoint.
func (s *Store) ReplayDelivery(ctx context.Context, merchantID, id string, now time.Time) (store.Delivery, error) {
	at := storeutil.Millis(now)
	var d store.Delivery
	err := s.write(ctx, func(tx *txn) error {
		var err error
		d, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
			WHERE d.merchant_id = ? AND d.id = ?`, merchantID, id))
		if err != nil {
			return err
		}
		if d.Status == store.DeliveryPending {
			return store.ErrNotReplayable
		}
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, lease_until = 0,
			last_error = '', updated_at = ? WHERE merchant_id = ? AND id = ?`, at, at, merchantID, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM disabled_endpoints WHERE merchant_id = ? AND webhook_id = ?`,
			merchantID, d.WebhookID)
		d.Status, d.NextAttemptAt, d.LastError, d.UpdatedAt = store.DeliveryPending, storeutil.FromMillis(at), "", storeutil.FromMillis(at)
		return err
	})
	if err != nil {
		return store.Delivery{}, fmt.Errorf("replaying delivery %s: %w", id, err)
	}
	return d, nil
}
