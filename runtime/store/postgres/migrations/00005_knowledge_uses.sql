-- +goose Up
-- How many answers cited each knowledge item, out of the item's row: counting a citation then writes a new
-- version of a narrow row instead of the whole item with its content, and locks only that row. Items never cited
-- have no row.

CREATE TABLE knowledge_uses (
    merchant_id TEXT COLLATE "C" NOT NULL,
    id          TEXT COLLATE "C" NOT NULL,
    uses        INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, id) REFERENCES knowledge (merchant_id, id) ON DELETE CASCADE
);

INSERT INTO knowledge_uses (merchant_id, id, uses)
SELECT merchant_id, id, use_count FROM knowledge WHERE use_count > 0;

ALTER TABLE knowledge DROP COLUMN use_count;

-- +goose Down
ALTER TABLE knowledge ADD COLUMN use_count INTEGER NOT NULL DEFAULT 0;
UPDATE knowledge k SET use_count = u.uses FROM knowledge_uses u WHERE u.merchant_id = k.merchant_id AND u.id = k.id;
DROP TABLE knowledge_uses;
