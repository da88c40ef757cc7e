-- +goose Up
-- How many answers cited each knowledge item, out of the item's row: counting a citation then rewrites a row of
-- three integers instead of the whole item with its content. Items never cited have no row.

CREATE TABLE knowledge_uses (
    merchant_id TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    uses        INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, id) REFERENCES knowledge (merchant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

INSERT INTO knowledge_uses (merchant_id, id, uses)
SELECT merchant_id, id, use_count FROM knowledge WHERE use_count > 0;

ALTER TABLE knowledge DROP COLUMN use_count;

-- +goose Down
ALTER TABLE knowledge ADD COLUMN use_count INTEGER NOT NULL DEFAULT 0;
UPDATE knowledge SET use_count = u.uses FROM knowledge_uses u WHERE u.merchant_id = knowledge.merchant_id AND u.id = knowledge.id;
DROP TABLE knowledge_uses;
