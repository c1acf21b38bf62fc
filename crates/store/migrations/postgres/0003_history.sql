-- Stations ever seen in a published catalogue extract, with their latest details (as of
-- the first extract of their newest day).
CREATE TABLE history_stations (
    sid         BIGSERIAL PRIMARY KEY,
    station_id  TEXT NOT NULL UNIQUE,   -- lowercase hex SHA-256 of the station key
    brand       BIGINT NOT NULL,
    details     TEXT NOT NULL,          -- JSON of the newest normalised station
    first_seen  BIGINT NOT NULL,        -- Perth date as YYYYMMDD
    last_seen   BIGINT NOT NULL
);

-- One price per station, product and Perth date, in tenths of a cent.
CREATE TABLE price_history (
    product BIGINT NOT NULL,
    day     BIGINT NOT NULL,            -- YYYYMMDD
    sid     BIGINT NOT NULL,
    price   BIGINT NOT NULL,
    PRIMARY KEY (product, day, sid)
);

-- Covering (price included), so one station's history is a single range read.
CREATE INDEX price_history_station ON price_history (sid, product, day, price);

-- Each day's prices of a product as `sid:price` pairs, rewritten when the day's prices change:
-- statistics over a range read one row a day instead of every station's row.
CREATE TABLE price_days (
    product BIGINT NOT NULL,
    day     BIGINT NOT NULL,           -- YYYYMMDD
    pairs   TEXT NOT NULL,
    PRIMARY KEY (product, day)
);
