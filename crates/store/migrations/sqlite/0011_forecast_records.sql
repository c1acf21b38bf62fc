-- The forecast's live record: each forecast the service answered for its own day, recorded at
-- its first answer (one row per subject and asOf, never replaced), and the published price of
-- each of its days once known (written once per day, never changed).
CREATE TABLE forecast_records (
    subject     TEXT NOT NULL,            -- <product>[:s<stationId>][:r<regions>][:b<brands>]
    as_of       INTEGER NOT NULL,          -- YYYYMMDD
    product     INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,          -- Unix milliseconds
    forecast    TEXT NOT NULL,            -- JSON: today's price, the days and the advice
    outcomes    TEXT NOT NULL DEFAULT '{}', -- JSON: {"YYYY-MM-DD": price} of the days scored
    PRIMARY KEY (subject, as_of)
);
