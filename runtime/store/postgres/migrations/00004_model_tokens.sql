-- +goose Up
-- Model tokens: what each answer took, and each merchant's total of the UTC month for the plan's token ceiling.

ALTER TABLE messages ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0;

CREATE TABLE monthly_tokens (
    merchant_id TEXT COLLATE "C" NOT NULL,
    month       TEXT COLLATE "C" NOT NULL, -- YYYY-MM, UTC
    tokens      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, month)
);

-- +goose Down
DROP TABLE monthly_tokens;
ALTER TABLE messages DROP COLUMN tokens;
