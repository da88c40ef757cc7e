-- +goose NO TRANSACTION
-- +goose Up
-- A chat turn reads the latest messages of its conversation (ConversationTail): through this index it reads only
-- those, newest first, where the unique index on (merchant_id, conversation_id, id) made it read and sort all
-- the conversation's messages. Built CONCURRENTLY, outside a transaction, so that replicas already running go on
-- writing messages while a large table is indexed.

CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_by_conversation;
