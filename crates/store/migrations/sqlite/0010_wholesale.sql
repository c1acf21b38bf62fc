-- Terminal gate (wholesale) prices: one per product, terminal centre, Perth date and terminal,
-- in hundredths of a cent as FuelWatch publishes them (GST included). Written by the live
-- job and by `wafuel import-wholesale`.
CREATE TABLE wholesale_prices (
    product  INTEGER NOT NULL,
    centre   TEXT NOT NULL,             -- perth, albany, broome, esperance, geraldton, port-hedland
    day      INTEGER NOT NULL,          -- YYYYMMDD
    terminal TEXT NOT NULL,
    price    INTEGER NOT NULL,
    PRIMARY KEY (product, centre, day, terminal)
) WITHOUT ROWID;

-- The yearly files imported, with the list's `fileDate` and `bytes` at their import: a closed
-- year whose pair is unchanged is not fetched again.
CREATE TABLE wholesale_imports (
    file        TEXT PRIMARY KEY NOT NULL,  -- FuelWatchWholesale-YYYY.csv
    rows        INTEGER NOT NULL,
    file_date   TEXT,
    bytes       INTEGER,
    imported_at INTEGER NOT NULL            -- Unix milliseconds
);
