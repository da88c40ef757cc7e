-- +goose Up
-- An item made from an uploaded file names the file, so that the file uploaded again under the same name replaces
-- the items of its earlier upload instead of adding them twice; any other item has ''.
ALTER TABLE knowledge ADD COLUMN file TEXT NOT NULL DEFAULT '';
CREATE INDEX knowledge_by_file ON knowledge (merchant_id, file) WHERE file != '';

-- +goose Down
DROP INDEX knowledge_by_file;
ALTER TABLE knowledge DROP COLUMN file;
