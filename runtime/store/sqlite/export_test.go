package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
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
