-- Stations ever seen in a published catalogue extract, with their latest details.
CREATE TABLE history_stations (
    sid         INTEGER PRIMARY KEY AUTOINCREMENT,
    station_id  TEXT NOT NULL UNIQUE,   -- lowercase hex SHA-256 of the station key
    brand       INTEGER NOT NULL,
    details     TEXT NOT NULL,          -- JSON of the newest normalised station
    fingerprint TEXT NOT NULL,          -- SHA-256 of details (skip unchanged rewrites)
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

CREATE INDEX price_history_station ON price_history (sid, product, day);
