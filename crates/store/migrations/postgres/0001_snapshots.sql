-- Validated snapshots, one row per key, with the fill lease on the same row.
CREATE TABLE snapshots (
    key         TEXT PRIMARY KEY NOT NULL,
    source_date TEXT,
    fetched_at  BIGINT,           -- Unix milliseconds
    expires_at  BIGINT,           -- Unix milliseconds
    payload     BYTEA,            -- gzip(JSON quotes); NULL while only a lease exists
    checksum    TEXT,             -- SHA-256 hex of payload
    lease_owner TEXT,
    lease_until BIGINT            -- Unix milliseconds
);

-- Leases of background jobs (one warm per hour, one enrichment at a time).
CREATE TABLE job_leases (
    name        TEXT PRIMARY KEY NOT NULL,
    owner       TEXT NOT NULL,
    lease_until BIGINT NOT NULL
);
