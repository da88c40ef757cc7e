-- +goose Up
-- Declared knowledge sources (store.KnowledgeSource.Generation): a source that stands for a KnowledgeSource
-- object carries its generation, 0 for one made through the API; the last finished sync records the generation
-- it read and how it ended, which the operator reports as the object's Ready condition.
ALTER TABLE knowledge_sources ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE knowledge_sources ADD COLUMN synced_generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE knowledge_sources ADD COLUMN last_outcome TEXT NOT NULL DEFAULT ''
    CHECK (last_outcome IN ('', 'ready', 'failed'));

-- +goose Down
ALTER TABLE knowledge_sources DROP COLUMN last_outcome;
ALTER TABLE knowledge_sources DROP COLUMN synced_generation;
ALTER TABLE knowledge_sources DROP COLUMN generation;
