-- +goose Up
-- Times are unix milliseconds (UTC); tags and sources are JSON arrays.

CREATE TABLE conversations (
    merchant_id   TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    visitor_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    first_message TEXT    NOT NULL DEFAULT '',
    unanswered    INTEGER NOT NULL DEFAULT 0,
    has_lead      INTEGER NOT NULL DEFAULT 0 CHECK (has_lead IN (0, 1)),
    PRIMARY KEY (merchant_id, id)
);

CREATE INDEX conversations_by_created ON conversations (merchant_id, created_at DESC, id DESC);
CREATE INDEX conversations_by_lead ON conversations (merchant_id, has_lead, created_at DESC, id DESC);

CREATE TABLE messages (
    seq             INTEGER PRIMARY KEY,
    merchant_id     TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    role            TEXT    NOT NULL CHECK (role IN ('visitor', 'assistant')),
    text            TEXT    NOT NULL,
    -- normalized is the visitor question lower-cased, without punctuation, for grouping; '' for replies.
    normalized      TEXT    NOT NULL DEFAULT '',
    -- reply_to is the ID of the visitor message an assistant message answers; '' for visitor messages.
    reply_to        TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    sources         TEXT    NOT NULL DEFAULT '[]',
    answered        INTEGER NOT NULL DEFAULT 0 CHECK (answered IN (0, 1)),
    UNIQUE (merchant_id, conversation_id, id),
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

CREATE TABLE monthly_conversations (
    merchant_id TEXT    NOT NULL,
    month       TEXT    NOT NULL, -- YYYY-MM, UTC
    count       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, month)
);

CREATE TABLE knowledge (
    merchant_id TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    url         TEXT    NOT NULL DEFAULT '',
    tags        TEXT    NOT NULL DEFAULT '[]',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    use_count   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, id)
);

CREATE INDEX knowledge_by_created ON knowledge (merchant_id, created_at DESC, id DESC);

CREATE TABLE knowledge_revisions (
    merchant_id TEXT    NOT NULL PRIMARY KEY,
    revision    INTEGER NOT NULL
);

-- +goose Down
DROP TABLE knowledge_revisions;
DROP TABLE knowledge;
DROP TABLE monthly_conversations;
DROP TABLE messages;
DROP TABLE conversations;
