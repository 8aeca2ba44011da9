-- Any key, any schema: watermarks are kept per schema-qualified table (public.customers), the
-- key cursor is the last row's key as text values in key-column order, and foreign keys that
-- close a cycle are staged here until the cycle's rows are all in (see crates/model/src/plan.rs).
ALTER TABLE maskbus.sync_state
    ALTER COLUMN after_key TYPE text[]
    USING CASE WHEN after_key IS NULL THEN NULL ELSE ARRAY[after_key::text] END;
UPDATE maskbus.sync_state SET entity = 'public.' || entity WHERE position('.' IN entity) = 0;

-- A row written with the columns of its cycle-closing foreign keys NULL, and the values to set
-- once every row of the cycle is in. Written in the same transaction as the row's page.
CREATE TABLE maskbus.pending_links (
    entity  text   NOT NULL,
    key     text[] NOT NULL,
    columns text[] NOT NULL,
    vals    text[] NOT NULL,
    PRIMARY KEY (entity, key)
);
