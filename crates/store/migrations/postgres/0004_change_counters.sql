-- One counter per kind of data that replicas keep decoded in memory (provider profiles): a
-- writer adds one in the same transaction as its change, so a reader compares one number
-- instead of re-reading every row.
CREATE TABLE change_counters (
    name  TEXT PRIMARY KEY NOT NULL,
    value BIGINT NOT NULL
);
