-- +goose Up
-- The retention sweep (DeleteExpired) finds a merchant's oldest conversations, leads and outbox events by the time
-- they last changed, a batch at a time: without these, each batch would read all the merchant's rows.
CREATE INDEX conversations_by_updated ON conversations (merchant_id, updated_at);
CREATE INDEX leads_by_updated ON leads (merchant_id, updated_at);
CREATE INDEX events_by_created ON events (merchant_id, created_at);

-- A lease lets one replica of many run a task, the retention sweep: its holder until it ends.
CREATE TABLE leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE leases;
DROP INDEX events_by_created;
DROP INDEX leads_by_updated;
DROP INDEX conversations_by_updated;
