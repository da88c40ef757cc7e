//go:build integration

package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
)

// pg is the package's throwaway PostgreSQL, for the tests that run on both stores: started by the first of them.
var pg struct {
	once   sync.Once
	server *pgtest.Server
	err    error
}

func init() { otherStores = append(otherStores, storeOption{name: "postgres", open: openPostgres}) }

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

// openPostgres opens a PostgreSQL store on a database of its own in the package's throwaway server.
func openPostgres(t *testing.T) store.Store {
	t.Helper()
	pg.once.Do(func() { pg.server, pg.err = pgtest.Start(context.Background()) })
	if pg.err != nil {
		t.Fatalf("starting a throwaway PostgreSQL: %v", pg.err)
	}
	st, err := postgres.Open(t.Context(), pg.server.Database(t))
	if err != nil {
		t.Fatalf("opening the PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
