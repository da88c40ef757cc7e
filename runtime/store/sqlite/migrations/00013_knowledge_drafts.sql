-- +goose Up
-- A draft item is kept but not answered from, cited or suggested (store.Knowledge.Draft); every item stored before
-- is published.
ALTER TABLE knowledge ADD COLUMN draft INTEGER NOT NULL DEFAULT 0 CHECK (draft IN (0, 1));

-- +goose Down
ALTER TABLE knowledge DROP COLUMN draft;
