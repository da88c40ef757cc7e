-- +goose Up
-- Handing a conversation to a person (issue 44). A conversation's status says who answers it: the assistant
-- ('bot'), nobody yet because a person was asked for ('waiting'), the merchant's team ('agent'), or nobody any more
-- ('closed'). handoff_at is when a person was first asked for and agent_reply_at when the team first wrote, for
-- the analytics (NULL: never). Adding columns with constant defaults rewrites no row.
ALTER TABLE conversations ADD COLUMN status TEXT NOT NULL DEFAULT 'bot'
    CONSTRAINT conversations_status CHECK (status IN ('bot', 'waiting', 'agent', 'closed'));
ALTER TABLE conversations ADD COLUMN handoff_at TIMESTAMPTZ;
ALTER TABLE conversations ADD COLUMN agent_reply_at TIMESTAMPTZ;
CREATE INDEX conversations_by_status ON conversations (merchant_id, status, created_at DESC, id DESC);

-- Messages gain the role 'agent', a team member's, and its author's name ('' for the others).
ALTER TABLE messages DROP CONSTRAINT messages_role_check;
ALTER TABLE messages ADD CONSTRAINT messages_role_check CHECK (role IN ('visitor', 'assistant', 'agent')) NOT VALID;
ALTER TABLE messages ADD COLUMN author TEXT NOT NULL DEFAULT '';

-- The live streams' log: each merchant's events in the order they were committed, numbered without gaps by
-- stream_heads, whose row every writer of the merchant's log updates first and holds locked until it commits (see
-- AppendStreamEvent): a reader that saw number n never sees a number below n committed later.
CREATE TABLE stream_events (
    merchant_id     TEXT COLLATE "C" NOT NULL,
    seq             BIGINT      NOT NULL,
    conversation_id TEXT COLLATE "C" NOT NULL,
    type            TEXT        NOT NULL,
    payload         TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, seq)
);
CREATE INDEX stream_events_by_conversation ON stream_events (merchant_id, conversation_id, seq);

CREATE TABLE stream_heads (
    merchant_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    seq         BIGINT NOT NULL
);

-- When the merchant's team last had its inbox open: a person asked for is told whether someone is there.
CREATE TABLE team_presence (
    merchant_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    seen_at     TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE team_presence;
DROP TABLE stream_heads;
DROP TABLE stream_events;
DELETE FROM messages WHERE role = 'agent';
ALTER TABLE messages DROP COLUMN author;
ALTER TABLE messages DROP CONSTRAINT messages_role_check;
ALTER TABLE messages ADD CONSTRAINT messages_role_check CHECK (role IN ('visitor', 'assistant'));
DROP INDEX conversations_by_status;
ALTER TABLE conversations DROP COLUMN agent_reply_at;
ALTER TABLE conversations DROP COLUMN handoff_at;
ALTER TABLE conversations DROP COLUMN status;
