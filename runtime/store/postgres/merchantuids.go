package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MerchantUIDs returns the UID recorded for each merchant ID.
func (s *Store) MerchantUIDs(ctx context.Context) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, uid FROM merchant_uids`)
	if err != nil {
		return nil, fmt.Errorf("reading merchant UIDs: %w", err)
	}
	out := map[string]string{}
	var id, uid string
	_, err = pgx.ForEachRow(rows, []any{&id, &uid}, func() error {
		out[id] = uid
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading merchant UIDs: %w", err)
	}
	return out, nil
}

// MerchantUID returns the UID recorded for the merchant ID, or "", and locks its row until the transaction ends:
// two replicas admitting a new Merchant at once erase its predecessor's data once, and the second then finds the
// row gone or the new UID.
func (tx writeTx) MerchantUID(ctx context.Context, merchantID string) (string, error) {
	var uid string
	err := tx.QueryRow(ctx, `SELECT uid FROM merchant_uids WHERE merchant_id = $1 FOR UPDATE`, merchantID).Scan(&uid)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the merchant's UID: %w", err)
	}
	return uid, nil
}

// SetMerchantUID records the merchant ID's UID.
func (tx writeTx) SetMerchantUID(ctx context.Context, merchantID, uid string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO merchant_uids (merchant_id, uid, since) VALUES ($1, $2, $3)
		ON CONFLICT (merchant_id) DO UPDATE SET uid = excluded.uid, since = excluded.since`,
		merchantID, uid, stamp(at))
	if err != nil {
		return fmt.Errorf("recording the merchant's UID: %w", err)
	}
	return nil
}
