package server

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store/postgres"
)

// pg is the package's throwaway PostgreSQL, for the tests that run on both stores: started by the first of them,
// so that `make test-unit` (-short, which skips them) needs no database server.
var pg struct {
	once   sync.Once
	server *pgtest.Server
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.server != nil {
		if err := pg.server.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: stopping the throwaway PostgreSQL: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// onPostgres runs the env's use cases on a PostgreSQL store of its own instead of SQLite.
func onPostgres(t testing.TB) envOption {
	t.Helper()
	if testing.Short() {
		t.Skip("the PostgreSQL half runs in make test; make test-unit is -short")
	}
	pg.once.Do(func() { pg.server, pg.err = pgtest.Start(context.Background()) })
	if pg.err != nil {
		t.Fatalf("starting a throwaway PostgreSQL: %v", pg.err)
	}
	st, err := postgres.Open(t.Context(), pg.server.Database(t))
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
