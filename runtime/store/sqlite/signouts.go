package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

// SignedOutAt returns when the dashboard user last signed out, or the zero time.
func (s *Store) SignedOutAt(ctx context.Context, subject string) (time.Time, error) {
	var ms int64
	err := s.reader.QueryRowContext(ctx, `SELECT signed_out_at FROM dashboard_sign_outs WHERE subject = ?`, subject).Scan(&ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("reading the last sign-out: %w", err)
	}
	return storeutil.FromMillis(ms), nil
}

// RecordSignOut records the sign-out, unless a later one is recorded.
func (tx writeTx) RecordSignOut(ctx context.Context, subject string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_sign_outs (subject, signed_out_at) VALUES (?, ?)
		ON CONFLICT (subject) DO UPDATE SET signed_out_at = MAX(signed_out_at, excluded.signed_out_at)`,
		subject, storeutil.Millis(at))
	if err != nil {
		return fmt.Errorf("recording a sign-out: %w", err)
	}
	return nil
}

// RedeemSignIn records the sign-in as redeemed, unless it was already, and forgets those expired.
func (tx writeTx) RedeemSignIn(ctx context.Context, stateSHA256 string, expires, now time.Time) (bool, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sign_ins WHERE expires_at <= ?`, storeutil.Millis(now)); err != nil {
		return false, fmt.Errorf("forgetting expired sign-ins: %w", err)
	}
	n, err := affected(tx.ExecContext(ctx, `INSERT INTO dashboard_sign_ins (state_sha256, expires_at) VALUES (?, ?)
		ON CONFLICT (state_sha256) DO NOTHING`, stateSHA256, storeutil.Millis(expires)))
	if err != nil {
		return false, fmt.Errorf("redeeming a sign-in: %w", err)
	}
	return n == 1, nil
}
