-- Where the consumer stands in the producer's change stream (one row, when in stream mode).
-- applied_lsn: every source transaction that ends at or before it is in the target; it moves in
--   the same transaction as the changes it covers, so a crash loses and doubles nothing.
-- join_snapshot: the source snapshot the first copy reached; transactions it holds are in the
--   copy already and are passed over. NULL while that copy is still to be made.
CREATE TABLE maskbus.stream_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    started_lsn text NOT NULL,
    applied_lsn text NOT NULL,
    join_snapshot text,
    transactions_applied bigint NOT NULL DEFAULT 0,
    rows_applied bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
