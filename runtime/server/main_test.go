package server

import "testing"

// storeOption names a store other than the env's SQLite, for onEachStore.
type storeOption struct {
	name string
	open func(testing.TB) envOption
}

// otherStores are the stores onEachStore runs the use cases on besides SQLite: PostgreSQL in the integration
// tier (postgres_test.go), none in the fast one, which starts no database server.
var otherStores []storeOption

// onEachStore runs test on an env over SQLite and on one over each other store: every store must answer alike.
func onEachStore(t *testing.T, test func(t *testing.T, e *env), opts ...envOption) {
	t.Run("sqlite", func(t *testing.T) { test(t, newEnv(t, opts...)) })
	for _, s := range otherStores {
		t.Run(s.name, func(t *testing.T) { test(t, newEnv(t, append([]envOption{s.open(t)}, opts...)...)) })
	}
}
