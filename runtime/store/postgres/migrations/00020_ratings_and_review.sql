-- +goose Up
-- Visitors rate answers (thumbs up or down, with an optional reason) and whole conversations (1 to 5): one rating
-- of each per answer or conversation, the last one counting. Both belong to their conversation, deleted with it.
-- Merchants deal with the misses in a review queue, whose fixes are kept per question.

CREATE TABLE answer_ratings (
    merchant_id     TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    message_id      TEXT        NOT NULL,
    visitor_id      TEXT        NOT NULL,
    rating          TEXT        NOT NULL CHECK (rating IN ('up', 'down')),
    comment         TEXT        NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, conversation_id, message_id),
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

-- A subject's export and the weekly figures read a visitor's and a week's ratings.
CREATE INDEX answer_ratings_by_visitor ON answer_ratings (merchant_id, visitor_id);
CREATE INDEX answer_ratings_by_updated ON answer_ratings (merchant_id, updated_at);

CREATE TABLE conversation_ratings (
    merchant_id     TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    visitor_id      TEXT        NOT NULL,
    score           SMALLINT    NOT NULL CHECK (score BETWEEN 1 AND 5),
    comment         TEXT        NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, conversation_id),
    FOREIGN KEY (merchant_id, conversation_id) REFERENCES conversations (merchant_id, id) ON DELETE CASCADE
);

CREATE INDEX conversation_ratings_by_visitor ON conversation_ratings (merchant_id, visitor_id);
CREATE INDEX conversation_ratings_by_updated ON conversation_ratings (merchant_id, updated_at);

-- The review queue's fixes: a merchant dealt with a question (normalized, as the overview groups them) at fixed_at;
-- its misses until then leave the queue, a later one brings it back.
CREATE TABLE review_fixes (
    merchant_id  TEXT    NOT NULL,
    question     TEXT    NOT NULL,
    knowledge_id TEXT    NOT NULL DEFAULT '',
    fixed_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, question)
);

-- +goose Down
DROP TABLE review_fixes;
DROP TABLE conversation_ratings;
DROP TABLE answer_ratings;
