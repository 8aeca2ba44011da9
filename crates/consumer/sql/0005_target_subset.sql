-- Which of the producer's subsets this target holds (by name; NULL: the whole source). Set on
-- the first run; a later run asking for another subset is refused, since a delta of one subset
-- cannot turn the rows of another into it.
CREATE TABLE maskbus.target_subset (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    subset text,
    since timestamptz NOT NULL DEFAULT now()
);
