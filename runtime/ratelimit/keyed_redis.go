package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Allow implements KeyedLimiter: one token from each quota's bucket in Redis, all in one atomic call, or from
// the fallback while Redis fails. now is used only by the fallback; Redis uses its own clock.
func (k *RedisKeyed) Allow(ctx context.Context, quotas []Quota, now time.Time) (int, time.Duration) {
	if len(quotas) == 0 {
		return -1, 0
	}
	refused, wait := -1, time.Duration(0)
	if !k.shared.decide(ctx, func() (err error) {
		keys, args := make([]string, len(quotas)), make([]any, 0, 2*len(quotas))
		for i, q := range quotas {
			keys[i] = k.Key(q.Key)
			args = append(args, strconv.FormatFloat(float64(q.N)/q.Period.Seconds(), 'g', -1, 64), strconv.Itoa(q.N))
		}
		refused, _, wait, err = k.shared.takeTokens(ctx, keys, args...)
		return err
	}) {
		return k.fallback.Allow(ctx, quotas, now)
	}
	return refused, wait
}
