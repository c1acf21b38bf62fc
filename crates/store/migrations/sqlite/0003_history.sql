-- Stations ever seen in a published catalogue extract, with their latest details (as of
-- the first extract of their newest day).
CREATE TABLE history_stations (
    sid         INTEGER PRIMARY KEY AUTOINCREMENT,
    station_id  TEXT NOT NULL UNIQUE,   -- lowercase hex SHA-256 of the station key
    brand       INTEGER NOT NULL,
    details     TEXT NOT NULL,          -- JSON of the newest normalised station
    first_seen  INTEGER NOT NULL,       -- Perth date as YYYYMMDD
    last_seen   INTEGER NOT NULL
);

-- One price per station, product and Perth date, in tenths of a cent.
CREATE TABLE price_history (
    product INTEGER NOT NULL,
    day     INTEGER NOT NULL,           -- YYYYMMDD
    sid     INTEGER NOT NULL,
    price   INTEGER NOT NULL,
    PRIMARY KEY (product, day, sid)
) WITHOUT ROWID;

-- Covering (price included), so one station's history is a single range read.
CREATE INDEX price_history_station ON price_history (sid, product, day, price);

-- Each day's prices of a product as `sid:price` pairs, rewritten when the day's prices change:
-- statistics over a range read one row a day instead of every station's row.
CREATE TABLE price_days (
    product INTEGER NOT NULL,
    day     INTEGER NOT NULL,           -- YYYYMMDD
    pairs   TEXT NOT NULL,
    PRIMARY KEY (product, day)
);
