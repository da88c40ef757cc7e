-- +goose NO TRANSACTION
-- +goose Up
-- Free pages go back to the file system: the store runs an incremental vacuum after every erasure and per-record
-- deletion, so that a large erasure shrinks the file. SQLite switches an existing database to INCREMENTAL only by
-- rebuilding it with VACUUM, which cannot run in a transaction. VACUUM is atomic (a crash leaves the database as
-- it was, and this migration runs again) and needs free disk space for a copy of the database while it runs; on a
-- new database it has almost nothing to copy.
PRAGMA auto_vacuum = INCREMENTAL;
VACUUM;

-- +goose Down
PRAGMA auto_vacuum = NONE;
VACUUM;
