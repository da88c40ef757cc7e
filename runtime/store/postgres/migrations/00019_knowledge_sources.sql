-- +goose Up
-- Knowledge sources (store.KnowledgeSource): a website or a Git repository whose pages the runtime reads on a
-- schedule kept here, so that it survives a restart; lease_until is when the replica that claimed a sync gives it
-- up. Patterns are one a line.
CREATE TABLE knowledge_sources (
    merchant_id     TEXT COLLATE "C" NOT NULL,
    id              TEXT COLLATE "C" NOT NULL,
    type            TEXT        NOT NULL CHECK (type IN ('website', 'git')),
    url             TEXT        NOT NULL,
    ref             TEXT        NOT NULL DEFAULT '',
    include         TEXT        NOT NULL DEFAULT '',
    exclude         TEXT        NOT NULL DEFAULT '',
    max_pages       INTEGER     NOT NULL,
    sync_interval_s BIGINT      NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'syncing', 'ready', 'failed')),
    pages_found     INTEGER     NOT NULL DEFAULT 0,
    pages           INTEGER     NOT NULL DEFAULT 0,
    items           INTEGER     NOT NULL DEFAULT 0,
    last_synced_at  TIMESTAMPTZ NOT NULL DEFAULT 'epoch',
    next_sync_at    TIMESTAMPTZ NOT NULL,
    lease_until     TIMESTAMPTZ NOT NULL DEFAULT 'epoch',
    error           TEXT        NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

CREATE INDEX knowledge_sources_due ON knowledge_sources (next_sync_at);

-- What the last syncs read of each page of a source (store.SourcePage): the validators of its conditional
-- request, the hash of its text, the links it holds (followed when it is unchanged) and why it was skipped.
CREATE TABLE source_pages (
    merchant_id   TEXT COLLATE "C" NOT NULL,
    source_id     TEXT COLLATE "C" NOT NULL,
    url           TEXT COLLATE "C" NOT NULL,
    status        TEXT        NOT NULL CHECK (status IN ('read', 'skipped')),
    reason        TEXT        NOT NULL DEFAULT '',
    etag          TEXT        NOT NULL DEFAULT '',
    last_modified TEXT        NOT NULL DEFAULT '',
    content_hash  TEXT        NOT NULL DEFAULT '',
    links         TEXT        NOT NULL DEFAULT '',
    items         INTEGER     NOT NULL DEFAULT 0,
    fetched_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, source_id, url)
);

-- An item a source made names it; an item typed by hand has ''.
ALTER TABLE knowledge ADD COLUMN source_id TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX knowledge_by_source ON knowledge (merchant_id, source_id) WHERE source_id <> '';

-- +goose Down
DROP INDEX knowledge_by_source;
ALTER TABLE knowledge DROP COLUMN source_id;
DROP TABLE source_pages;
DROP TABLE knowledge_sources;
