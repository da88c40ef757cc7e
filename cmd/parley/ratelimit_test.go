package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/ratelimit"
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

func TestRuntimeRefusesRedisTLSWithoutAddress(t *testing.T) {
	err := run(t.Context(), []string{"runtime", "--tenants-dir", t.TempDir(), "--redis-tls"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--redis-tls needs --redis-address") {
		t.Fatalf("got %v", err)
	}
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }
