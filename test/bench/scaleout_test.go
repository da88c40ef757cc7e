//go:build integration

package bench

import (
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/tenant"
)

// BenchmarkChatHTTPScaleOut is BenchmarkChatHTTP on the scale-out set-up: `parley runtime` on PostgreSQL, with
// the rate limit kept in Redis, both throwaway servers the benchmark starts (Debian's postgresql and
// redis-server), and the same 1,000-item knowledge base, load and bare handler. Run it with `make bench`.
func BenchmarkChatHTTPScaleOut(b *testing.B) {
	wrk := lookWrk(b)
	pg, err := pgtest.Start(b.Context())
	if err != nil {
		b.Fatalf("starting PostgreSQL: %v", err)
	}
	b.Cleanup(func() { _ = pg.Stop() })
	url := pg.Database(b)
	redis := redistest.Start(b)

	st, err := postgres.Open(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	seedKnowledge(b, st, "bench")
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}

	key, secret := benchKey(b, credentials.SecretPrefix, tenant.KeySecret)
	publishable, public := benchKey(b, credentials.PublishablePrefix, tenant.KeyPublishable)
	const origin = "https://shop.example"
	tenants := filepath.Join(b.TempDir(), "tenants")
	bundletest.WriteFile(b, filepath.Join(tenants, "bench.json"), &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "bench",
		DisplayName: "bench", Plan: tenant.Plan{Name: "bench", RequestsPerSecond: 1_000_000, Burst: 2_000_000, APIAccess: true},
		APIKeys: []tenant.APIKey{secret, public}, AllowedOrigins: []string{origin}})
	extra, profile := profiling(b)
	rt := runtimeproc.Start(b, runtimeproc.Build(b), []string{contract.EnvDatabaseURL + "=" + url},
		append([]string{"--storage=postgres", "--tenants-dir=" + tenants, "--redis-address=" + redis.Addr, "--log-level=error"}, extra...)...)
	loadChat(b, wrk, devProcess{base: rt.URL, key: key, publishable: publishable, origin: origin, pid: rt.Pid()}, profile)
}

// benchKey makes a key of the given prefix and its bundle entry.
func benchKey(b *testing.B, prefix string, kind tenant.KeyType) (string, tenant.APIKey) {
	key, err := credentials.NewAPIKey(prefix)
	if err != nil {
		b.Fatal(err)
	}
	d, err := credentials.Describe(key)
	if err != nil {
		b.Fatal(err)
	}
	return key, tenant.APIKey{ID: d.ID, Type: kind, SHA256: d.SHA256}
}
