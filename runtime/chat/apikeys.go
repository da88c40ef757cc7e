package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// ErrSelfServiceKeysDisabled refuses a self-service key where the Merchant turned them off.
var ErrSelfServiceKeysDisabled = errors.New("self-service API keys are turned off for this merchant; keys are declared as APIKey resources")

const (
	// keyCacheTTL bounds how long a lookup of a self-service key is reused: a key revoked on another replica is
	// refused within this time (plus a request).
	keyCacheTTL = time.Second
	// keyCacheMax bounds the cache; it is emptied when full.
	keyCacheMax = 10000
	// keyTouchEvery is how often a key's last use is written, at most.
	keyTouchEvery = time.Minute
)

// keyCache remembers recent lookups of self-service keys by hash, found or not.
type keyCache struct {
	mu      sync.Mutex
	entries map[string]keyEntry
}

type keyEntry struct {
	key     store.APIKey
	found   bool
	expires time.Time
}

// KeyDirectory is what the key rules read of the tenant bundles the runtime serves: a *tenant.Registry.
type KeyDirectory interface {
	// Key returns the merchant and bundle key of a SHA-256 hash, if one is declared and unexpired at now.
	Key(sha256Hex string, now time.Time) (*tenant.Bundle, tenant.APIKey, bool)
	// Merchant returns the bundle of a merchant the runtime serves.
	Merchant(id string) (*tenant.Bundle, bool)
}

// keySource says which record of a key hash authenticates a request with it.
type keySource int

const (
	// keyUnknown: no record holds the hash.
	keyUnknown keySource = iota
	// keyFromBundle: a key the operator declared, in the merchant's tenant bundle.
	keyFromBundle
	// keyFromStore: a self-service key, created in the dashboard and kept in the store.
	keyFromStore
	// keyRevoked: a self-service key its merchant revoked; it authenticates no one.
	keyRevoked
)

// decideKey decides which record of a key hash authenticates: the self-service key in the store (stored, when
// found) or the key of a tenant bundle (of merchant bundleMerchant, when inBundle). A hash belongs to exactly one
// merchant, the first to hold it. The runtime generates self-service keys with crypto/rand, so a bundle can only
// carry one's hash by copying it, later: a stored key, revoked or not, always keeps its hash, and a bundle key of
// another merchant with that hash is refused (stolen is then true). The same merchant's bundle key may carry it,
// and then decides (with its expiry) until the stored key is revoked.
func decideKey(stored store.APIKey, found bool, bundleMerchant string, inBundle bool) (src keySource, stolen bool) {
	if !found {
		if inBundle {
			return keyFromBundle, false
		}
		return keyUnknown, false
	}
	other := inBundle && bundleMerchant != stored.MerchantID
	switch {
	case !stored.RevokedAt.IsZero():
		return keyRevoked, other
	case inBundle && !other:
		return keyFromBundle, false
	default:
		return keyFromStore, other
	}
}

// ResolveKey finds the merchant and key that an API key's SHA-256 authenticates, bundle keys of dir and the
// store's self-service keys alike, as decideKey decides. A bundle key refused because another merchant's
// self-service key holds its hash is counted and logged, once per key, by source, merchant and key ID (never its
// hash).
// A self-service key authenticates only for a merchant dir serves that allows them.
func (s *Service) ResolveKey(ctx context.Context, dir KeyDirectory, sha256Hex string) (*tenant.Bundle, tenant.APIKey, bool, error) {
	stored, found, err := s.selfServiceKey(ctx, sha256Hex)
	if err != nil {
		return nil, tenant.APIKey{}, false, err
	}
	bundle, bundleKey, inBundle := dir.Key(sha256Hex, s.now())
	var bundleMerchant string
	if inBundle {
		bundleMerchant = bundle.MerchantID
	}
	src, stolen := decideKey(stored, found, bundleMerchant, inBundle)
	if stolen {
		s.refused.note(s.log, bundle.Source, bundleMerchant, bundleKey.ID)
	}
	switch src {
	case keyFromBundle:
		return bundle, bundleKey, true, nil
	case keyFromStore:
		m, ok := dir.Merchant(stored.MerchantID)
		if !ok || m.SelfServiceKeysDisabled {
			return nil, tenant.APIKey{}, false, nil
		}
		if err := s.touchKey(ctx, sha256Hex, stored); err != nil {
			return nil, tenant.APIKey{}, false, err
		}
		return m, tenant.APIKey{ID: stored.ID, Type: tenant.KeyType(stored.Type), SHA256: stored.SHA256}, true, nil
	default:
		return nil, tenant.APIKey{}, false, nil
	}
}

