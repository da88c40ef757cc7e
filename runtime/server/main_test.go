package server

import (
	"os"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store/postgres"
)

// pg is the package's throwaway PostgreSQL, for the tests that run on both stores.
var pg *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(s *pgtest.Server) { pg = s }))
}

// onPostgres runs the env's use cases on a PostgreSQL store of its own instead of SQLite.
func onPostgres(t testing.TB) envOption {
	t.Helper()
	st, err := postgres.Open(t.Context(), pg.Database(t))
	if err != nil {
		t.Fatalf("opening the PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return func(c *envConfig) { c.chat.Store = st }
}

// onEachStore runs test on an env over SQLite and on one over PostgreSQL: both stores must answer alike.
func onEachStore(t *testing.T, test func(t *testing.T, e *env), opts ...envOption) {
	t.Run("sqlite", func(t *testing.T) { test(t, newEnv(t, opts...)) })
	t.Run("postgres", func(t *testing.T) { test(t, newEnv(t, append([]envOption{onPostgres(t)}, opts...)...)) })
}
