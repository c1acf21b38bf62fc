-- What a long job has done, kept where every replica reads it (the history backfill's
-- progress for /v1/status): one JSON text per job name, replaced whole.
CREATE TABLE job_state (
    name       TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
