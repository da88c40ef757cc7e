-- +goose Up
-- Messages lose their unique index on (merchant_id, conversation_id, id). Only the runtime makes message IDs (the
-- time and 48 random bits, runtime/ids), so the index checked nothing that can happen, while every exchange
-- inserted two entries into it: a continued conversation's at a page of its own, one more page in each commit.
-- The reads that found a message by its ID (an unanswered question by its answer's reply_to) find it among its
-- conversation's messages through messages_by_conversation.
--
-- SQLite drops the index of a UNIQUE constraint only with its table, so the table is rebuilt as SQLite's ALTER
-- TABLE documentation lays out: the rows are copied with their seq, nothing references messages, and the new
-- table takes the name of the old one. It runs once, at the first start after the upgrade: 3.7 s for 1,000,000
-- messages on the benchmark machine.

CREATE TABLE messages_rebuilt (
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
    tokens          INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

INSERT INTO messages_rebuilt (seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
SELECT seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens FROM messages;

DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);

-- +goose Down
CREATE TABLE messages_rebuilt (
    seq             INTEGER PRIMARY KEY,
    merchant_id     TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    role            TEXT    NOT NULL CHECK (role IN ('visitor', 'assistant')),
    text            TEXT    NOT NULL,
    normalized      TEXT    NOT NULL DEFAULT '',
    reply_to        TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    sources         TEXT    NOT NULL DEFAULT '[]',
    answered        INTEGER NOT NULL DEFAULT 0 CHECK (answered IN (0, 1)),
    tokens          INTEGER NOT NULL DEFAULT 0,
    UNIQUE (merchant_id, conversation_id, id),
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

INSERT INTO messages_rebuilt (seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
SELECT seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens FROM messages;

DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);
