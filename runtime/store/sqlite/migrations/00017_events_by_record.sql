-- +goose Up
-- A conversation's or a lead's deletion finds their events by the conversation or lead their payload names
-- (personalData): without these, it would read every event the merchant has.
CREATE INDEX events_by_conversation ON events (merchant_id, json_extract(payload, '$.data.conversation_id'));
CREATE INDEX events_by_lead ON events (merchant_id, json_extract(payload, '$.data.lead_id'));

-- +goose Down
DROP INDEX events_by_lead;
DROP INDEX events_by_conversation;
