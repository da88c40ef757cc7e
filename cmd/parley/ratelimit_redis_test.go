//go:build integration

package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/tenant"
)

// `parley runtime --redis-address` limits request rates and new conversations through that Redis, under its key
// prefix, with the password from the environment, which it never logs.
func TestRedisLimiterFromFlags(t *testing.T) {
	const password = "from-the-secret"
	srv := redistest.Start(t, redistest.Options{Password: password})
	env := map[string]string{contract.EnvRedisPassword: password}
	cfg, err := contract.ParseRuntime([]string{"--tenants-dir=bundles", "--redis-address=" + srv.Addr, "--redis-key-prefix=test:"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	l, closeLimiter, err := redisLimiter(cfg, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer closeLimiter()
	if ok, _, _ := l.Allow(t.Context(), "acme", tenant.Plan{RequestsPerSecond: 1, Burst: 1}, time.Now()); !ok {
		t.Fatal("the first request was refused")
	}
	conversations := l.Keyed()
	if refused, _ := conversations.Allow(t.Context(), []ratelimit.Quota{{Key: "acme\x00a\x00192.0.2.1", N: 1, Period: time.Hour}}, time.Now()); refused != -1 {
		t.Fatal("the first new conversation was refused")
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: password})
	defer func() { _ = c.Close() }()
	for _, key := range []string{"test:acme", conversations.Key("acme\x00a\x00192.0.2.1")} {
		if n, err := c.Exists(t.Context(), key).Result(); err != nil || n != 1 || !strings.HasPrefix(key, "test:") {
			t.Errorf("no bucket %s in Redis: %d, %v", key, n, err)
		}
	}
	if strings.Contains(logs.String(), password) || strings.Contains(logs.String(), "does not answer") {
		t.Errorf("log:\n%s", logs.String())
	}
}
