-- +goose Up
-- When each dashboard user last signed out: their sessions live in signed cookies, and those signed before are
-- refused, so that signing out ends a session even where a copy of its cookie was kept. One row a user.

CREATE TABLE dashboard_sign_outs (
    subject       TEXT PRIMARY KEY,
    signed_out_at INTEGER NOT NULL -- unix milliseconds
) WITHOUT ROWID;

-- +goose Down
DROP TABLE dashboard_sign_outs;
