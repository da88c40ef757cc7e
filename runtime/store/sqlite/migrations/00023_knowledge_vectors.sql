-- +goose Up
-- The embeddings of the knowledge items' passages (store.KnowledgeVector), by the model provider's embedding
-- model: the vector as little-endian float32s, and the SHA-256 of the text embedded, so that an item that changed
-- or a model that changed is embedded again. An item's rows go with it.
CREATE TABLE knowledge_vectors (
    merchant_id  TEXT    NOT NULL,
    knowledge_id TEXT    NOT NULL,
    passage      INTEGER NOT NULL CHECK (passage >= 0),
    model        TEXT    NOT NULL,
    text_hash    TEXT    NOT NULL,
    vector       BLOB    NOT NULL,
    PRIMARY KEY (merchant_id, knowledge_id, passage),
    FOREIGN KEY (merchant_id, knowledge_id) REFERENCES knowledge (merchant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- +goose Down
DROP TABLE knowledge_vectors;
