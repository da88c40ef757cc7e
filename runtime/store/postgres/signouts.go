package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SignedOutAt returns when the dashboard user last signed out, or the zero time.
func (s *Store) SignedOutAt(ctx context.Context, subject string) (time.Time, error) {
	var at time.Time
	err := s.pool.QueryRow(ctx, `SELECT signed_out_at FROM dashboard_sign_outs WHERE subject = $1`, subject).Scan(&at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("reading the last sign-out: %w", err)
	}
	return at.UTC(), nil
}

// RecordSignOut records the sign-out, unless a later one is recorded.
func (tx writeTx) RecordSignOut(ctx context.Context, subject string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO dashboard_sign_outs AS s (subject, signed_out_at) VALUES ($1, $2)
		ON CONFLICT (subject) DO UPDATE SET signed_out_at = GREATEST(s.signed_out_at, excluded.signed_out_at)`,
		subject, stamp(at))
	if err != nil {
		return fmt.Errorf("recording a sign-out: %w", err)
	}
	return nil
}

// RedeemSignIn records the sign-in as redeemed, unless it was already, and forgets those expired.
func (tx writeTx) RedeemSignIn(ctx context.Context, stateSHA256 string, expires, now time.Time) (bool, error) {
	if _, err := tx.Exec(ctx, `DELETE FROM dashboard_sign_ins WHERE expires_at <= $1`, stamp(now)); err != nil {
		return false, fmt.Errorf("forgetting expired sign-ins: %w", err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO dashboard_sign_ins (state_sha256, expires_at) VALUES ($1, $2)
		ON CONFLICT (state_sha256) DO NOTHING`, stateSHA256, stamp(expires))
	if err != nil {
		return false, fmt.Errorf("redeeming a sign-in: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
