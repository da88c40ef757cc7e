-- +goose Up
-- A visitor's turn counts the answers and tokens of the conversations it started in the last day (VisitorUse):
-- through this index it reads that visitor's conversations only, not every conversation of the merchant's day.

CREATE INDEX conversations_by_visitor ON conversations (merchant_id, visitor_id, created_at);

-- +goose Down
DROP INDEX conversations_by_visitor;
