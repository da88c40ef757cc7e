-- +goose Up
-- A conversation holds at most 1,000 messages (store.MaxConversationMessages). The runtime refuses a turn past it
-- when it reads the conversation; turns that arrive together each read it with room left, so the database
-- refuses the exchange that would take it past, and the store returns store.ErrConversationFull for it. NOT
-- VALID: a conversation the races before this constraint took past the cap stays as it is (the runtime refuses
-- its turns already), and adding the constraint reads no row.

ALTER TABLE conversations ADD CONSTRAINT conversations_within_message_cap CHECK (message_count <= 1000) NOT VALID;

-- +goose Down
ALTER TABLE conversations DROP CONSTRAINT conversations_within_message_cap;