// refusedBundleKeys reports, by merchant ID, the IDs of the bundle keys of merchants that another merchant's
// self-service key holds the hash of (decideKey), with one store query for every bundle key.
func (s *Service) refusedBundleKeys(ctx context.Context, merchants []*tenant.Bundle) (map[string][]string, error) {
	var hashes []string
	for _, m := range merchants {
		for _, k := range m.APIKeys {
			hashes = append(hashes, k.SHA256)
		}
	}
	stored, err := s.store.APIKeysByHash(ctx, hashes)
	if err != nil {
		return nil, fmt.Errorf("looking up the self-service keys of bundle keys: %w", err)
	}
	holder := make(map[string]store.APIKey, len(stored))
	for _, k := range stored {
		holder[k.SHA256] = k
	}
	refused := map[string][]string{}
	for _, m := range merchants {
		for _, k := range m.APIKeys {
			h, found := holder[k.SHA256]
			if _, stolen := decideKey(h, found, m.MerchantID, true); stolen {
				refused[m.MerchantID] = append(refused[m.MerchantID], k.ID)
			}
		}
	}
	return refused, nil
}

// maxKeyDraws bounds the keys drawn for one self-service key: crypto/rand repeats a bundle's key only if the
// bundle's key was copied from a generator as good, so a second draw is already beyond belief.
const maxKeyDraws = 3

// CreateAPIKey creates a self-service key of type typ for the merchant and returns it, the only time it is
// seen whole, with what is stored of it: its ID, type and SHA-256. A key whose hash a bundle of dir already
// holds is drawn again: the first holder of a hash keeps it, whichever side created it.
func (s *Service) CreateAPIKey(ctx context.Context, dir KeyDirectory, m *tenant.Bundle, typ tenant.KeyType) (string, store.APIKey, error) {
	if m.SelfServiceKeysDisabled {
		return "", store.APIKey{}, ErrSelfServiceKeysDisabled
	}
	prefix := credentials.PublishablePrefix
	switch typ {
	case tenant.KeyPublishable:
	case tenant.KeySecret:
		prefix = credentials.SecretPrefix
	default:
		return "", store.APIKey{}, fmt.Errorf("creating an API key: unknown type %q", typ)
	}
	var (
		raw string
		d   credentials.Key
	)
	for draw := 0; ; draw++ {
		if draw == maxKeyDraws {
			return "", store.APIKey{}, errors.New("creating an API key: every key drawn is already a tenant bundle's")
		}
		var err error
		if raw, err = credentials.NewAPIKey(prefix); err != nil {
			return "", store.APIKey{}, fmt.Errorf("creating an API key: %w", err)
		}
		if d, err = credentials.Describe(raw); err != nil {
			return "", store.APIKey{}, fmt.Errorf("creating an API key: %w", err)
		}
		// At the zero time an expired bundle key counts as held too.
		if _, _, held := dir.Key(d.SHA256, time.Time{}); !held {
			break
		}
	}
	k := store.APIKey{MerchantID: m.MerchantID, ID: d.ID, Type: string(typ), SHA256: d.SHA256,
		CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	if err := s.store.Write(ctx, func(tx store.Tx) error { return tx.InsertAPIKey(ctx, k) }); err != nil {
		return "", store.APIKey{}, fmt.Errorf("storing API key %s: %w", k.ID, err)
	}
	s.keys.forget(k.SHA256)
	return raw, k, nil
}

// RevokeAPIKey revokes the merchant's self-service key id, or returns store.ErrNotFound. This runtime refuses it
// at once; the others within keyCacheTTL. Its hash stays the merchant's: a bundle that copies it is refused too.
func (s *Service) RevokeAPIKey(ctx context.Context, m *tenant.Bundle, id string) error {
	keys, err := s.store.ListAPIKeys(ctx, m.MerchantID)
	if err != nil {
		return err
	}
	err = s.store.Write(ctx, func(tx store.Tx) error { return tx.RevokeAPIKey(ctx, m.MerchantID, id, s.now().UTC()) })
	if err != nil {
		return fmt.Errorf("revoking API key %s: %w", id, err)
	}
	for _, k := range keys {
		if k.ID == id {
			s.keys.forget(k.SHA256)
		}
	}
	return nil
}

// selfServiceKey returns the self-service key whose SHA-256 is sha256Hex, revoked or not, if there is one,
// from the cache when it looked within keyCacheTTL.
func (s *Service) selfServiceKey(ctx context.Context, sha256Hex string) (store.APIKey, bool, error) {
	now := s.now()
	if e, ok := s.keys.get(sha256Hex, now); ok {
		return e.key, e.found, nil
	}
	k, err := s.store.APIKeyByHash(ctx, sha256Hex)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.APIKey{}, false, fmt.Errorf("looking up an API key: %w", err)
	}
	e := keyEntry{key: k, found: err == nil, expires: now.Add(keyCacheTTL)}
	s.keys.put(sha256Hex, e)
	return e.key, e.found, nil
}

