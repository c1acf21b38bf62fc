-- Long ranges read summaries instead of every stored day (docs/design.md says why).
--
-- A station's history: one row per station, product and month holding that month's prices as
-- `day:price` pairs (day of the month, tenths of a cent), days ascending, so decades of one
-- station are one short range read. It replaces the row per station, product and day; every
-- stored price moves over.
CREATE TABLE station_months (
    sid     INTEGER NOT NULL,
    product INTEGER NOT NULL,
    month   INTEGER NOT NULL,           -- YYYYMM
    prices  TEXT NOT NULL,
    PRIMARY KEY (sid, product, month)
) WITHOUT ROWID;

INSERT INTO station_months (sid, product, month, prices)
SELECT sid, product, day / 100, group_concat((day % 100) || ':' || price, ',' ORDER BY day)
FROM price_history
GROUP BY sid, product, day / 100;

DROP TABLE price_history;

-- The figures of each (product, day) of `price_days`, written with it: statistics over any
-- window read one small row a day. Prices in tenths of a cent; `cheapest` is every sid at the
-- day's minimum, comma-separated.
CREATE TABLE day_summaries (
    product  INTEGER NOT NULL,
    day      INTEGER NOT NULL,          -- YYYYMMDD
    stations INTEGER NOT NULL,
    min      INTEGER NOT NULL,
    p10      INTEGER NOT NULL,
    median   INTEGER NOT NULL,
    mean     INTEGER NOT NULL,
    p90      INTEGER NOT NULL,
    max      INTEGER NOT NULL,
    cheapest TEXT NOT NULL,
    PRIMARY KEY (product, day)
) WITHOUT ROWID;

-- Distinct stations priced in each ISO week (period 7) and calendar month (period 31).
CREATE TABLE period_stations (
    product  INTEGER NOT NULL,
    period   INTEGER NOT NULL,
    start    INTEGER NOT NULL,          -- YYYYMMDD of the period's first day
    stations INTEGER NOT NULL,
    PRIMARY KEY (product, period, start)
) WITHOUT ROWID;

-- The summaries of the days already stored are computed by the store when it opens (they
-- need percentiles), once: this counter says they are owed.
INSERT INTO change_counters (name, value) VALUES ('summaries_owed', 1)
ON CONFLICT (name) DO UPDATE SET value = 1;
