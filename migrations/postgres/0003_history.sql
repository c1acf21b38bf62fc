-- Stations ever seen in a published catalogue extract, with their latest details.
CREATE TABLE history_stations (
    sid         BIGSERIAL PRIMARY KEY,
    station_id  TEXT NOT NULL UNIQUE,   -- lowercase hex SHA-256 of the station key
    brand       BIGINT NOT NULL,
    details     TEXT NOT NULL,          -- JSON of the newest normalised station
    fingerprint TEXT NOT NULL,          -- SHA-256 of details (skip unchanged rewrites)
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

CREATE INDEX price_history_station ON price_history (sid, product, day);
