package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
)

const apiKeyColumns = `merchant_id, id, type, sha256, created_at, last_used_at, revoked_at`

// ListAPIKeys returns the merchant's self-service keys, newest first.
func (s *Store) ListAPIKeys(ctx context.Context, merchantID string) ([]store.APIKey, error) {
	keys, err := queryList(ctx, s.reader, `SELECT `+apiKeyColumns+` FROM api_keys WHERE merchant_id = ?
		ORDER BY created_at DESC, id DESC`, []any{merchantID}, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("listing API keys: %w", err)
	}
	return keys, nil
}

// APIKeyByHash returns the key of the hash, revoked or not, or store.ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, sha256Hex string) (store.APIKey, error) {
	return scanAPIKey(s.reader.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE sha256 = ?`, sha256Hex))
}

// APIKeysByHash returns the keys, revoked or not, of any of hashes. The hashes go as one JSON array, so that
// their number is bound by no limit on a statement's parameters.
func (s *Store) APIKeysByHash(ctx context.Context, hashes []string) ([]store.APIKey, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(hashes)
	if err != nil {
		return nil, fmt.Errorf("listing API keys by hash: %w", err)
	}
	keys, err := queryList(ctx, s.reader, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE sha256 IN (SELECT value FROM json_each(?))`, []any{string(list)}, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("listing API keys by hash: %w", err)
	}
	return keys, nil
}

// InsertAPIKey stores a new key.
func (tx writeTx) InsertAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (merchant_id, id, type, sha256, created_at) VALUES (?, ?, ?, ?, ?)`,
		k.MerchantID, k.ID, k.Type, k.SHA256, storeutil.Millis(k.CreatedAt))
	return err
}

// RevokeAPIKey revokes an unrevoked key, or returns store.ErrNotFound.
func (tx writeTx) RevokeAPIKey(ctx context.Context, merchantID, id string, at time.Time) error {
	return mustAffect(tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE merchant_id = ? AND id = ? AND revoked_at IS NULL`,
		storeutil.Millis(at), merchantID, id))
}

// TouchAPIKey records a use of the key.
func (tx writeTx) TouchAPIKey(ctx context.Context, merchantID, id string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE merchant_id = ? AND id = ?`,
		storeutil.Millis(at), merchantID, id)
	return err
}

// scanAPIKey reads apiKeyColumns; no row is store.ErrNotFound.
func scanAPIKey(row storeutil.Scanner) (store.APIKey, error) {
	var (
		k             store.APIKey
		created       int64
		used, revoked sql.NullInt64
	)
	err := row.Scan(&k.MerchantID, &k.ID, &k.Type, &k.SHA256, &created, &used, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return store.APIKey{}, store.ErrNotFound
	}
	if err != nil {
		return store.APIKey{}, fmt.Errorf("reading API key: %w", err)
	}
	k.CreatedAt = storeutil.FromMillis(created)
	if used.Valid {
		k.LastUsedAt = storeutil.FromMillis(used.Int64)
	}
	if revoked.Valid {
		k.RevokedAt = storeutil.FromMillis(revoked.Int64)
	}
	return k, nil
}
