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

-- Each ISO week's and calendar month's figures: its days with prices, its distinct stations,
-- its extremes and the sums of its days' p10, median, mean and p90 (tenths of a cent), so
-- that weekly and monthly statistics read one row a period.
CREATE TABLE period_summaries (
    product    INTEGER NOT NULL,
    period     INTEGER NOT NULL,    -- 7: ISO week, 31: calendar month
    start      INTEGER NOT NULL,    -- YYYYMMDD of its first day
    days       INTEGER NOT NULL,    -- days with prices
    stations   INTEGER NOT NULL,    -- distinct stations priced
    min        INTEGER NOT NULL,
    max        INTEGER NOT NULL,
    p10_sum    INTEGER NOT NULL,    -- sums of its days' figures
    median_sum INTEGER NOT NULL,
    mean_sum   INTEGER NOT NULL,
    p90_sum    INTEGER NOT NULL,
    cheapest   TEXT NOT NULL,       -- every sid at its minimum
    PRIMARY KEY (product, period, start)
) WITHOUT ROWID;

-- The summaries of the days already stored are computed by the store when it opens (they
-- need percentiles), once: this counter says they are owed.
INSERT INTO change_counters (name, value) VALUES ('summaries_owed', 1)
ON CONFLICT (name) DO UPDATE SET value = 1;
