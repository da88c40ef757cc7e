-- +goose Up
-- The embeddings of the knowledge items' passages (store.KnowledgeVector), by the model provider's embedding
-- model: the vector as little-endian float32s (pgvector is not in the distribution's packages, and the search
-- runs in the runtime's index), and the SHA-256 of the text embedded, so that an item that changed or a model
-- that changed is embedded again. An item's rows go with it.
CREATE TABLE knowledge_vectors (
    merchant_id  TEXT COLLATE "C" NOT NULL,
    knowledge_id TEXT COLLATE "C" NOT NULL,
    passage      INTEGER NOT NULL CHECK (passage >= 0),
    model        TEXT    NOT NULL,
    text_hash    TEXT    NOT NULL,
    vector       BYTEA   NOT NULL,
    PRIMARY KEY (merchant_id, knowledge_id, passage),
    FOREIGN KEY (merchant_id, knowledge_id) REFERENCES knowledge (merchant_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE knowledge_vectors;
