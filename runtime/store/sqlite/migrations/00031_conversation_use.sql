-- +goose Up
-- A conversation counts its answers (assistant messages) and the model tokens they took, kept with each exchange,
-- so that a turn checks the plan's bounds per conversation and per visitor from the conversations' rows instead
-- of summing their messages: those sums were two fifths of a widget message's CPU at make bench's load.
ALTER TABLE conversations ADD COLUMN answers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET
    answers = (SELECT COUNT(*) FROM messages m
        WHERE m.merchant_id = conversations.merchant_id AND m.conversation_id = conversations.id AND m.role = 'assistant'),
    tokens = (SELECT COALESCE(SUM(m.tokens), 0) FROM messages m
        WHERE m.merchant_id = conversations.merchant_id AND m.conversation_id = conversations.id)
WHERE message_count > 0;

-- +goose Down
ALTER TABLE conversations DROP COLUMN tokens;
ALTER TABLE conversations DROP COLUMN answers;
