-- FuelWatch's monthly archives (wafuel import-history): the region an archive row names for
-- its station, stations only the archive knows (no coordinates), and the months imported.
ALTER TABLE history_stations ADD COLUMN region BIGINT;         -- region code, when known
ALTER TABLE history_stations ADD COLUMN archive BIGINT NOT NULL DEFAULT 0;  -- 1: archive only

CREATE TABLE history_imports (
    month       TEXT PRIMARY KEY NOT NULL,  -- YYYY-MM
    rows        BIGINT NOT NULL,            -- prices read from the month's file
    imported_at BIGINT NOT NULL             -- Unix milliseconds
);
