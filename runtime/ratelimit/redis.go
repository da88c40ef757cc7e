package ratelimit

import (
	"context"
	"crypto/tls"
	_ "embed" // the token bucket script
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/tenant"
)

// DefaultKeyPrefix starts the Redis key of every merchant's bucket: <prefix><merchantID>. It is the default of
// `parley runtime --redis-key-prefix`.
const DefaultKeyPrefix = contract.DefaultRedisKeyPrefix

//go:embed tokenbucket.lua
var tokenBucketLua string

var tokenBucket = redis.NewScript(tokenBucketLua)

// RedisConfig is how the runtime reaches Redis.
type RedisConfig struct {
	// Addr is host:port.
	Addr string
	// Password authenticates (AUTH); none when empty.
	Password string
	// TLS connects with TLS (1.2 or later), verifying the server's certificate against the system roots.
	TLS bool
}

// NewRedisClient connects to Redis with short timeouts: a rate limit decision must never hold a request up for
// long, and when Redis does not answer the Redis limiter decides locally instead.
func NewRedisClient(c RedisConfig) (*redis.Client, error) {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("redis address %q is not host:port", c.Addr)
	}
	opts := &redis.Options{
		Addr:            c.Addr,
		Password:        c.Password,
		DialTimeout:     time.Second,
		ReadTimeout:     250 * time.Millisecond,
		WriteTimeout:    250 * time.Millisecond,
		PoolTimeout:     250 * time.Millisecond,
		MaxRetries:      1, // once, for a pooled connection that died with a Redis restart
		DisableIdentity: true,
		// The limiter's own deadline (RedisOptions.Timeout) must bound every call.
		ContextTimeoutEnabled: true,
	}
	if c.TLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	}
	return redis.NewClient(opts), nil
}

// RedisOptions configure a Redis limiter.
type RedisOptions struct {
	// KeyPrefix starts every bucket's key; DefaultKeyPrefix when empty. Runtimes that share one Redis but not
	// their merchants need different prefixes.
	KeyPrefix string
	// Fallback decides while Redis is unreachable; a Local limiter when nil.
	Fallback Limiter
	// Logger receives a warning when Redis stops answering and a note when it answers again.
	Logger *slog.Logger
	// Registerer receives the limiter's metrics; none are registered when nil.
	Registerer prometheus.Registerer
	// Timeout bounds one decision in Redis; 250ms when zero.
	Timeout time.Duration
	// Backoff is how long decisions stay local after Redis failed before Redis is asked again; 1s when zero.
	Backoff time.Duration
}

// Redis keeps each merchant's token bucket in Redis, so that all replicas of a runtime share the plan's rate: a
// merchant at 10 requests per second gets 10 per second in all, however many replicas serve it. Each decision is
// one atomic script in Redis, timed by the Redis server's clock.
//
// When Redis fails (unreachable, timing out, refusing the password), the limiter fails open to its fallback, a
// per-replica token bucket of the same plan, as most API gateways do: the merchant's limit then applies per
// replica, so N replicas allow up to N times the rate until Redis answers again. Refusing every request, or
// answering 500, because a cache is down would take every merchant offline. The failure is logged once as a
// warning, counted in parley_runtime_ratelimit_redis_errors_total, shown by parley_runtime_ratelimit_redis_up = 0,
// and for Backoff after each failure Redis is not asked at all, so a dead Redis adds no latency to requests.
type Redis struct {
	client    redis.Scripter
	prefix    string
	fallback  Limiter
	log       *slog.Logger
	timeout   time.Duration
	backoff   time.Duration
	downUntil atomic.Int64 // Unix nanoseconds before which Redis is not asked
	down      atomic.Bool  // whether the last attempt failed
	errs      prometheus.Counter
	fallbacks prometheus.Counter
	up        prometheus.Gauge
}

