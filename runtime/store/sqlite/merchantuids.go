package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// MerchantUIDs returns the UID recorded for each merchant ID.
func (s *Store) MerchantUIDs(ctx context.Context) (map[string]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT merchant_id, uid FROM merchant_uids`)
	if err != nil {
		return nil, fmt.Errorf("reading merchant UIDs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]string{}
	for rows.Next() {
		var id, uid string
		if err := rows.Scan(&id, &uid); err != nil {
			return nil, fmt.Errorf("reading merchant UIDs: %w", err)
		}
		out[id] = uid
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading merchant UIDs: %w", err)
	}
	return out, nil
}

// MerchantUID returns the UID recorded for the merchant ID, or "". A write transaction holds the whole database,
// so the row is held until it ends.
func (tx writeTx) MerchantUID(ctx context.Context, merchantID string) (string, error) {
	var uid string
	err := tx.QueryRowContext(ctx, `SELECT uid FROM merchant_uids WHERE merchant_id = ?`, merchantID).Scan(&uid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the merchant's UID: %w", err)
	}
	return uid, nil
}

// SetMerchantUID records the merchant ID's UID.
func (tx writeTx) SetMerchantUID(ctx context.Context, merchantID, uid string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO merchant_uids (merchant_id, uid, since) VALUES (?, ?, ?)
		ON CONFLICT (merchant_id) DO UPDATE SET uid = excluded.uid, since = excluded.since`,
		merchantID, uid, storeutil.Millis(at))
	if err != nil {
		return fmt.Errorf("recording the merchant's UID: %w", err)
	}
	return nil
}
