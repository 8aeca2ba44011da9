-- The tables maskbus may write, repair, truncate, alter and drop in this target, and no other:
-- those it created from the served schema ('created'), and those its own config told it to take
-- ('adopted': the tables a first run found once the first-run guard passed, or the served ones
-- --init-target took). Only the consumer writes here, in the transaction that creates, adopts
-- or drops each table; no page, tool or served message can (schema maskbus is refused as a name
-- everywhere). See crates/consumer/src/owned.rs.
CREATE TABLE maskbus.owned_tables (
    entity text        PRIMARY KEY,
    how    text        NOT NULL CHECK (how IN ('created', 'adopted')),
    since  timestamptz NOT NULL DEFAULT now()
);

-- A target an earlier version synced: the tables its own bookkeeping tracked (the watermarks,
-- and the served schema it took in), with their partitions, are adopted as they are. Never a
-- table of maskbus's own schema or of PostgreSQL's, never one that is gone.
INSERT INTO maskbus.owned_tables (entity, how)
SELECT DISTINCT n.nspname || '.' || c.relname, 'adopted'
  FROM (SELECT entity FROM maskbus.sync_state
        UNION
        SELECT (t -> 'table' ->> 'schema') || '.' || (t -> 'table' ->> 'name')
          FROM maskbus.schema_state, jsonb_array_elements(served -> 'tables') AS t) AS tracked (entity)
 CROSS JOIN LATERAL (
        SELECT to_regclass(format('%I.%I', split_part(tracked.entity, '.', 1),
                                  substr(tracked.entity, strpos(tracked.entity, '.') + 1))) AS root
       ) AS r
  JOIN pg_class c ON c.oid = r.root OR c.oid IN (SELECT relid FROM pg_partition_tree(r.root))
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE strpos(tracked.entity, '.') > 0
   AND c.relkind IN ('r', 'p')
   AND n.nspname NOT IN ('maskbus', 'information_schema')
   AND n.nspname NOT LIKE 'pg\_%'
ON CONFLICT (entity) DO NOTHING;
