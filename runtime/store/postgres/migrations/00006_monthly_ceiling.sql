-- +goose Up
-- The ceiling the last claim of a month's conversation was made under (0: none), kept in the counter row so that
-- the database itself refuses a claim past it: the claim can then go to the server with the rest of the
-- exchange and the COMMIT, and the counter row, which every new conversation of the merchant updates, is locked
-- only until that COMMIT, not across a round trip.

ALTER TABLE monthly_conversations ADD COLUMN ceiling INTEGER NOT NULL DEFAULT 0,
    ADD CONSTRAINT monthly_conversations_within_ceiling CHECK (ceiling = 0 OR count <= ceiling);

-- +goose Down
ALTER TABLE monthly_conversations DROP CONSTRAINT monthly_conversations_within_ceiling, DROP COLUMN ceiling;
