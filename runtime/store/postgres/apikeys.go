package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

const apiKeyColumns = `merchant_id, id, type, sha256, created_at, last_used_at, revoked_at`

// ListAPIKeys returns the merchant's self-service keys, newest first.
func (s *Store) ListAPIKeys(ctx context.Context, merchantID string) ([]store.APIKey, error) {
	keys, err := queryList(ctx, s.pool, `SELECT `+apiKeyColumns+` FROM api_keys WHERE merchant_id = $1
		ORDER BY created_at DESC, id DESC`, []any{merchantID}, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("listing API keys: %w", err)
	}
	return keys, nil
}

// APIKeyByHash returns the key of the hash, revoked or not, or store.ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, sha256Hex string) (store.APIKey, error) {
	return scanAPIKey(s.pool.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE sha256 = $1`, sha256Hex))
}

// APIKeysByHash returns the keys, revoked or not, of any of hashes, in one statement with one array parameter.
func (s *Store) APIKeysByHash(ctx context.Context, hashes []string) ([]store.APIKey, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	keys, err := queryList(ctx, s.pool, `SELECT `+apiKeyColumns+` FROM api_keys WHERE sha256 = ANY($1)`, []any{hashes}, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("listing API keys by hash: %w", err)
	}
	return keys, nil
}

// InsertAPIKey stores a new key.
func (tx writeTx) InsertAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := tx.Exec(ctx, `INSERT INTO api_keys (merchant_id, id, type, sha256, created_at) VALUES ($1, $2, $3, $4, $5)`,
		k.MerchantID, k.ID, k.Type, k.SHA256, stamp(k.CreatedAt))
	if err != nil {
		return fmt.Errorf("inserting API key: %w", err)
	}
	return nil
}

// RevokeAPIKey revokes an unrevoked key, or returns store.ErrNotFound.
func (tx writeTx) RevokeAPIKey(ctx context.Context, merchantID, id string, at time.Time) error {
	return mustAffect(tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE merchant_id = $2 AND id = $3 AND revoked_at IS NULL`,
		stamp(at), merchantID, id))
}

// TouchAPIKey records a use of the key.
func (tx writeTx) TouchAPIKey(ctx context.Context, merchantID, id string, at time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE merchant_id = $2 AND id = $3`, stamp(at), merchantID, id)
	if err != nil {
		return fmt.Errorf("recording the use of API key %s: %w", id, err)
	}
	return nil
}

// scanAPIKey reads apiKeyColumns; no row is store.ErrNotFound.
func scanAPIKey(row storeutil.Scanner) (store.APIKey, error) {
	var (
		k             store.APIKey
		used, revoked *time.Time
	)
	err := row.Scan(&k.MerchantID, &k.ID, &k.Type, &k.SHA256, &k.CreatedAt, &used, &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.APIKey{}, store.ErrNotFound
	}
	if err != nil {
		return store.APIKey{}, fmt.Errorf("reading API key: %w", err)
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if used != nil {
		k.LastUsedAt = used.UTC()
	}
	if revoked != nil {
		k.RevokedAt = revoked.UTC()
	}
	return k, nil
}
