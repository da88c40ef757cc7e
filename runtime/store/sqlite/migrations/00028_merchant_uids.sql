-- +goose Up
-- The UID of the Merchant whose data each merchant ID holds: a Merchant deleted and created again under the same
-- name gets the same merchant ID but a new UID, and its predecessor's data is erased before it is served
-- (chat.Identities). Data written before this table existed has no row; the first Merchant served adopts it.

CREATE TABLE merchant_uids (
    merchant_id TEXT PRIMARY KEY,
    uid         TEXT NOT NULL,
    since       INTEGER NOT NULL -- unix milliseconds: when this UID took the merchant ID
) WITHOUT ROWID;

-- +goose Down
DROP TABLE merchant_uids;
