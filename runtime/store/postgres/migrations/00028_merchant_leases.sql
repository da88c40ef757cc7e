-- +goose Up
-- A lease is named within its merchant: a merchant's (its knowledge's embedding, "embed") are its rows, erased with
-- the rest of its data; the runtime's own (the retention sweep's) have merchant_id ''. Before this, a merchant's
-- lease was named 'embed/<merchant>' and outlived the merchant.
ALTER TABLE leases ADD COLUMN merchant_id text NOT NULL DEFAULT '';
UPDATE leases SET merchant_id = substr(name, 7), name = 'embed' WHERE name LIKE 'embed/%';
ALTER TABLE leases ALTER COLUMN merchant_id DROP DEFAULT;
ALTER TABLE leases DROP CONSTRAINT leases_pkey, ADD PRIMARY KEY (merchant_id, name);

-- +goose Down
ALTER TABLE leases DROP CONSTRAINT leases_pkey;
UPDATE leases SET name = name || '/' || merchant_id WHERE merchant_id != '';
ALTER TABLE leases DROP COLUMN merchant_id;
ALTER TABLE leases ADD PRIMARY KEY (name);
