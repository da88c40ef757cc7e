package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/internal/storeutil"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// MerchantTables are the tables EraseMerchant deletes from, for the schema test.
var MerchantTables = merchantTables

// MigrateTo creates the database file at path with the schema of the given migration version, for tests of
// what a later migration does to existing rows, and returns a connection to write those rows with.
func MigrateTo(ctx context.Context, path string, version int64) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := openDB(ctx, dsn(abs, true), 1)
	if err != nil {
		return nil, err
	}
	p, err := migrator(db)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// TailQuery is the query of a chat turn's latest messages and its arguments, for the query plan test.
func TailQuery(merchantID, id string) (string, []any) {
	return storeutil.TailQuery(dialect{}, merchantID, id, 20)
}

// VisitorUseQuery is the query of a visitor's answers and tokens of a day and its arguments, for the query plan
// test.
func VisitorUseQuery(merchantID, visitorID string, since time.Time) (string, []any) {
	return storeutil.VisitorUseQuery(dialect{}, merchantID, visitorID, since)
}

// ConversationsQuery is the first page's query of a conversation listing and its arguments, for the query plan
// test.
func ConversationsQuery(merchantID string, f store.ConversationFilter) (string, []any) {
	return storeutil.ConversationsQuery(dialect{}, merchantID, nil, f, 21)
}

// ListingQueries are the listings' queries in SQLite's dialect, for the query plan test (storetest.ListingQueries).
func ListingQueries(merchantID string, after bool) map[string]storetest.Query {
	return storetest.ListingQueries(dialect{}, merchantID, after)
}

// RecordEventsQueries are the queries of a conversation's and a lead's events, for the query plan test.
var RecordEventsQueries = []string{conversationEvents, leadEvents}
