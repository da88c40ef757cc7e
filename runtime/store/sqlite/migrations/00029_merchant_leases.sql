-- +goose Up
-- A lease is named within its merchant: a merchant's (its knowledge's embedding, "embed") are its rows, erased with
-- the rest of its data; the runtime's own (the retention sweep's) have merchant_id ''. Before this, a merchant's
-- lease was named "embed/<merchant>" and outlived the merchant.
CREATE TABLE merchant_leases (
    merchant_id TEXT NOT NULL,
    name        TEXT NOT NULL,
    holder      TEXT NOT NULL,
    until       INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, name)
) WITHOUT ROWID;
INSERT INTO merchant_leases (merchant_id, name, holder, until)
    SELECT CASE WHEN name LIKE 'embed/%' THEN substr(name, 7) ELSE '' END,
           CASE WHEN name LIKE 'embed/%' THEN 'embed' ELSE name END, holder, until
    FROM leases;
DROP TABLE leases;
ALTER TABLE merchant_leases RENAME TO leases;

-- +goose Down
CREATE TABLE named_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  INTEGER NOT NULL
);
INSERT INTO named_leases (name, holder, until)
    SELECT CASE WHEN merchant_id = '' THEN name ELSE name || '/' || merchant_id END, holder, until FROM leases;
DROP TABLE leases;
ALTER TABLE named_leases RENAME TO leases;
