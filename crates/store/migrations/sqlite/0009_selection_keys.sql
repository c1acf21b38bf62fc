-- Source-filtered snapshots were keyed `filtered:<text>` with suburbs joined by `|`, so two
-- different selections could share a row (a suburb containing `|`) and one could be served
-- the other's quotes. They are keyed `selection:<sha256 of the typed selection>` now; the old
-- rows are dropped (they are refilled from the source on the next request).
DELETE FROM snapshots WHERE key LIKE 'filtered:%';
