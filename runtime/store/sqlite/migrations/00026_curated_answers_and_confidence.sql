-- +goose Up
-- An item can be the curated answer to its listed questions: the assistant gives its content, as written, to a
-- question that asks one of them. Each answer keeps the retriever's confidence in it (0 to 1; 0 when not measured:
-- small talk, notices, and the answers written before this migration), so that the review queue lists the answers
-- given with little of it.
ALTER TABLE knowledge ADD COLUMN curated INTEGER NOT NULL DEFAULT 0 CHECK (curated IN (0, 1));
ALTER TABLE messages ADD COLUMN confidence REAL NOT NULL DEFAULT 0 CHECK (confidence BETWEEN 0 AND 1);

-- +goose Down
ALTER TABLE messages DROP COLUMN confidence;
ALTER TABLE knowledge DROP COLUMN curated;
