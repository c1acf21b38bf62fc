-- Push events (GET /v1/events): one row per catalogue published for the first time or
-- republished with different prices, written in the transaction of the publish. Ids come from
-- the `events` change counter, bumped in that transaction, so they commit in increasing order
-- on every backend and a reader past id n never later sees n-1.
CREATE TABLE events (
    id          BIGINT PRIMARY KEY NOT NULL,
    kind        TEXT NOT NULL,      -- published | updated
    source_date TEXT NOT NULL,      -- YYYY-MM-DD
    product     INTEGER NOT NULL,
    data        TEXT NOT NULL,      -- the event's JSON, as streamed
    created_at  BIGINT NOT NULL     -- Unix milliseconds
);
CREATE INDEX events_by_catalogue ON events (source_date, product);
CREATE INDEX events_by_age ON events (created_at);
