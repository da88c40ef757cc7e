package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// RedeemSignIn takes the dashboard sign-in of state, valid until expires, once: it reports false when it was
// taken already, by this replica or another sharing the store, so that a copy of the sign-in's callback (its
// address and cookie) cannot sign in a second time. Only the state's hash is kept.
func (s *Service) RedeemSignIn(ctx context.Context, state string, expires time.Time) (bool, error) {
	sum := sha256.Sum256([]byte(state))
	now := s.now().UTC()
	var fresh bool
	err := s.store.Write(ctx, func(tx store.Tx) (err error) {
		fresh, err = tx.RedeemSignIn(ctx, hex.EncodeToString(sum[:]), expires.UTC(), now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("redeeming a sign-in: %w", err)
	}
	return fresh, nil
}
