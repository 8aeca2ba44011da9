-- An entity's first pass read in key ranges side by side (the consumer's `streams`): where each
-- range stands. A range's row is updated in the transaction of each page it writes, as
-- sync_state's after_key is for a pass read in one range, so a crash never leaves a range and
-- its rows apart. Once every range of the entity is done, sync_state records the window as
-- synced and the ranges are deleted, in one transaction. A pass cut short resumes each range
-- not done from its after_key, in the same window (until); a watermark forgotten (a rule or a
-- schema changed) takes its ranges with it.
CREATE TABLE maskbus.sync_ranges (
    entity      text    NOT NULL REFERENCES maskbus.sync_state (entity) ON DELETE CASCADE,
    range_no    integer NOT NULL,
    until       text    NOT NULL,
    after_key   text[],
    through     text[],
    done        boolean NOT NULL DEFAULT false,
    rows_synced bigint  NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entity, range_no)
);
