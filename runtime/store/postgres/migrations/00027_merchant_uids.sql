-- +goose Up
-- The UID of the Merchant whose data each merchant ID holds: a Merchant deleted and created again under the same
-- name gets the same merchant ID but a new UID, and its predecessor's data is erased before it is served
-- (chat.Identities). Data written before this table existed has no row; the first Merchant served adopts it.

CREATE TABLE merchant_uids (
    merchant_id text PRIMARY KEY,
    uid         text NOT NULL,
    since       timestamptz NOT NULL -- when this UID took the merchant ID
);

-- +goose Down
DROP TABLE merchant_uids;
