-- +goose Up
-- The dashboard's sign-ins redeemed and not yet expired, by their state's SHA-256: a sign-in's callback is taken
-- once, so that a copy of its address and cookie cannot sign in again. One row a sign-in, for ten minutes.

CREATE TABLE dashboard_sign_ins (
    state_sha256 TEXT PRIMARY KEY,
    expires_at   INTEGER NOT NULL -- unix milliseconds
) WITHOUT ROWID;

CREATE INDEX dashboard_sign_ins_by_expiry ON dashboard_sign_ins (expires_at);

-- +goose Down
DROP TABLE dashboard_sign_ins;
