package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// recordAttempt logs one delivery attempt and moves the delivery to the attempt's outcome, ending its lease. An
// attempt that disables the endpoint also cancels the endpoint's other pending deliveries, and marks the
// endpoint so that later deliveries to it are cancelled until a replay re-enables it. An attempt with status
// store.DeliveryCancelled was never sent: it ends the delivery without counting or logging an attempt.
func recordAttempt(ctx context.Context, st store.Store, a store.Attempt) error {
	err := st.Write(ctx, func(tx store.Tx) error {
		if a.Status == store.DeliveryCancelled {
			return tx.CancelDelivery(ctx, a.MerchantID, a.DeliveryID, a.Error, a.At)
		}
		webhookID, err := tx.RecordAttempt(ctx, a)
		if err != nil || !a.DisableEndpoint {
			return err
		}
		if err := tx.DisableEndpoint(ctx, a.MerchantID, webhookID, a.URL, a.At); err != nil {
			return err
		}
		return tx.CancelPending(ctx, a.MerchantID, webhookID, a.DeliveryID, store.EndpointDisabled, a.At)
	})
	if err != nil {
		return fmt.Errorf("recording attempt of delivery %s: %w", a.DeliveryID, err)
	}
	return nil
}

// replayDelivery makes a finished delivery pending again, due at now, with its event unchanged (the same
// webhook-id), and re-enables its endpoint. It returns store.ErrNotFound, or store.ErrNotReplayable for a
// delivery that is still pending.
func replayDelivery(ctx context.Context, st store.Store, merchantID, id string, now time.Time) (store.Delivery, error) {
	now = now.UTC().Truncate(time.Millisecond)
	var d store.Delivery
	err := st.Write(ctx, func(tx store.Tx) error {
		var err error
		if d, err = tx.GetDelivery(ctx, merchantID, id); err != nil {
			return err
		}
		if d.Status == store.DeliveryPending {
			return store.ErrNotReplayable
		}
		if err := tx.ReopenDelivery(ctx, d, now); err != nil {
			return err
		}
		d.Status, d.NextAttemptAt, d.LastError, d.UpdatedAt = store.DeliveryPending, now, "", now
		return nil
	})
	if err != nil {
		return store.Delivery{}, fmt.Errorf("replaying delivery %s: %w", id, err)
	}
	return d, nil
}

// Outbox is the webhook dispatcher's view of the store: the due deliveries and the outcome of each attempt.
type Outbox struct {
	Store store.Store
}

// ClaimDeliveries leases up to limit due deliveries until now+lease, at most perMerchant of one merchant at once.
func (o Outbox) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit, perMerchant int) ([]store.Delivery, error) {
	return o.Store.ClaimDeliveries(ctx, now, lease, limit, perMerchant)
}

// RecordAttempt records an attempt's outcome; see the function recordAttempt.
func (o Outbox) RecordAttempt(ctx context.Context, a store.Attempt) error {
	return recordAttempt(ctx, o.Store, a)
}
