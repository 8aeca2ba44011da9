-- A key cursor over a masked key goes back to the producer only with the tag the producer
-- issued it with (issue 52: undoing any cursor it was sent made the producer an oracle of real
-- keys). Each tag is kept beside its cursor and written in the same transaction.
ALTER TABLE maskbus.sync_state ADD COLUMN after_tag text;
ALTER TABLE maskbus.sync_ranges ADD COLUMN after_tag text, ADD COLUMN through_tag text;

-- A cursor recorded before carries no tag, and over a masked key the producer refuses it, so
-- every one is forgotten. A pass under way reads its window again from the start: the same
-- `until` and `since`, so the same rows, each page upserted by key, so a row written before is
-- written again with the same values; none is lost and none doubled (only rows_synced counts
-- those rows twice). A pass read in ranges asks for its ranges again, in the same window. A
-- watermark that records a window synced (synced_until) holds no cursor and stays.
UPDATE maskbus.sync_state SET after_key = NULL WHERE after_key IS NOT NULL;
DELETE FROM maskbus.sync_ranges;
