package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ErasureDue decides whether a retired merchant's data is erased at now: once the retention has passed since its
// Merchant was deleted, and never while its merchant ID is served again (by a Merchant created again under the
// same name, whose admission erased its predecessor's data already: Identities). A retirement without a time is
// never due.
func ErasureDue(retiredAt time.Time, retention time.Duration, served bool, now time.Time) bool {
	return !served && !retiredAt.IsZero() && !retiredAt.Add(retention).After(now)
}

// EraseMerchant deletes all of a merchant's data, in one write, and returns how many rows it deleted.
func EraseMerchant(ctx context.Context, st store.Store, merchantID string) (int64, error) {
	if merchantID == "" {
		return 0, errors.New("erasing a merchant: no merchant ID")
	}
	var rows int64
	err := st.Write(ctx, func(tx store.Tx) error {
		var err error
		rows, err = tx.EraseMerchant(ctx, merchantID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("erasing merchant %s: %w", merchantID, err)
	}
	return rows, nil
}

// Tenants is what the Eraser needs of the tenant registry: the retired merchants, and whether an ID is served.
type Tenants interface {
	Retirements() []tenant.Retirement
	Merchant(id string) (*tenant.Bundle, bool)
}

// EraserConfig wires an Eraser.
type EraserConfig struct {
	Store   store.Store
	Tenants Tenants
	// Retention is how long after its retirement a merchant's data is erased.
	Retention time.Duration
	// Interval is how often the retirements are checked; a minute when zero. A sweep with nothing due reads
	// only memory.
	Interval time.Duration
	Logger   *slog.Logger
	// Registry receives the eraser's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Eraser erases the data of deleted merchants once the retention has passed (ErasureDue).
type Eraser struct {
	cfg    EraserConfig
	counts erasures

	mu sync.Mutex
	// erased remembers the retirements erased by this process, so that a retired bundle that stays (it reserves
	// the ID) is erased once, not at every sweep. After a restart each is erased once more, deleting nothing.
	erased map[tenant.Retirement]bool
}

// NewEraser builds an Eraser.
func NewEraser(cfg EraserConfig) (*Eraser, error) {
	if cfg.Store == nil || cfg.Tenants == nil || cfg.Logger == nil {
		return nil, errors.New("chat: the eraser needs a store, the tenants and a logger")
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("chat: negative retention %s", cfg.Retention)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	counts, err := newErasures(cfg.Registry, prometheus.CounterOpts{
		Name: "parley_runtime_merchants_erased_total",
		Help: "Deleted merchants whose data was erased after the retention.",
	}, prometheus.CounterOpts{
		Name: "parley_runtime_erased_rows_total",
		Help: "Rows of deleted merchants' data erased after the retention.",
	})
	if err != nil {
		return nil, fmt.Errorf("registering eraser metrics: %w", err)
	}
	return &Eraser{cfg: cfg, counts: counts, erased: map[tenant.Retirement]bool{}}, nil
}

// Run sweeps at once and then every interval, until ctx ends. A failed erasure is logged and tried again at the
// next sweep.
func (e *Eraser) Run(ctx context.Context) {
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for {
		if err := e.Sweep(ctx); err != nil && ctx.Err() == nil {
			e.cfg.Logger.Error("erasing deleted merchants' data", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep erases the data of every retired merchant whose erasure is due, and returns the errors of those it
// could not erase.
func (e *Eraser) Sweep(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Now()
	current := map[tenant.Retirement]bool{}
	var errs []error
	for _, ret := range e.cfg.Tenants.Retirements() {
		current[ret] = true
		_, served := e.cfg.Tenants.Merchant(ret.MerchantID)
		if e.erased[ret] || !ErasureDue(ret.At, e.cfg.Retention, served, now) {
			continue
		}
		rows, err := EraseMerchant(ctx, e.cfg.Store, ret.MerchantID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e.erased[ret] = true
		e.counts.add(rows)
		e.cfg.Logger.Info("erased a deleted merchant's data", "merchant", ret.MerchantID,
			"retired_at", ret.At.UTC().Format(time.RFC3339), "retention", e.cfg.Retention.String(), "rows", rows)
	}
	for ret := range e.erased {
		if !current[ret] {
			delete(e.erased, ret)
		}
	}
	return errors.Join(errs...)
}

// erasures counts the merchants whose data was erased and the rows erased with them.
type erasures struct{ merchants, rows prometheus.Counter }

// newErasures builds the two counters and registers them with reg, unless it is nil.
func newErasures(reg prometheus.Registerer, merchants, rows prometheus.CounterOpts) (erasures, error) {
	e := erasures{merchants: prometheus.NewCounter(merchants), rows: prometheus.NewCounter(rows)}
	if reg != nil {
		for _, c := range []prometheus.Collector{e.merchants, e.rows} {
			if err := reg.Register(c); err != nil {
				return erasures{}, err
			}
		}
	}
	return e, nil
}

// add counts one merchant erased, with its rows.
func (e erasures) add(rows int64) {
	e.merchants.Inc()
	e.rows.Add(float64(rows))
}
