-- The first pass into empty tables loads them as pg_restore does: their secondary indexes and
-- foreign keys are taken off and rebuilt when the pass is through (see crates/pg/src/bulk.rs).
-- What was taken off is written here in the same transaction that takes it off, and each row is
-- deleted in the transaction that puts its object back: a load cut short by a crash is finished,
-- and its objects rebuilt, by the next run; nothing is forgotten.
CREATE TABLE maskbus.lifted (
    entity     text        NOT NULL,
    table_schema text      NOT NULL,
    table_name text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('index', 'foreign key')),
    name       text        NOT NULL,
    definition text        NOT NULL,
    -- For a foreign key, what it links (while it is lifted the catalog no longer says, and the
    -- fill order and the skipping of children of failed parents need it).
    fk_columns     text[],
    parent_schema  text,
    parent_table   text,
    parent_columns text[],
    fk_nullable    boolean,
    fk_deferrable  boolean,
    lifted_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entity, kind, name)
);
