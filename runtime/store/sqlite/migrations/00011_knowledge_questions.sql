-- +goose Up
-- The questions visitors ask that an item answers, as its merchant lists them, one a line.
ALTER TABLE knowledge ADD COLUMN questions TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE knowledge DROP COLUMN questions;
