-- The consumer's watermark, kept in the target database beside the rows it describes and
-- updated in the same transaction as each page it inserts, so a crash never leaves the two apart.
--
-- Per entity: every source row written by a transaction older than synced_until has been synced.
-- While a pass is under way, pass_until is the horizon of that pass and after_key the last key
-- inserted from it.
CREATE TABLE maskbus.sync_state (
    entity       text        PRIMARY KEY,
    synced_until bigint      NOT NULL DEFAULT 0,
    pass_until   bigint,
    after_key    bigint,
    rows_synced  bigint      NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
