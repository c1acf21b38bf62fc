-- FuelWatch lists its monthly files with a `fileDate` and a size in `bytes`; both change while
-- the current month grows. Recorded per imported month, so a changed file is imported again.
ALTER TABLE history_imports ADD COLUMN file_date TEXT;
ALTER TABLE history_imports ADD COLUMN bytes BIGINT;
