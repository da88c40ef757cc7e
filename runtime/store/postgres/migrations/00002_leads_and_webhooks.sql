-- +goose Up
-- Leads, and the webhook outbox: events, their deliveries to endpoints, the attempts, disabled endpoints.

CREATE TABLE leads (
    merchant_id     TEXT        NOT NULL,
    id              TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL DEFAULT '', -- '' for a lead sent outside a conversation
    visitor_id      TEXT        NOT NULL DEFAULT '',
    name            TEXT        NOT NULL DEFAULT '',
    email           TEXT        NOT NULL DEFAULT '',
    phone           TEXT        NOT NULL DEFAULT '',
    message         TEXT        NOT NULL DEFAULT '',
    consent         BOOLEAN     NOT NULL DEFAULT FALSE,
    source          TEXT        NOT NULL CHECK (source IN ('chat', 'form')),
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

-- One lead per visitor and conversation.
CREATE UNIQUE INDEX leads_by_conversation ON leads (merchant_id, conversation_id, visitor_id) WHERE conversation_id <> '';
CREATE INDEX leads_by_created ON leads (merchant_id, created_at DESC, id DESC);

CREATE TABLE events (
    merchant_id TEXT        NOT NULL,
    id          TEXT        NOT NULL,
    type        TEXT        NOT NULL,
    payload     TEXT        NOT NULL, -- the exact bytes that are signed
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

CREATE TABLE deliveries (
    seq              BIGINT      GENERATED ALWAYS AS IDENTITY,
    merchant_id      TEXT        NOT NULL,
    id               TEXT        NOT NULL,
    event_id         TEXT        NOT NULL,
    webhook_id       TEXT        NOT NULL,
    url              TEXT        NOT NULL,
    status           TEXT        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
    attempts         INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL,
    -- lease_until is when the replica that claimed the delivery gives it up if it has not recorded an attempt.
    lease_until      TIMESTAMPTZ NOT NULL DEFAULT 'epoch',
    last_status_code INTEGER     NOT NULL DEFAULT 0,
    last_error       TEXT        NOT NULL DEFAULT '',
    last_latency_ms  BIGINT      NOT NULL DEFAULT 0,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, event_id) REFERENCES events (merchant_id, id)
);

CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) WHERE status = 'pending';
CREATE INDEX deliveries_by_created ON deliveries (merchant_id, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
    merchant_id TEXT        NOT NULL,
    delivery_id TEXT        NOT NULL,
    attempt     INTEGER     NOT NULL,
    at          TIMESTAMPTZ NOT NULL,
    url         TEXT        NOT NULL,
    status_code INTEGER     NOT NULL,
    latency_ms  BIGINT      NOT NULL,
    error       TEXT        NOT NULL DEFAULT '',
    PRIMARY KEY (merchant_id, delivery_id, attempt)
);

-- Endpoints that answered 410 Gone: their deliveries are cancelled until a replay enables them again.
CREATE TABLE disabled_endpoints (
    merchant_id TEXT        NOT NULL,
    webhook_id  TEXT        NOT NULL,
    url         TEXT        NOT NULL,
    disabled_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, webhook_id, url)
);

-- +goose Down
DROP TABLE disabled_endpoints;
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE leads;
