package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// endpointDisabled says why deliveries to an endpoint that answered 410 Gone are cancelled.
const endpointDisabled = "the endpoint answered 410 Gone and is disabled until a delivery to it is replayed"

// writeEvents writes events and one delivery per endpoint to the outbox, and returns the number of deliveries.
// A delivery to a disabled endpoint is written as cancelled, so that the log shows it.
func writeEvents(ctx context.Context, tx pgx.Tx, merchantID string, events []storeutil.Event) (int, error) {
	n := 0
	for _, e := range events {
		at := stamp(e.CreatedAt)
		_, err := tx.Exec(ctx, `INSERT INTO events (merchant_id, id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
			merchantID, e.ID, e.Type, string(e.Payload), at)
		if err != nil {
			return 0, fmt.Errorf("writing event %s: %w", e.ID, err)
		}
		for _, ep := range e.Endpoints {
			_, err := tx.Exec(ctx, `
				INSERT INTO deliveries (merchant_id, id, event_id, webhook_id, url, status, last_error, next_attempt_at,
					created_at, updated_at)
				SELECT $1, $2, $3, $4, $5,
					CASE WHEN d.merchant_id IS NULL THEN 'pending' ELSE 'cancelled' END,
					CASE WHEN d.merchant_id IS NULL THEN '' ELSE $7 END, $6, $6, $6
				FROM (SELECT 1) one LEFT JOIN disabled_endpoints d
					ON d.merchant_id = $1 AND d.webhook_id = $4 AND d.url = $5`,
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
func scanDelivery(row pgx.Row) (store.Delivery, error) {
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

// ClaimDeliveries leases the due pending deliveries, oldest due first. SKIP LOCKED lets replicas claiming at the
// same time take disjoint deliveries instead of waiting on one another.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.Delivery, error) {
	var claimed []store.Delivery
	err := s.write(ctx, func(tx pgx.Tx) error {
		var err error
		claimed, err = queryList(ctx, tx, `
			WITH due AS (
				SELECT merchant_id, id FROM deliveries
				WHERE status = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1
				ORDER BY next_attempt_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED)
			UPDATE deliveries d SET lease_until = $2 FROM due, events e
			WHERE d.merchant_id = due.merchant_id AND d.id = due.id AND e.merchant_id = d.merchant_id AND e.id = d.event_id
			RETURNING `+deliveryColumns, []any{stamp(now), stamp(now.Add(lease)), limit}, scanDelivery)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", err)
	}
	slices.SortStableFunc(claimed, func(a, b store.Delivery) int { return a.NextAttemptAt.Compare(b.NextAttemptAt) })
	return claimed, nil
}

// RecordAttempt logs an attempt and moves its delivery to the attempt's outcome.
func (s *Store) RecordAttempt(ctx context.Context, a store.Attempt) error {
	at := stamp(a.At)
	err := s.write(ctx, func(tx pgx.Tx) error {
		if a.Status == store.DeliveryCancelled {
			return mustAffect(tx.Exec(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = $1, lease_until = 'epoch',
				updated_at = $2 WHERE merchant_id = $3 AND id = $4`, a.Error, at, a.MerchantID, a.DeliveryID))
		}
		var (
			attempts  int
			webhookID string
		)
		err := tx.QueryRow(ctx, `
			UPDATE deliveries SET attempts = attempts + 1, status = $1, next_attempt_at = $2, lease_until = 'epoch',
				url = $3, last_status_code = $4, last_error = $5, last_latency_ms = $6, updated_at = $7
			WHERE merchant_id = $8 AND id = $9 RETURNING attempts, webhook_id`,
			a.Status, stamp(a.NextAttemptAt), a.URL, a.StatusCode, a.Error, a.Latency.Milliseconds(), at,
			a.MerchantID, a.DeliveryID).Scan(&attempts, &webhookID)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO delivery_attempts
			(merchant_id, delivery_id, attempt, at, url, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			a.MerchantID, a.DeliveryID, attempts, at, a.URL, a.StatusCode, a.Latency.Milliseconds(), a.Error)
		if err != nil || !a.DisableEndpoint {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO disabled_endpoints (merchant_id, webhook_id, url, disabled_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, a.MerchantID, webhookID, a.URL, at); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'cancelled', last_error = $1, lease_until = 'epoch',
			updated_at = $2 WHERE merchant_id = $3 AND webhook_id = $4 AND status = 'pending' AND id <> $5`,
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
	var p params
	conds := []string{"d.merchant_id = " + p.add(merchantID)}
	if f.Cursor != "" {
		cur, err := storeutil.DecodeCursor(f.Cursor, storeutil.KindDeliveries, merchantID)
		if err != nil {
			return nil, "", fmt.Errorf("listing deliveries: %w", err)
		}
		conds = append(conds, "(d.created_at, d.id) < ("+p.add(storeutil.FromMillis(cur.CreatedAt))+"::timestamptz, "+p.add(cur.ID)+"::text)")
	}
	for _, eq := range []struct{ column, value string }{
		{"d.status", f.Status}, {"e.type", f.EventType}, {"d.webhook_id", f.WebhookID},
	} {
		if eq.value != "" {
			conds = append(conds, eq.column+" = "+p.add(eq.value))
		}
	}
	conds = timeBounds(conds, &p, "d.created_at", f.From, f.To)
	size := storeutil.PageSize(f.Limit)
	list, err := queryList(ctx, s.pool, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY d.created_at DESC, d.id DESC LIMIT `+p.add(size+1), p, scanDelivery)
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
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		d, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
			WHERE d.merchant_id = $1 AND d.id = $2`, merchantID, id))
		if err != nil {
			return err
		}
		attempts, err = queryList(ctx, tx, `SELECT merchant_id, delivery_id, at, url, status_code, latency_ms, error
			FROM delivery_attempts WHERE merchant_id = $1 AND delivery_id = $2 ORDER BY attempt`,
			[]any{merchantID, id}, scanAttempt)
		return err
	})
	if err != nil {
		return store.Delivery{}, nil, fmt.Errorf("getting delivery %s: %w", id, err)
	}
	return d, attempts, nil
}

func scanAttempt(row pgx.Row) (store.Attempt, error) {
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

// ReplayDelivery makes a finished delivery pending again and enables its endpoint.
func (s *Store) ReplayDelivery(ctx context.Context, merchantID, id string, now time.Time) (store.Delivery, error) {
	at := stamp(now)
	var d store.Delivery
	err := s.write(ctx, func(tx pgx.Tx) error {
		var err error
		d, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM `+deliveriesWithEvents+`
			WHERE d.merchant_id = $1 AND d.id = $2 FOR UPDATE OF d`, merchantID, id))
		if err != nil {
			return err
		}
		if d.Status == store.DeliveryPending {
			return store.ErrNotReplayable
		}
		if _, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $1, lease_until = 'epoch',
			last_error = '', updated_at = $1 WHERE merchant_id = $2 AND id = $3`, at, merchantID, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM disabled_endpoints WHERE merchant_id = $1 AND webhook_id = $2`, merchantID, d.WebhookID)
		d.Status, d.NextAttemptAt, d.LastError, d.UpdatedAt = store.DeliveryPending, at, "", at
		return err
	})
	if err != nil {
		return store.Delivery{}, fmt.Errorf("replaying delivery %s: %w", id, err)
	}
	return d, nil
}
