-- +goose Up
-- A conversation counts its answers (assistant messages) and the model tokens they took, kept with each exchange,
-- so that a turn checks the plan's bounds per conversation and per visitor from the conversations' rows instead
-- of summing their messages.
ALTER TABLE conversations ADD COLUMN answers integer NOT NULL DEFAULT 0, ADD COLUMN tokens bigint NOT NULL DEFAULT 0;
UPDATE conversations c SET answers = u.answers, tokens = u.tokens
FROM (SELECT merchant_id, conversation_id, COUNT(*) FILTER (WHERE role = 'assistant') AS answers,
        COALESCE(SUM(tokens), 0) AS tokens
    FROM messages GROUP BY merchant_id, conversation_id) u
WHERE u.merchant_id = c.merchant_id AND u.conversation_id = c.id;

-- +goose Down
ALTER TABLE conversations DROP COLUMN tokens, DROP COLUMN answers;
