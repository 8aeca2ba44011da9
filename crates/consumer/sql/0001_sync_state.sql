-- The consumer's watermark, kept in the target database beside the rows it describes and
-- updated in the same transaction as each page it inserts, so a crash never leaves the two apart.
--
-- Per entity: every source row written by a transaction committed in snapshot synced_until has
-- been synced (NULL: nothing yet). While a pass is under way, pass_until is the snapshot that
-- closes that pass and after_key the last key inserted from it. Snapshots are stored as
-- pg_current_snapshot() prints them on the source.
CREATE TABLE maskbus.sync_state (
    entity       text        PRIMARY KEY,
    synced_until text,
    pass_until   text,
    after_key    bigint,
    rows_synced  bigint      NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
