package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
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
	// Batch is how many records one write deletes; 20 when zero: a write of a few milliseconds, which the chat's
	// writes wait for at most.
	Batch int
	// Pause is how long the sweep waits between two writes, so that the chat's writes go between them; when zero,
	// as long as the last write took, which leaves the store to the chat at least half the time.
	Pause time.Duration
}

// sweepExpired deletes the merchant's records past its retention at now, kind by kind (store.ExpiringKinds), a
// batch of cfg.Batch records a write with cfg.Pause between writes, so that no write holds the store long, until
// none is left or ctx ends. It returns what it deleted, also when it fails part way.
func sweepExpired(ctx context.Context, st store.Store, merchantID string, r Retention, now time.Time, cfg SweepConfig) (Swept, error) {
	if merchantID == "" {
		return Swept{}, errors.New("sweeping expired records: no merchant ID")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 20
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
			began := time.Now()
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
			pause := cfg.Pause
			if pause <= 0 {
				pause = time.Since(began)
			}
			select {
			case <-ctx.Done():
				return swept, ctx.Err()
			case <-time.After(pause):
			}
		}
	}
	return swept, nil
}

// RetentionOf is a merchant's retention as its bundle gives it.
func RetentionOf(m *tenant.Bundle) Retention {
	day := 24 * time.Hour
	return Retention{Conversations: time.Duration(m.Retention.ConversationsDays) * day,
		Leads: time.Duration(m.Retention.LeadsDays) * day, Deliveries: time.Duration(m.Retention.WebhookDeliveriesDays) * day}
}

// sweepLease names the lease that lets one replica sweep at a time.
const sweepLease = "retention-sweep"

// SweeperConfig wires a Sweeper.
type SweeperConfig struct {
	Store store.Store
	// Merchants returns the served merchants' bundles.
	Merchants func() []*tenant.Bundle
	// Holder names this replica in the lease (its pod name, or a random ID).
	Holder string
	// Interval is how often the sweep runs; an hour when zero.
	Interval time.Duration
	Sweep    SweepConfig
	Logger   *slog.Logger
	// Registry receives the sweeper's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Sweeper deletes every served merchant's records past its retention (SweepExpired), on one replica at a time:
// the one holding the sweep's lease.
type Sweeper struct {
	cfg     SweeperConfig
	deleted *prometheus.CounterVec
}

// NewSweeper builds a Sweeper.
func NewSweeper(cfg SweeperConfig) (*Sweeper, error) {
	if cfg.Store == nil || cfg.Merchants == nil || cfg.Logger == nil || cfg.Holder == "" {
		return nil, errors.New("chat: the sweeper needs a store, the merchants, a holder name and a logger")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sweeper{cfg: cfg, deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parley_runtime_retention_deleted_total",
		Help: "Records deleted because they were past their merchant's retention, by kind.",
	}, []string{"kind"})}
	for _, kind := range store.ExpiringKinds {
		s.deleted.WithLabelValues(string(kind))
	}
	if cfg.Registry != nil {
		if err := cfg.Registry.Register(s.deleted); err != nil {
			return nil, fmt.Errorf("registering sweeper metrics: %w", err)
		}
	}
	return s, nil
}

// Run sweeps at once and then every interval, until ctx ends. A failed sweep is logged and tried at the next.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if err := s.SweepOnce(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("deleting records past their retention", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepOnce takes the sweep's lease for the interval and, when it has it, sweeps every merchant with a
// retention. The log line of a merchant counts what was deleted, never what it held.
func (s *Sweeper) SweepOnce(ctx context.Context) error {
	var leased bool
	if err := s.cfg.Store.Write(ctx, func(tx store.Tx) error {
		var err error
		leased, err = tx.ClaimLease(ctx, "", sweepLease, s.cfg.Holder, s.cfg.Now(), s.cfg.Interval)
		return err
	}); err != nil || !leased {
		return err
	}
	var errs []error
	for _, m := range s.cfg.Merchants() {
		r := RetentionOf(m)
		if r == (Retention{}) {
			continue
		}
		swept, err := sweepExpired(ctx, s.cfg.Store, m.MerchantID, r, s.cfg.Now(), s.cfg.Sweep)
		for kind, n := range swept.Records {
			s.deleted.WithLabelValues(string(kind)).Add(float64(n))
		}
		if swept.Rows > 0 {
			s.cfg.Logger.Info("deleted records past their retention", "merchant", m.MerchantID,
				"conversations", swept.Records[store.ExpiringConversations], "leads", swept.Records[store.ExpiringLeads],
				"webhook_deliveries", swept.Records[store.ExpiringDeliveries], "rows", swept.Rows)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
