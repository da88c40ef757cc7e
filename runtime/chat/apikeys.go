package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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

// CreateAPIKey creates a self-service key of type typ for the merchant and returns it, the only time it is
// seen whole, with what is stored of it: its ID, type and SHA-256.
func (s *Service) CreateAPIKey(ctx context.Context, m *tenant.Bundle, typ tenant.KeyType) (string, store.APIKey, error) {
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
	raw, err := credentials.NewAPIKey(prefix)
	if err != nil {
		return "", store.APIKey{}, fmt.Errorf("creating an API key: %w", err)
	}
	d, err := credentials.Describe(raw)
	if err != nil {
		return "", store.APIKey{}, fmt.Errorf("creating an API key: %w", err)
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
// at once; the others within keyCacheTTL.
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

// SelfServiceKey returns the unrevoked self-service key whose SHA-256 is sha256Hex, if there is one, and records
// its use (at most once a minute).
func (s *Service) SelfServiceKey(ctx context.Context, sha256Hex string) (store.APIKey, bool, error) {
	now := s.now()
	e, ok := s.keys.get(sha256Hex, now)
	if !ok {
		k, err := s.store.APIKeyByHash(ctx, sha256Hex)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return store.APIKey{}, false, fmt.Errorf("looking up an API key: %w", err)
		}
		e = keyEntry{key: k, found: err == nil, expires: now.Add(keyCacheTTL)}
		s.keys.put(sha256Hex, e)
	}
	if e.found && now.Sub(e.key.LastUsedAt) >= keyTouchEvery {
		e.key.LastUsedAt = now.UTC().Truncate(time.Minute)
		s.keys.put(sha256Hex, e)
		err := s.store.Write(ctx, func(tx store.Tx) error { return tx.TouchAPIKey(ctx, e.key.MerchantID, e.key.ID, e.key.LastUsedAt) })
		if err != nil {
			return store.APIKey{}, false, fmt.Errorf("recording the use of API key %s: %w", e.key.ID, err)
		}
	}
	return e.key, e.found, nil
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

func (c *keyCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}
