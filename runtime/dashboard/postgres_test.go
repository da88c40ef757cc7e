//go:build integration

package dashboard_test

import (
	"os"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
)

// pg is the package's throwaway PostgreSQL, for the tests that run on both stores: started by the first of them.
var pg pgtest.Lazy

func init() { otherStores = append(otherStores, storeOption{name: "postgres", open: openPostgres}) }

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// openPostgres opens a PostgreSQL store on a database of its own in the package's throwaway server.
func openPostgres(t *testing.T) store.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), pg.Server(t).Database(t))
	if err != nil {
		t.Fatalf("opening the PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
