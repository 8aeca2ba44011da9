-- When each table's rows deleted on the source were last followed (watermark mode): a pass
-- compares the table's key-range hashes with the producer's after its rows and deletes what the
-- source no longer has; a verify that finds the table equal, or repairs it, does the same.
-- checked_until is the table's watermark (maskbus.sync_state.synced_until) the check followed;
-- failure says why the last check failed (names only, never a value; NULL when it succeeded).
-- `maskbus status` says caught up only when every table's check is at its watermark.
CREATE TABLE maskbus.delete_checks (
    entity        text        PRIMARY KEY,
    checked_until text,
    failure       text,
    checked_at    timestamptz NOT NULL DEFAULT now()
);
