-- +goose Up
-- A conversation holds at most 1,000 messages (store.MaxConversationMessages). The runtime refuses a turn past it
-- when it reads the conversation; turns that arrive together each read it with room left, so the database
-- refuses the exchange that would take it past, and the store returns store.ErrConversationFull for it. An
-- exchange updates message_count in place, or through an upsert's DO UPDATE, which fires this trigger too.

-- +goose StatementBegin
CREATE TRIGGER conversations_within_message_cap BEFORE UPDATE OF message_count ON conversations
WHEN NEW.message_count > 1000
BEGIN
    SELECT RAISE(ABORT, 'conversations_within_message_cap');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER conversations_within_message_cap;
