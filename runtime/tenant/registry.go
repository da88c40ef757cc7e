package tenant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Registry holds the bundles the runtime serves, indexed for the lookups of every request: by merchant ID, by
// API key hash and by owner. A bundle change is applied under one lock, so a request sees a merchant either
// wholly before or wholly after it. An invalid bundle is rejected, logged and counted, and the last good bundle
// from the same source stays. A key hash belongs to the first merchant served with it: a later bundle carrying it
// is served without that key, and the conflict is logged and counted.
type Registry struct {
	log       *slog.Logger
	metrics   *registryMetrics
	admission Admission

	// changing serialises the changes (Set, Delete, Retire, RetryHeld), admissions included, so that a retry
	// never puts back a bundle that a later change replaced; mu guards the maps for the readers.
	changing sync.Mutex
	held     map[string][]byte // source -> a bundle document held back because its admission failed

	mu       sync.RWMutex
	bySource map[string]*Bundle    // source (Secret name or file) -> bundle
	byID     map[string]entry      // merchant ID -> bundle and its source
	byKey    map[string]keyRef     // SHA-256 hex -> key and its merchant
	retired  map[string]Retirement // source -> the merchant retired there
	synced   bool
}

type entry struct {
	source string
	bundle *Bundle
}

type keyRef struct {
	bundle *Bundle
	key    APIKey
}

// ErrMerchantIDTaken means a bundle names a merchant ID that another source already serves.
var ErrMerchantIDTaken = errors.New("merchant ID is already served from another source")

// NewRegistry returns an empty registry. reg receives its metrics; nil registers none.
func NewRegistry(log *slog.Logger, reg prometheus.Registerer) (*Registry, error) {
	m, err := newRegistryMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &Registry{
		log: log, metrics: m,
		bySource: map[string]*Bundle{}, byID: map[string]entry{}, byKey: map[string]keyRef{},
		retired: map[string]Retirement{}, held: map[string][]byte{},
	}, nil
}

// Admission is asked before a bundle's merchant is served under a UID it is not served under yet (a new
// merchant, or a new Merchant object under the same ID); an error holds the bundle back. See SetAdmission.
type Admission func(*Bundle) error

// SetAdmission makes the registry ask a before serving a merchant under a new UID. A bundle held back is not
// served, and neither is the earlier bundle of its source when that was another Merchant's; RetryHeld tries it
// again. Set it before the first bundle arrives.
func (r *Registry) SetAdmission(a Admission) { r.admission = a }

// Set parses a bundle document from source and puts it in effect. On error nothing changes, but for a bundle
// held back by its admission (SetAdmission).
func (r *Registry) Set(source string, data []byte) error {
	r.changing.Lock()
	defer r.changing.Unlock()
	return r.set(source, data)
}

func (r *Registry) set(source string, data []byte) error {
	delete(r.held, source)
	b, err := Parse(data)
	if err == nil {
		if err = r.admit(source, b); err != nil {
			r.held[source] = data
			r.metrics.held.Inc()
			r.log.Error("tenant bundle held back: its merchant could not be admitted; it is tried again",
				"source", source, "merchant", b.MerchantID, "error", err)
			return fmt.Errorf("tenant bundle %s: %w", source, err)
		}
		err = r.put(source, b)
	}
	if err != nil {
		r.metrics.rejected.Inc()
		r.log.Error("tenant bundle rejected; the last good one stays", "source", source, "error", err)
		return fmt.Errorf("tenant bundle %s: %w", source, err)
	}
	return nil
}

// admit asks the admission, if any, about a bundle whose merchant its source does not serve under its UID yet.
// A bundle that put would refuse (its ID served from another source) is not asked about: its admission could
// erase the data of the merchant served. When the admission fails, the source's earlier bundle is taken out of
// effect if it was another Merchant's, whose keys must not serve the new one's data.
func (r *Registry) admit(source string, b *Bundle) error {
	if r.admission == nil {
		return nil
	}
	r.mu.RLock()
	e, served := r.byID[b.MerchantID]
	earlier, ok := r.bySource[source]
	r.mu.RUnlock()
	if served && e.source != source {
		return nil // put refuses it
	}
	if served && e.bundle.UID == b.UID {
		return nil
	}
	if err := r.admission(b); err != nil {
		if ok && earlier.UID != b.UID {
			r.mu.Lock()
			r.removeLocked(source)
			r.metrics.tenants.Set(float64(len(r.byID)))
			r.mu.Unlock()
		}
		return err
	}
	return nil
}

// RetryHeld tries the bundles held back again every interval, until ctx ends.
func (r *Registry) RetryHeld(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.changing.Lock()
		for source, data := range maps.Clone(r.held) { // set changes r.held
			_ = r.set(source, data) // logged and counted by set
		}
		r.changing.Unlock()
	}
}

// Held reports how many bundles are held back, waiting for their admission.
func (r *Registry) Held() int {
	r.changing.Lock()
	defer r.changing.Unlock()
	return len(r.held)
}

func (r *Registry) put(source string, b *Bundle) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byID[b.MerchantID]; ok && e.source != source {
		return fmt.Errorf("%w: %s is served from %s", ErrMerchantIDTaken, b.MerchantID, e.source)
	}
	r.removeLocked(source)
	delete(r.retired, source)
	b.APIKeys = r.withoutTakenKeysLocked(source, b)
	r.bySource[source] = b
	r.byID[b.MerchantID] = entry{source: source, bundle: b}
	for _, k := range b.APIKeys {
		r.byKey[k.SHA256] = keyRef{bundle: b, key: k}
	}
	r.metrics.tenants.Set(float64(len(r.byID)))
	return nil
}

