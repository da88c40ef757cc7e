package chat

import (
	"context"
	"fmt"

	"github.com/parley-dev/parley/runtime/store"
)

// SignOut records that the dashboard user of subject signed out now: the sessions signed for them before are
// refused from then on, by every replica sharing the store.
func (s *Service) SignOut(ctx context.Context, subject string) error {
	at := s.now().UTC()
	if err := s.store.Write(ctx, func(tx store.Tx) error { return tx.RecordSignOut(ctx, subject, at) }); err != nil {
		return fmt.Errorf("recording a sign-out: %w", err)
	}
	return nil
}
