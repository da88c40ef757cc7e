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
)

// Succession is what admitting a Merchant does to the data its merchant ID holds.
type Succession int

const (
	// SuccessionKeep means the data is this Merchant's already.
	SuccessionKeep Succession = iota
	// SuccessionAdopt means no Merchant is recorded for the data (there is none, or it was written before UIDs
	// were recorded): the Merchant takes it.
	SuccessionAdopt
	// SuccessionReplace means the data is an earlier Merchant's under the same ID (deleted and created again,
	// perhaps while the runtime was down): it is erased before the new one is served.
	SuccessionReplace
)

// SuccessionOf decides what admitting the Merchant uid does to data whose recorded Merchant is held ("" none).
// A bundle without a UID (a file's, or an operator's from before UIDs) changes nothing: there is nothing to
// compare.
func SuccessionOf(held, uid string) Succession {
	switch {
	case uid == "" || held == uid:
		return SuccessionKeep
	case held == "":
		return SuccessionAdopt
	default:
		return SuccessionReplace
	}
}

// IdentitiesConfig wires Identities.
type IdentitiesConfig struct {
	Store  store.Store
	Logger *slog.Logger
	// Registry receives the metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Identities makes sure a merchant ID's data is the data of the Merchant served under it: a Merchant is known by
// its UID as well as its namespace and name, so one deleted and created again (same namespace and name, so the
// same merchant ID) starts empty rather than inheriting its predecessor's conversations, leads and knowledge.
type Identities struct {
	cfg      IdentitiesConfig
	replaced erasures

	mu sync.Mutex
	// known is the UID recorded for each merchant ID, as far as this process knows: a bundle whose UID it holds
	// already costs no write, so that a runtime starting with 10,000 merchants reads the table once.
	known map[string]string
}

// NewIdentities reads the UIDs recorded in the store and returns Identities.
func NewIdentities(ctx context.Context, cfg IdentitiesConfig) (*Identities, error) {
	if cfg.Store == nil || cfg.Logger == nil {
		return nil, errors.New("chat: identities need a store and a logger")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	known, err := cfg.Store.MerchantUIDs(ctx)
	if err != nil {
		return nil, err
	}
	replaced, err := newErasures(cfg.Registry, prometheus.CounterOpts{
		Name: "parley_runtime_merchants_replaced_total",
		Help: "Merchant IDs served for a new Merchant (a new UID), whose predecessor's data was erased first.",
	}, prometheus.CounterOpts{
		Name: "parley_runtime_replaced_rows_total",
		Help: "Rows of replaced Merchants' data erased before their successors were served.",
	})
	if err != nil {
		return nil, fmt.Errorf("registering identity metrics: %w", err)
	}
	return &Identities{cfg: cfg, known: known, replaced: replaced}, nil
}

// Admit records the Merchant uid as the one whose data merchantID holds, erasing the data of an earlier Merchant
// first (SuccessionOf), in one write. Only when it returns nil may the Merchant be served. An empty uid admits
// without a look.
func (i *Identities) Admit(ctx context.Context, merchantID, uid string) error {
	if uid == "" {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock() // one admission at a time: two of one merchant ID must not interleave
	if i.known[merchantID] == uid {
		return nil
	}
	var held string
	var succession Succession
	var rows int64
	err := i.cfg.Store.Write(ctx, func(tx store.Tx) error {
		var err error
		rows = 0
		if held, err = tx.MerchantUID(ctx, merchantID); err != nil {
			return err
		}
		succession = SuccessionOf(held, uid)
		if succession == SuccessionReplace {
			if rows, err = tx.EraseMerchant(ctx, merchantID); err != nil {
				return err
			}
		}
		if succession == SuccessionKeep {
			return nil
		}
		return tx.SetMerchantUID(ctx, merchantID, uid, i.cfg.Now())
	})
	if err != nil {
		return fmt.Errorf("admitting merchant %s: %w", merchantID, err)
	}
	i.known[merchantID] = uid
	switch succession {
	case SuccessionReplace:
		i.replaced.add(rows)
		i.cfg.Logger.Info("erased the data of an earlier Merchant under the same merchant ID before serving its successor",
			"merchant", merchantID, "previous_uid", held, "uid", uid, "rows", rows)
	case SuccessionAdopt:
		i.cfg.Logger.Debug("merchant ID adopted by its Merchant", "merchant", merchantID, "uid", uid)
	}
	return nil
}
