-- +goose Up
-- A chat turn reads the latest messages of its conversation (ConversationTail): through this index it reads only
-- those, newest first, where the unique index on (merchant_id, conversation_id, id) made it read and sort all
-- the conversation's messages.

CREATE INDEX messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);

-- +goose Down
DROP INDEX messages_by_conversation;
