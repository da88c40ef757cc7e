package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/server"
)

// redisPasswordEnv holds the Redis password; the operator sets it from a Secret, so it is never in the arguments.
const redisPasswordEnv = "PARLEY_REDIS_PASSWORD"

// redisFlags are `parley runtime`'s settings for sharing the merchants' rate limits through Redis.
type redisFlags struct {
	addr, keyPrefix string
	tls             bool
}

func (r *redisFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.addr, "redis-address", "", "host:port of a Redis through which the replicas share the merchants' rate limits "+
		"(password from $"+redisPasswordEnv+"); without it each replica limits on its own")
	fs.BoolVar(&r.tls, "redis-tls", false, "connect to Redis with TLS")
	fs.StringVar(&r.keyPrefix, "redis-key-prefix", ratelimit.DefaultKeyPrefix, "prefix of the Redis keys of the rate limit buckets")
}

func (r redisFlags) validate() error {
	if r.addr == "" && r.tls {
		return errors.New("--redis-tls needs --redis-address")
	}
	return nil
}

// limiter is the rate limiter the flags ask for, and what closes it: nil (the server's in-process limiter)
// without --redis-address. An unreachable Redis does not stop the runtime: the limiter falls back to per-replica
// limits until Redis answers.
func (r redisFlags) limiter(log *slog.Logger, reg prometheus.Registerer) (server.RateLimiter, func(), error) {
	if err := r.validate(); err != nil {
		return nil, nil, err
	}
	if r.addr == "" {
		return nil, func() {}, nil
	}
	client, err := ratelimit.NewRedisClient(ratelimit.RedisConfig{Addr: r.addr, Password: os.Getenv(redisPasswordEnv), TLS: r.tls})
	if err != nil {
		return nil, nil, fmt.Errorf("--redis-address: %w", err)
	}
	l, err := ratelimit.NewRedis(client, ratelimit.RedisOptions{KeyPrefix: r.keyPrefix, Logger: log, Registerer: reg})
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	log.Info("rate limits are shared through Redis", "redis", r.addr, "tls", r.tls)
	return l, func() { _ = client.Close() }, nil
}