// withoutTakenKeysLocked returns the keys of b whose hashes no other source's merchant holds. A key hash belongs
// to the merchant that was served with it first: a later bundle never takes it over, so a copied publishable key
// cannot redirect another merchant's visitors. Each key left out is logged (by key ID, never the hash) and
// counted; the rest of the bundle is served, so that its revocations still take effect.
func (r *Registry) withoutTakenKeysLocked(source string, b *Bundle) []APIKey {
	kept := make([]APIKey, 0, len(b.APIKeys))
	for _, k := range b.APIKeys {
		if _, taken := r.byKey[k.SHA256]; taken {
			r.metrics.keyConflicts.Inc()
			r.log.Error("API key left out of a tenant bundle: another merchant already holds it",
				"source", source, "merchant", b.MerchantID, "key", k.ID)
			continue
		}
		kept = append(kept, k)
	}
	return kept
}

// Delete takes the bundle of source out of effect, revoking its keys at once, and forgets a retirement there.
func (r *Registry) Delete(source string) {
	r.changing.Lock()
	defer r.changing.Unlock()
	delete(r.held, source)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(source)
	delete(r.retired, source)
	r.metrics.tenants.Set(float64(len(r.byID)))
}

// Retirement is a merchant whose Merchant was deleted: the operator retired its bundle, which no longer serves
// it, at At. Its data stays in the store until it is erased.
type Retirement struct {
	MerchantID string
	At         time.Time
}

// Retire takes the bundle of source out of effect, revoking its keys at once, and records the retirement of its
// merchant.
func (r *Registry) Retire(source string, ret Retirement) {
	r.changing.Lock()
	defer r.changing.Unlock()
	delete(r.held, source)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(source)
	r.retired[source] = ret
	r.metrics.tenants.Set(float64(len(r.byID)))
}

// Retirements returns the merchants retired and not served again, in no particular order.
func (r *Registry) Retirements() []Retirement {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Retirement, 0, len(r.retired))
	for _, ret := range r.retired {
		out = append(out, ret)
	}
	return out
}

func (r *Registry) removeLocked(source string) {
	old, ok := r.bySource[source]
	if !ok {
		return
	}
	delete(r.bySource, source)
	delete(r.byID, old.MerchantID)
	for _, k := range old.APIKeys {
		if ref, ok := r.byKey[k.SHA256]; ok && ref.bundle == old {
			delete(r.byKey, k.SHA256)
		}
	}
}

// MarkSynced records that the source has delivered its initial state; Synced reports it for readiness.
func (r *Registry) MarkSynced() {
	r.mu.Lock()
	r.synced = true
	r.mu.Unlock()
}

// Synced reports whether the initial state has been loaded.
func (r *Registry) Synced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.synced
}

// Merchant returns the bundle of a merchant.
func (r *Registry) Merchant(id string) (*Bundle, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byID[id]
	return e.bundle, ok
}

// Key returns the merchant and key with the given SHA-256 hash (lowercase hex), if the key exists and has not
// expired at now.
func (r *Registry) Key(sha256Hex string, now time.Time) (*Bundle, APIKey, bool) {
	r.mu.RLock()
	ref, ok := r.byKey[sha256Hex]
	r.mu.RUnlock()
	if !ok || (ref.key.ExpiresAt != nil && !now.Before(*ref.key.ExpiresAt)) {
		return nil, APIKey{}, false
	}
	return ref.bundle, ref.key, true
}

// All returns every merchant's bundle, in no order.
func (r *Registry) All() []*Bundle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Bundle, 0, len(r.byID))
	for _, e := range r.byID {
		out = append(out, e.bundle)
	}
	return out
}

// OwnedBy returns the bundles whose owners include the principal: the subject exactly, or the email when verified,
// ignoring case in ASCII only.
func (r *Registry) OwnedBy(subject, email string, emailVerified bool) []*Bundle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*Bundle
	for _, e := range r.byID {
		for _, o := range e.bundle.Owners {
			if (o.Subject != "" && o.Subject == subject) ||
				(o.Email != "" && emailVerified && EqualFoldASCII(o.Email, email)) {
				out = append(out, e.bundle)
				break
			}
		}
	}
	return out
}

// EqualFoldASCII reports whether a and b are equal ignoring the case of ASCII letters only. Unicode case folding
// (strings.EqualFold, strings.ToLower) would let a verified "ſupport@…" (long s) own "support@…"'s merchant.
// The operator and the runtime compare owners' emails and domains with it alike.
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// Len returns the number of merchants served.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byID)
}

type registryMetrics struct {
	tenants      prometheus.Gauge
	rejected     prometheus.Counter
	keyConflicts prometheus.Counter
	held         prometheus.Counter
}

func newRegistryMetrics(reg prometheus.Registerer) (*registryMetrics, error) {
	m := &registryMetrics{
		tenants: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_runtime_tenants", Help: "Merchants whose bundles the runtime serves.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_tenant_bundles_rejected_total", Help: "Tenant bundles rejected as invalid.",
		}),
		keyConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_tenant_key_conflicts_total",
			Help: "API keys left out of a tenant bundle because another merchant already holds their hash.",
		}),
		held: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_tenant_bundles_held_total",
			Help: "Tenant bundles held back, and tried again, because their merchant could not be admitted (the store failed).",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.tenants, m.rejected, m.keyConflicts, m.held} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("registering tenant metrics: %w", err)
			}
		}
	}
	return m, nil
}
