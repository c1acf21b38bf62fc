-- Stations to enrich, keyed by station key; the seed is what a match is judged on.
CREATE TABLE station_seeds (
    station_key  TEXT PRIMARY KEY NOT NULL,
    name         TEXT NOT NULL,
    brand        INTEGER NOT NULL,
    street       TEXT NOT NULL,
    suburb       TEXT NOT NULL,
    latitude     REAL NOT NULL,
    longitude    REAL NOT NULL,
    next_attempt INTEGER NOT NULL,   -- Unix ms: not before (backoff, no-match wait)
    failures     INTEGER NOT NULL
);

-- What the provider said about a matched station (JSON), and when to refresh it.
CREATE TABLE place_profiles (
    station_key TEXT PRIMARY KEY NOT NULL,
    place_id    TEXT NOT NULL,
    fetched_at  INTEGER NOT NULL,
    refresh_at  INTEGER NOT NULL,
    profile     TEXT NOT NULL
);

-- Provider requests used per Perth day, reserved before each call.
CREATE TABLE provider_budget (
    day  TEXT PRIMARY KEY NOT NULL,
    used INTEGER NOT NULL
);
