-- The schema the target follows: the served schema it last took in (its fingerprint, the
-- schema itself, and the tables the producer left out of it with the reasons), so that a
-- migration on the source is applied as the difference between two served schemas, and a
-- target's own differences (made by hand) are named, never undone. And per table the
-- fingerprint of the rules its rows were masked by: a table whose rules changed loses its
-- watermark in the transaction that records the new fingerprint, so the next pass writes it
-- again (a crash in between leaves it to be written again).
CREATE TABLE maskbus.schema_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    fingerprint text NOT NULL,
    served jsonb NOT NULL,
    left_out jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE maskbus.table_rules (
    entity text PRIMARY KEY,
    fingerprint text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
