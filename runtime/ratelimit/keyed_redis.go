package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// keyedInfix follows the key prefix in the Redis keys of RedisKeyed's buckets. Merchant IDs are DNS labels,
// without ":", so these keys never meet a merchant's bucket (<prefix><merchantID>) or its owners'.
const keyedInfix = "conversations:"

// RedisKeyed keeps the buckets of a KeyedLimiter in Redis, so that the abuse limits hold across all replicas of a
// runtime: a plan's 20 new conversations per client address an hour are 20 in all, however many replicas serve
// the merchant. It is a token bucket of n per period, as Keyed is, run by the same atomic script on the Redis
// server's clock as the merchants' rates, and each bucket's key expires once the bucket is full again.
//
// It shares the Redis limiter it was made from: its client, key prefix and timeout, and its view of Redis's
// health, so that while Redis fails (and for the backoff after each failure) both decide per replica, the
// abuse limits with a Keyed limiter bounded in memory, and the failure is logged and counted once.
//
// The keys it is given name client addresses and visitor IDs; Redis sees only their SHA-256, so that the keys
// of Redis hold no personal data in plain text. A caller's key must include the merchant ID (as the server's
// do), so that equal addresses of two merchants hash apart.
type RedisKeyed struct {
	shared   *Redis
	fallback *Keyed
}

// Keyed returns a KeyedLimiter that keeps its buckets in r's Redis, with a Keyed limiter of DefaultMaxKeys
// deciding while Redis fails.
func (r *Redis) Keyed() *RedisKeyed {
	return &RedisKeyed{shared: r, fallback: NewKeyed(DefaultMaxKeys)}
}

// Key is the Redis key of key's bucket: the prefix, then the hex SHA-256 of key.
func (k *RedisKeyed) Key(key string) string {
	sum := sha256.Sum256([]byte(key))
	return k.shared.prefix + keyedInfix + hex.EncodeToString(sum[:])
}

// Allow implements KeyedLimiter: one token from key's bucket in Redis, or from the fallback while Redis fails.
// now is used only by the fallback; Redis uses its own clock.
func (k *RedisKeyed) Allow(ctx context.Context, key string, n int, period time.Duration, now time.Time) (bool, time.Duration) {
	var ok bool
	var wait time.Duration
	if !k.shared.decide(ctx, func() (err error) {
		ok, wait, err = k.allow(ctx, key, n, period)
		return err
	}) {
		return k.fallback.Allow(ctx, key, n, period, now)
	}
	return ok, wait
}

func (k *RedisKeyed) allow(ctx context.Context, key string, n int, period time.Duration) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, k.shared.timeout)
	defer cancel()
	perSecond := float64(n) / period.Seconds()
	res, err := tokenBucket.Run(ctx, k.shared.client, []string{k.Key(key)},
		strconv.FormatFloat(perSecond, 'g', -1, 64), strconv.Itoa(n)).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("running the token bucket script: %w", err)
	}
	if len(res) != 3 {
		return false, 0, fmt.Errorf("the token bucket script returned %d values, want 3", len(res))
	}
	return res[0] == 1, time.Duration(res[2]) * time.Microsecond, nil
}
