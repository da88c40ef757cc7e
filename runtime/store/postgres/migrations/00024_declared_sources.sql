-- +goose Up
-- Declared knowledge sources (store.KnowledgeSource.Generation): a source that stands for a KnowledgeSource
-- object carries its generation, 0 for one made through the API; the last finished sync records the generation
-- it read and how it ended, which the operator reports as the object's Ready condition.
ALTER TABLE knowledge_sources
    ADD COLUMN generation        BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN synced_generation BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN last_outcome      TEXT   NOT NULL DEFAULT '' CHECK (last_outcome IN ('', 'ready', 'failed'));

-- +goose Down
ALTER TABLE knowledge_sources DROP COLUMN last_outcome, DROP COLUMN synced_generation, DROP COLUMN generation;
