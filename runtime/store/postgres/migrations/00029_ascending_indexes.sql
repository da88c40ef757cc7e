-- +goose NO TRANSACTION
-- +goose Up
-- The listings' indexes ascend by creation time. PostgreSQL scans an index backwards for a listing newest first;
-- but a row created now goes at the end of its merchant's part of an ascending index and at the start of a
-- descending one, where a full page is split in halves instead of filled. Each is built anew CONCURRENTLY, outside
-- a transaction, under another name, then takes the old one's place, so that replicas go on writing meanwhile;
-- IF EXISTS and IF NOT EXISTS let a migration stopped half-way run again.

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_created_asc ON conversations (merchant_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_created;
ALTER INDEX IF EXISTS conversations_by_created_asc RENAME TO conversations_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_lead_asc ON conversations (merchant_id, has_lead, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_lead;
ALTER INDEX IF EXISTS conversations_by_lead_asc RENAME TO conversations_by_lead;

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_status_asc ON conversations (merchant_id, status, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_status;
ALTER INDEX IF EXISTS conversations_by_status_asc RENAME TO conversations_by_status;

CREATE INDEX CONCURRENTLY IF NOT EXISTS knowledge_by_created_asc ON knowledge (merchant_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS knowledge_by_created;
ALTER INDEX IF EXISTS knowledge_by_created_asc RENAME TO knowledge_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS leads_by_created_asc ON leads (merchant_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS leads_by_created;
ALTER INDEX IF EXISTS leads_by_created_asc RENAME TO leads_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_by_created_asc ON deliveries (merchant_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS deliveries_by_created;
ALTER INDEX IF EXISTS deliveries_by_created_asc RENAME TO deliveries_by_created;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_by_created_desc ON deliveries (merchant_id, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS deliveries_by_created;
ALTER INDEX IF EXISTS deliveries_by_created_desc RENAME TO deliveries_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS leads_by_created_desc ON leads (merchant_id, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS leads_by_created;
ALTER INDEX IF EXISTS leads_by_created_desc RENAME TO leads_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS knowledge_by_created_desc ON knowledge (merchant_id, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS knowledge_by_created;
ALTER INDEX IF EXISTS knowledge_by_created_desc RENAME TO knowledge_by_created;

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_status_desc ON conversations (merchant_id, status, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_status;
ALTER INDEX IF EXISTS conversations_by_status_desc RENAME TO conversations_by_status;

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_lead_desc ON conversations (merchant_id, has_lead, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_lead;
ALTER INDEX IF EXISTS conversations_by_lead_desc RENAME TO conversations_by_lead;

CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_by_created_desc ON conversations (merchant_id, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS conversations_by_created;
ALTER INDEX IF EXISTS conversations_by_created_desc RENAME TO conversations_by_created;
