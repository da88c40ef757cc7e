-- +goose Up
-- A draft item is kept but not answered from, cited or suggested (store.Knowledge.Draft); every item stored before
-- is published.
ALTER TABLE knowledge ADD COLUMN draft boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE knowledge DROP COLUMN draft;
