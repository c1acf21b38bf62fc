-- Terminal gate (wholesale) prices: one row per product, terminal centre and Perth date, with
-- every terminal's price that day as `name TAB price` lines (hundredths of a cent, as FuelWatch
-- publishes them, GST included), so a year of a centre is 365 short rows. Written by the live
-- job and by `wafuel import-wholesale`.
CREATE TABLE wholesale_days (
    product   INTEGER NOT NULL,
    centre    TEXT NOT NULL,            -- perth, albany, broome, esperance, geraldton, port-hedland
    day       INTEGER NOT NULL,          -- YYYYMMDD
    terminals TEXT NOT NULL,
    PRIMARY KEY (product, centre, day)
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