// touchKey records the use of a self-service key, at most once a minute.
func (s *Service) touchKey(ctx context.Context, sha256Hex string, k store.APIKey) error {
	now := s.now()
	if now.Sub(k.LastUsedAt) < keyTouchEvery {
		return nil
	}
	k.LastUsedAt = now.UTC().Truncate(time.Minute)
	s.keys.update(sha256Hex, k)
	err := s.store.Write(ctx, func(tx store.Tx) error { return tx.TouchAPIKey(ctx, k.MerchantID, k.ID, k.LastUsedAt) })
	if err != nil {
		return fmt.Errorf("recording the use of API key %s: %w", k.ID, err)
	}
	return nil
}

func (c *keyCache) get(hash string, now time.Time) (keyEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || !now.Before(e.expires) {
		return keyEntry{}, false
	}
	return e, true
}

func (c *keyCache) put(hash string, e keyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= keyCacheMax {
		c.entries = map[string]keyEntry{}
	}
	c.entries[hash] = e
}

// update replaces the key of a cached lookup, keeping when it expires; nothing when it is no longer cached.
func (c *keyCache) update(hash string, k store.APIKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hash]; ok {
		e.key = k
		c.entries[hash] = e
	}
}

func (c *keyCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}

// maxRefusalsLogged bounds the refused keys remembered as logged; past it, the record starts again.
const maxRefusalsLogged = 1000

// refusals counts the bundle keys refused because another merchant holds their hash, and logs each once.
type refusals struct {
	counter prometheus.Counter
	mu      sync.Mutex
	logged  map[string]bool // merchant ID + "/" + key ID
}

func newRefusals(reg prometheus.Registerer) (*refusals, error) {
	r := &refusals{counter: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "parley_runtime_api_key_refused_total",
		Help: "Requests refused because they carried a tenant bundle's API key whose hash another merchant's self-service key holds.",
	})}
	if reg != nil {
		if err := reg.Register(r.counter); err != nil {
			return nil, fmt.Errorf("registering API key metrics: %w", err)
		}
	}
	return r, nil
}

// note counts a refusal of merchant's bundle key keyID, rendered from the Merchant source, and logs it the first
// time.
func (r *refusals) note(log *slog.Logger, source, merchant, keyID string) {
	r.counter.Inc()
	r.mu.Lock()
	id := merchant + "/" + keyID
	first := !r.logged[id]
	if first {
		if r.logged == nil || len(r.logged) >= maxRefusalsLogged {
			r.logged = map[string]bool{}
		}
		r.logged[id] = true
	}
	r.mu.Unlock()
	if first {
		log.Warn("API key of a tenant bundle refused: another merchant's self-service key holds its hash",
			"source", source, "merchant", merchant, "key", keyID)
	}
}
