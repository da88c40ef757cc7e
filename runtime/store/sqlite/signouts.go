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
