-- +goose Up
-- Self-service API keys, created in the dashboard; only their SHA-256 is kept.

CREATE TABLE api_keys (
    merchant_id  TEXT        NOT NULL,
    id           TEXT        NOT NULL,
    type         TEXT        NOT NULL CHECK (type IN ('publishable', 'secret')),
    sha256       TEXT        NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ,
    PRIMARY KEY (merchant_id, id)
);

-- +goose Down
DROP TABLE api_keys;
