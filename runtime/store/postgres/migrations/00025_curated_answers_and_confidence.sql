-- +goose Up
-- An item can be the curated answer to its listed questions: the assistant gives its content, as written, to a
-- question that asks one of them. Each answer keeps the retriever's confidence in it (0 to 1; 0 when not measured:
-- small talk, notices, and the answers written before this migration), so that the review queue lists the answers
-- given with little of it. Both columns have constant defaults: adding them rewrites no table.
ALTER TABLE knowledge ADD COLUMN curated BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE messages ADD COLUMN confidence DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (confidence BETWEEN 0 AND 1);

-- +goose Down
ALTER TABLE messages DROP COLUMN confidence;
ALTER TABLE knowledge DROP COLUMN curated;
