package dashboard_test

import (
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
)

// otherStores open the stores onEachStore runs on besides SQLite: PostgreSQL in the integration tier
// (postgres_test.go), none in the fast one, which starts no database server.
var otherStores []storeOption

// storeOption opens a store of one kind for a test, closed when the test ends.
type storeOption struct {
	name string
	open func(t *testing.T) store.Store
}

// onEachStore runs test on an env over SQLite and on one over each other store: every store must answer alike.
func onEachStore(t *testing.T, test func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		test(t, newEnvOn(t, st))
	})
	for _, s := range otherStores {
		t.Run(s.name, func(t *testing.T) { test(t, newEnvOn(t, s.open(t))) })
	}
}
