-- +goose Up
-- The listings' indexes ascend by creation time. SQLite reads an index backwards as fast as forwards, so a listing
-- newest first is unchanged; but a row created now goes at the end of its merchant's part of an ascending index and
-- at the start of a descending one, and SQLite appends to the end of a B-tree without rebalancing it (its quick
-- balance). With conversations_by_status (migration 18) a chat turn's write took half as long again.
DROP INDEX conversations_by_created;
CREATE INDEX conversations_by_created ON conversations (merchant_id, created_at, id);
DROP INDEX conversations_with_lead;
CREATE INDEX conversations_with_lead ON conversations (merchant_id, created_at, id) WHERE has_lead = 1;
DROP INDEX conversations_by_status;
CREATE INDEX conversations_by_status ON conversations (merchant_id, status, created_at, id);
DROP INDEX knowledge_by_created;
CREATE INDEX knowledge_by_created ON knowledge (merchant_id, created_at, id);
DROP INDEX leads_by_created;
CREATE INDEX leads_by_created ON leads (merchant_id, created_at, id);
DROP INDEX deliveries_by_created;
CREATE INDEX deliveries_by_created ON deliveries (merchant_id, created_at, id);

-- +goose Down
DROP INDEX deliveries_by_created;
CREATE INDEX deliveries_by_created ON deliveries (merchant_id, created_at DESC, id DESC);
DROP INDEX leads_by_created;
CREATE INDEX leads_by_created ON leads (merchant_id, created_at DESC, id DESC);
DROP INDEX knowledge_by_created;
CREATE INDEX knowledge_by_created ON knowledge (merchant_id, created_at DESC, id DESC);
DROP INDEX conversations_by_status;
CREATE INDEX conversations_by_status ON conversations (merchant_id, status, created_at DESC, id DESC);
DROP INDEX conversations_with_lead;
CREATE INDEX conversations_with_lead ON conversations (merchant_id, created_at DESC, id DESC) WHERE has_lead = 1;
DROP INDEX conversations_by_created;
CREATE INDEX conversations_by_created ON conversations (merchant_id, created_at DESC, id DESC);
