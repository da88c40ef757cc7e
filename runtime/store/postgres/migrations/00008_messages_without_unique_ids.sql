-- +goose Up
-- Messages lose their unique constraint on (merchant_id, conversation_id, id). Only the runtime makes message IDs
-- (the time and 48 random bits, runtime/ids), so its index checked nothing that can happen, while every exchange
-- inserted two entries into it. The reads that found a message by its ID (an unanswered question by its answer's
-- reply_to) find it among its conversation's messages through messages_by_conversation. Dropping the constraint
-- waits for the transactions writing messages at that moment, then holds the table's lock only while its index is
-- removed.

ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_merchant_id_conversation_id_id_key;

-- +goose Down
ALTER TABLE messages ADD CONSTRAINT messages_merchant_id_conversation_id_id_key UNIQUE (merchant_id, conversation_id, id);
