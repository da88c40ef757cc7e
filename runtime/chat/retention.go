package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// Retention is how long a merchant keeps each kind of personal data; zero keeps it.
type Retention struct {
	Conversations time.Duration
	Leads         time.Duration
	// Deliveries is how long the outbox keeps events with their deliveries (the webhook payloads) and attempts.
	Deliveries time.Duration
}

// Of returns the retention of a kind of record. A payload repeats what a conversation or lead holds, so the
// deliveries are kept no longer than the shortest retention of the three.
func (r Retention) Of(kind store.Expiring) time.Duration {
	switch kind {
	case store.ExpiringConversations:
		return r.Conversations
	case store.ExpiringLeads:
		return r.Leads
	case store.ExpiringDeliveries:
		d := time.Duration(0)
		for _, v := range []time.Duration{r.Deliveries, r.Conversations, r.Leads} {
			if v > 0 && (d == 0 || v < d) {
				d = v
			}
		}
		return d
	}
	return 0
}

// Swept counts the records a sweep deleted by kind, and the rows of every table with them.
type Swept struct {
	Records map[store.Expiring]int
	Rows    int64
}

// SweepConfig bounds a sweep.
type SweepConfig struct {
	// Batch is how many records one write deletes; 500 when zero.
	Batch int
	// Pause is how long the sweep waits between two writes, so that the chat's writes go between them.
	Pause time.Duration
}

// SweepExpired deletes the merchant's records past its retention at now, kind by kind (store.ExpiringKinds), a
// batch of cfg.Batch records a write with cfg.Pause between writes, so that no write holds the store long, until
// none is left or ctx ends. It returns what it deleted, also when it fails part way.
func SweepExpired(ctx context.Context, st store.Store, merchantID string, r Retention, now time.Time, cfg SweepConfig) (Swept, error) {
	if merchantID == "" {
		return Swept{}, errors.New("sweeping expired records: no merchant ID")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	swept := Swept{Records: map[store.Expiring]int{}}
	for _, kind := range store.ExpiringKinds {
		keep := r.Of(kind)
		if keep <= 0 {
			continue
		}
		before := now.Add(-keep)
		for {
			var records int
			var rows int64
			err := st.Write(ctx, func(tx store.Tx) error {
				var err error
				records, rows, err = tx.DeleteExpired(ctx, merchantID, kind, before, cfg.Batch)
				return err
			})
			if err != nil {
				return swept, fmt.Errorf("deleting merchant %s's %s older than %s: %w", merchantID, kind, keep, err)
			}
			swept.Records[kind] += records
			swept.Rows += rows
			if records < cfg.Batch {
				break
			}
			select {
			case <-ctx.Done():
				return swept, ctx.Err()
			case <-time.After(cfg.Pause):
			}
		}
	}
	return swept, nil
}
