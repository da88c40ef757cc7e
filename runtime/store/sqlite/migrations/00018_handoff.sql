-- +goose Up
-- Handing a conversation to a person (issue 44). A conversation's status says who answers it: the assistant
-- ('bot'), nobody yet because a person was asked for ('waiting'), the merchant's team ('agent'), or nobody any more
-- ('closed'). handoff_at is when a person was first asked for and agent_reply_at when the team first wrote, for
-- the analytics (0: never).
ALTER TABLE conversations ADD COLUMN status TEXT NOT NULL DEFAULT 'bot'
    CHECK (status IN ('bot', 'waiting', 'agent', 'closed'));
ALTER TABLE conversations ADD COLUMN handoff_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN agent_reply_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX conversations_by_status ON conversations (merchant_id, status, created_at DESC, id DESC);

-- Messages gain the role 'agent', a team member's, and its author's name. SQLite changes a CHECK constraint only
-- by rebuilding the table, as migration 8 did.
CREATE TABLE messages_rebuilt (
    seq             INTEGER PRIMARY KEY,
    merchant_id     TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    role            TEXT    NOT NULL CHECK (role IN ('visitor', 'assistant', 'agent')),
    text            TEXT    NOT NULL,
    -- normalized is the visitor question lower-cased, without punctuation, for grouping; '' for replies.
    normalized      TEXT    NOT NULL DEFAULT '',
    -- reply_to is the ID of the visitor message an assistant message answers; '' for visitor messages.
    reply_to        TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    sources         TEXT    NOT NULL DEFAULT '[]',
    answered        INTEGER NOT NULL DEFAULT 0 CHECK (answered IN (0, 1)),
    tokens          INTEGER NOT NULL DEFAULT 0,
    -- author is the name a team member's message is shown with; '' for the others.
    author          TEXT    NOT NULL DEFAULT '',
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

INSERT INTO messages_rebuilt (seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
SELECT seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens FROM messages;

DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);

-- The live streams' log: each merchant's events in the order they were written, numbered without gaps by
-- stream_heads, whose row every writer of the merchant's log updates first (see AppendStreamEvent).
CREATE TABLE stream_events (
    merchant_id     TEXT    NOT NULL,
    seq             INTEGER NOT NULL,
    conversation_id TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, seq)
);
CREATE INDEX stream_events_by_conversation ON stream_events (merchant_id, conversation_id, seq);

CREATE TABLE stream_heads (
    merchant_id TEXT    NOT NULL PRIMARY KEY,
    seq         INTEGER NOT NULL
);

-- When the merchant's team last had its inbox open: a person asked for is told whether someone is there.
CREATE TABLE team_presence (
    merchant_id TEXT    NOT NULL PRIMARY KEY,
    seen_at     INTEGER NOT NULL
);

-- +goose Down
DROP TABLE team_presence;
DROP TABLE stream_heads;
DROP TABLE stream_events;

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
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

INSERT INTO messages_rebuilt (seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens)
SELECT seq, merchant_id, conversation_id, id, role, text, normalized, reply_to, created_at, sources, answered, tokens
FROM messages WHERE role != 'agent';

DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_by_conversation ON messages (merchant_id, conversation_id, created_at, seq);

DROP INDEX conversations_by_status;
ALTER TABLE conversations DROP COLUMN agent_reply_at;
ALTER TABLE conversations DROP COLUMN handoff_at;
ALTER TABLE conversations DROP COLUMN status;
