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

func TestRedisFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
		redis   bool
	}{
		{args: nil},
		{args: []string{"--redis-tls"}, wantErr: "--redis-tls needs --redis-address"},
		{args: []string{"--redis-address=redis"}, wantErr: "is not host:port"},
		{args: []string{"--redis-address=redis.parley-system.svc:6379", "--redis-tls"}, redis: true},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var l *ratelimit.Redis
			closeLimiter := func() {}
			c, err := contract.ParseRuntime(append([]string{"--tenants-dir=bundles"}, tc.args...), noEnv, io.Discard)
			if err == nil {
				l, closeLimiter, err = redisLimiter(c, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeLimiter()
			if (l != nil) != tc.redis {
				t.Errorf("Redis limiter %v, want one: %t", l, tc.redis)
			}
		})
	}
}

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

func TestRuntimeRefusesRedisTLSWithoutAddress(t *testing.T) {
	err := run(t.Context(), []string{"runtime", "--tenants-dir", t.TempDir(), "--redis-tls"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--redis-tls needs --redis-address") {
		t.Fatalf("got %v", err)
	}
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }
