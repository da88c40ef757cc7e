-- +goose Up
-- Times are timestamptz with millisecond precision (the store truncates them). Identifiers sort byte-wise
-- (COLLATE "C"), as listings and cursors expect; texts keep the database's collation, whose ctype folds case for
-- the Query filters.

CREATE TABLE conversations (
    merchant_id   TEXT COLLATE "C" NOT NULL,
    id            TEXT COLLATE "C" NOT NULL,
    visitor_id    TEXT        NOT NULL DEFAULT '',
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    message_count INTEGER     NOT NULL DEFAULT 0,
    first_message TEXT        NOT NULL DEFAULT '',
    unanswered    INTEGER     NOT NULL DEFAULT 0,
    has_lead      BOOLEAN     NOT NULL DEFAULT FALSE,
    PRIMARY KEY (merchant_id, id)
);

CREATE INDEX conversations_by_created ON conversations (merchant_id, created_at DESC, id DESC);
CREATE INDEX conversations_by_lead ON conversations (merchant_id, has_lead, created_at DESC, id DESC);

CREATE TABLE messages (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    merchant_id     TEXT COLLATE "C" NOT NULL,
    conversation_id TEXT COLLATE "C" NOT NULL,
    id              TEXT COLLATE "C" NOT NULL,
    role            TEXT        NOT NULL CHECK (role IN ('visitor', 'assistant')),
    text            TEXT        NOT NULL,
    -- normalized is the visitor question lower-cased, without punctuation, for grouping; '' for replies.
    normalized      TEXT COLLATE "C" NOT NULL DEFAULT '',
    -- reply_to is the ID of the visitor message an assistant message answers; '' for visitor messages.
    reply_to        TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    sources         JSONB       NOT NULL DEFAULT '[]',
    answered        BOOLEAN     NOT NULL DEFAULT FALSE,
    UNIQUE (merchant_id, conversation_id, id),
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

-- monthly_conversations is the ceiling's counter: one row per merchant and UTC month, incremented by a
-- conditional upsert in the transaction that creates the conversation.
CREATE TABLE monthly_conversations (
    merchant_id TEXT COLLATE "C" NOT NULL,
    month       TEXT COLLATE "C" NOT NULL, -- YYYY-MM, UTC
    count       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, month)
);

CREATE TABLE knowledge (
    merchant_id TEXT COLLATE "C" NOT NULL,
    id          TEXT COLLATE "C" NOT NULL,
    title       TEXT        NOT NULL,
    content     TEXT        NOT NULL,
    url         TEXT        NOT NULL DEFAULT '',
    tags        TEXT[]      NOT NULL DEFAULT '{}',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    use_count   INTEGER     NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, id)
);

CREATE INDEX knowledge_by_created ON knowledge (merchant_id, created_at DESC, id DESC);

-- knowledge_state is one row per merchant that ever had knowledge: the revision replicas compare to tell when
-- their index is stale, and the item count the ceiling is checked against. Every knowledge write updates it
-- first, so writes of one merchant's knowledge are serialised on this row.
CREATE TABLE knowledge_state (
    merchant_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    revision    BIGINT  NOT NULL,
    items       INTEGER NOT NULL CHECK (items >= 0)
);

-- +goose Down
DROP TABLE knowledge_state;
DROP TABLE knowledge;
DROP TABLE monthly_conversations;
DROP TABLE messages;
DROP TABLE conversations;
