-- +goose Up
-- The conversations with a lead are indexed alone: a conversation starts without one, so starting it no longer
-- writes this index (one b-tree page and one seek fewer in each new conversation's commit). Listings filtered
-- on has_lead = 1 read this index; on has_lead = 0, most conversations, conversations_by_created.

DROP INDEX conversations_by_lead;
CREATE INDEX conversations_with_lead ON conversations (merchant_id, created_at DESC, id DESC) WHERE has_lead = 1;

-- +goose Down
DROP INDEX conversations_with_lead;
CREATE INDEX conversations_by_lead ON conversations (merchant_id, has_lead, created_at DESC, id DESC);
