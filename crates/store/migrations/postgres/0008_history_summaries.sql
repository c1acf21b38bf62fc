-- Long ranges read summaries instead of every stored day (docs/design.md says why).
--
-- A station's history: one row per station, product and month holding that month's prices as
-- `day:price` pairs (day of the month, tenths of a cent), days ascending, so decades of one
-- station are one short range read. It replaces the row per station, product and day; every
-- stored price moves over.
CREATE TABLE station_months (
    sid     BIGINT NOT NULL,
    product BIGINT NOT NULL,
    month   BIGINT NOT NULL,            -- YYYYMM
    prices  TEXT NOT NULL,
    PRIMARY KEY (sid, product, month)
);

INSERT INTO station_months (sid, product, month, prices)
SELECT sid, product, day / 100, string_agg((day % 100)::text || ':' || price::text, ',' ORDER BY day)
FROM price_history
GROUP BY sid, product, day / 100;

DROP TABLE price_history;

-- The figures of each (product, day) of `price_days`, written with it: statistics over any
-- window read one small row a day. Prices in tenths of a cent; `cheapest` is every sid at the
-- day's minimum, comma-separated.
CREATE TABLE day_summaries (
    product  BIGINT NOT NULL,
    day      BIGINT NOT NULL,           -- YYYYMMDD
    stations BIGINT NOT NULL,
    min      BIGINT NOT NULL,
    p10      BIGINT NOT NULL,
    median   BIGINT NOT NULL,
    mean     BIGINT NOT NULL,
    p90      BIGINT NOT NULL,
    max      BIGINT NOT NULL,
    cheapest TEXT NOT NULL,
    PRIMARY KEY (product, day)
);

-- Each ISO week's and calendar month's figures: its days with prices, its distinct stations,
-- its extremes and the sums of its days' p10, median, mean and p90 (tenths of a cent), so
-- that weekly and monthly statistics read one row a period.
CREATE TABLE period_summaries (
    product    BIGINT NOT NULL,
    period     BIGINT NOT NULL,     -- 7: ISO week, 31: calendar month
    start      BIGINT NOT NULL,     -- YYYYMMDD of its first day
    days       BIGINT NOT NULL,     -- days with prices
    stations   BIGINT NOT NULL,     -- distinct stations priced
    min        BIGINT NOT NULL,
    max        BIGINT NOT NULL,
    p10_sum    BIGINT NOT NULL,     -- sums of its days' figures
    median_sum BIGINT NOT NULL,
    mean_sum   BIGINT NOT NULL,
    p90_sum    BIGINT NOT NULL,
    cheapest   TEXT NOT NULL,       -- every sid at its minimum
    PRIMARY KEY (product, period, start)
);

-- The summaries of the days already stored are computed by the store when it opens (they
-- need percentiles), once: this counter says they are owed.
INSERT INTO change_counters (name, value) VALUES ('summaries_owed', 1)
ON CONFLICT (name) DO UPDATE SET value = 1;
