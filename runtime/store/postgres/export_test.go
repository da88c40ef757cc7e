//go:build integration

package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/runtime/store/storetest"
)

// MerchantTables are the tables EraseMerchant deletes from, for the schema test.
var MerchantTables = merchantTables

// MigrateTo brings the database at url to the schema of the given migration version, for tests of what a later
// migration does to existing rows.
func MigrateTo(ctx context.Context, url string, version int64) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	return migrate(ctx, cfg, version)
}

// RecordEventsQueries are the queries of a conversation's and a lead's events, for the query plan test.
var RecordEventsQueries = []string{conversationEvents, leadEvents}

// ListingQueries are the listings' queries in PostgreSQL's dialect, for the query plan test
// (storetest.ListingQueries).
func ListingQueries(merchantID string, after bool) map[string]storetest.Query {
	return storetest.ListingQueries(dialect{}, merchantID, after)
}
