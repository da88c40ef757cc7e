package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/sqlite"
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

// onEachStore runs test on an env over SQLite and on one over PostgreSQL: both stores must answer alike.
func onEachStore(t *testing.T, test func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		test(t, newEnvOn(t, st))
	})
	t.Run("postgres", func(t *testing.T) {
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
		test(t, newEnvOn(t, st))
	})
}
