-- The tables the last pass could not sync, each with the reason (names only: the consumer's
-- own sentence and the producer's closed error, never a value): what `status` and `/health`
-- say fails, until a pass syncs the table again. Only the consumer writes here, at the end of
-- each pass, for the tables that pass covered.
CREATE TABLE maskbus.table_failures (
    entity text        PRIMARY KEY,
    reason text        NOT NULL,
    since  timestamptz NOT NULL DEFAULT now()
);
