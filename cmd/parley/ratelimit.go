package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/ratelimit"
)

// redisLimiter is the Redis limiter the configuration asks for, and what closes it: nil (in-process limiters)
// without --redis-address. It limits the merchants' and owners' request rates, and its Keyed limiter the abuse
// limits. An unreachable Redis does not stop the runtime: the limiters fall back to per-replica limits until Redis
// answers.
func redisLimiter(c contract.Runtime, log *slog.Logger, reg prometheus.Registerer) (*ratelimit.Redis, func(), error) {
	if c.RedisAddress == "" {
		return nil, func() {}, nil
	}
	client, err := ratelimit.NewRedisClient(ratelimit.RedisConfig{Addr: c.RedisAddress, Password: c.RedisPassword, TLS: c.RedisTLS})
	if err != nil {
		return nil, nil, fmt.Errorf("--%s: %w", contract.FlagRedisAddress, err)
	}
	l, err := ratelimit.NewRedis(client, ratelimit.RedisOptions{KeyPrefix: c.RedisKeyPrefix, Logger: log, Registerer: reg})
	if err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("the Redis rate limiter: %w", err)
	}
	log.Info("rate and abuse limits are shared through Redis", "redis", c.RedisAddress, "tls", c.RedisTLS)
	return l, func() { _ = client.Close() }, nil
}