// NewRedis returns a limiter keeping its buckets in Redis through client.
func NewRedis(client redis.Scripter, o RedisOptions) (*Redis, error) {
	if client == nil {
		return nil, errors.New("ratelimit: a Redis client is required")
	}
	r := &Redis{client: client, prefix: o.KeyPrefix, fallback: o.Fallback, log: o.Logger, timeout: o.Timeout, backoff: o.Backoff,
		errs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_ratelimit_redis_errors_total",
			Help: "Rate limit decisions Redis failed to make.",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_runtime_ratelimit_fallback_decisions_total",
			Help: "Rate limit decisions made by this replica alone because Redis did not answer.",
		}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_runtime_ratelimit_redis_up",
			Help: "1 when the last rate limit decision in Redis succeeded, 0 while decisions are made per replica.",
		}),
	}
	r.up.Set(1)
	if r.prefix == "" {
		r.prefix = DefaultKeyPrefix
	}
	if r.fallback == nil {
		r.fallback = NewLocal()
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.timeout <= 0 {
		r.timeout = 250 * time.Millisecond
	}
	if r.backoff <= 0 {
		r.backoff = time.Second
	}
	if o.Registerer != nil {
		for _, c := range []prometheus.Collector{r.errs, r.fallbacks, r.up} {
			if err := o.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("registering rate limit metrics: %w", err)
			}
		}
	}
	return r, nil
}

// Key is the Redis key of a merchant's bucket.
func (r *Redis) Key(merchantID string) string { return r.prefix + merchantID }

// Allow implements Limiter: one token from the merchant's bucket in Redis, or from the fallback while Redis
// fails. now is used only by the fallback; Redis uses its own clock.
func (r *Redis) Allow(ctx context.Context, merchantID string, plan tenant.Plan, now time.Time) (bool, int, time.Duration) {
	var ok bool
	var remaining int
	var wait time.Duration
	if !r.decide(ctx, func() (err error) {
		ok, remaining, wait, err = r.allow(ctx, merchantID, plan)
		return err
	}) {
		return r.fallback.Allow(ctx, merchantID, plan, now)
	}
	return ok, remaining, wait
}

// decide runs one decision in Redis unless Redis failed within the backoff, and keeps Redis's health: it reports
// false when the caller must decide locally instead.
func (r *Redis) decide(ctx context.Context, inRedis func() error) bool {
	if time.Now().UnixNano() < r.downUntil.Load() {
		r.fallbacks.Inc()
		return false
	}
	if err := inRedis(); err != nil {
		if ctx.Err() == nil { // a request that went away says nothing about Redis
			r.failed(err)
		}
		r.fallbacks.Inc()
		return false
	}
	if r.down.Swap(false) {
		r.up.Set(1)
		r.log.Info("redis answers rate limit decisions again; limits are shared by all replicas")
	}
	return true
}

func (r *Redis) allow(ctx context.Context, merchantID string, plan tenant.Plan) (bool, int, time.Duration, error) {
	refused, left, wait, err := r.takeTokens(ctx, []string{r.Key(merchantID)},
		strconv.Itoa(int(plan.RequestsPerSecond)), strconv.Itoa(int(plan.Burst)))
	return refused < 0, left, wait, err
}

// takeTokens runs the token bucket script on keys, with a rate and a burst in args for each. It reports the
// index of the first bucket without a token, or -1 when one was taken from each; the tokens left in that bucket
// (the first one when allowed); and how long until it has a token.
func (r *Redis) takeTokens(ctx context.Context, keys []string, args ...any) (int, int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res, err := tokenBucket.Run(ctx, r.client, keys, args...).Int64Slice()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("running the token bucket script: %w", err)
	}
	if len(res) != 3 || res[0] < 0 || res[0] > int64(len(keys)) {
		return 0, 0, 0, fmt.Errorf("the token bucket script returned %v for %d keys", res, len(keys))
	}
	return int(res[0]) - 1, int(max(0, res[1])), time.Duration(res[2]) * time.Microsecond, nil
}

func (r *Redis) failed(err error) {
	r.errs.Inc()
	r.downUntil.Store(time.Now().Add(r.backoff).UnixNano())
	if !r.down.Swap(true) {
		r.up.Set(0)
		r.log.Warn("redis does not answer rate limit decisions; limiting per replica until it does",
			"error", err, "retry_in", r.backoff.String())
	}
}
