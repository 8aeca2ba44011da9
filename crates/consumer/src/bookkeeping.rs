//! The one place that holds the consumer's SQL over its own bookkeeping in the target, schema
//! `maskbus`: the migrations that make its tables (the text in `crates/consumer/sql`), and every
//! statement that reads or writes them, as [`maskbus_pg::statements`] is for the SQL over user
//! tables. The callers own the transactions and the error context; nothing here runs anything.
//!
//! The tables, each made by a migration below:
//! - `sync_state`: each entity's watermark, written with each page it covers;
//! - `sync_ranges`: where each key range of a pass read side by side stands;
//! - `pending_links`: foreign keys closing a cycle, staged until the cycle's rows are all in;
//! - `lifted`: the indexes and foreign keys a bulk load took off, until they are rebuilt;
//! - `stream_state`: the position in the change stream (one row, in stream mode);
//! - `target_subset`: which of the producer's subsets the target holds (one row);
//! - `schema_state`: the served schema the target last took in (one row);
//! - `table_rules`: per entity, the fingerprint of the rules its rows were masked by;
//! - `owned_tables`: the tables maskbus created or adopted, the only ones it writes
//!   ([`crate::owned`]).
//!
//! Besides those, three advisory locks named in the same schema's name space
//! ([`LOCK_SCHEMA`], [`LOCK_LIFT`], [`LOCK_RECONCILE`]) keep workers, and a verify beside a
//! follower, out of each other's way.
//!
//! Every value is a bind parameter; the numbered parameters each statement takes are said in its
//! doc line.

use maskbus_pg::Migration;

/// The consumer's own bookkeeping in the target database, applied in order when the target is
/// opened ([`crate::TargetDb::open`]).
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        component: "sync",
        name: "0001_sync_state.sql",
        sql: include_str!("../sql/0001_sync_state.sql"),
    },
    Migration {
        component: "sync",
        name: "0002_any_key.sql",
        sql: include_str!("../sql/0002_any_key.sql"),
    },
    Migration {
        component: "sync",
        name: "0003_bulk_load.sql",
        sql: include_str!("../sql/0003_bulk_load.sql"),
    },
    Migration {
        component: "sync",
        name: "0004_stream_state.sql",
        sql: include_str!("../sql/0004_stream_state.sql"),
    },
    Migration {
        component: "sync",
        name: "0005_target_subset.sql",
        sql: include_str!("../sql/0005_target_subset.sql"),
    },
    Migration {
        component: "sync",
        name: "0006_schema_state.sql",
        sql: include_str!("../sql/0006_schema_state.sql"),
    },
    Migration {
        component: "sync",
        name: "0007_ranges.sql",
        sql: include_str!("../sql/0007_ranges.sql"),
    },
    Migration {
        component: "sync",
        name: "0008_owned_tables.sql",
        sql: include_str!("../sql/0008_owned_tables.sql"),
    },
    Migration {
        component: "sync",
        name: "0009_cursor_tags.sql",
        sql: include_str!("../sql/0009_cursor_tags.sql"),
    },
    Migration {
        component: "sync",
        name: "0010_table_failures.sql",
        sql: include_str!("../sql/0010_table_failures.sql"),
    },
    Migration {
        component: "sync",
        name: "0011_delete_checks.sql",
        sql: include_str!("../sql/0011_delete_checks.sql"),
    },
];

// The target and the locks.

/// Whether the database is a maskbus target: `maskbus.sync_state` exists (the marker the first
/// run leaves, read before the migrations by the consumer and by `maskbus status`).
pub const IS_TARGET: &str = "SELECT to_regclass('maskbus.sync_state') IS NOT NULL";

/// Waits, until the end of the transaction, for any other worker making the served schema in
/// the same target: one at a time, and the later ones find it made.
pub const LOCK_SCHEMA: &str = "SELECT pg_advisory_xact_lock(hashtext('maskbus.schema'))";

/// Waits, until the end of the transaction, for any other worker lifting indexes and foreign
/// keys for a bulk load: each drops keys that lock two tables, and two at once deadlock.
pub const LOCK_LIFT: &str = "SELECT pg_advisory_xact_lock(hashtext('maskbus.lift'))";

// maskbus.sync_state: the watermarks.

/// Reads every entity's watermark from `maskbus.sync_state`: entity, synced_until, pass_until,
/// after_key, rows_synced, after_tag (the producer's tag on after_key).
pub const WATERMARKS: &str =
    "SELECT entity, synced_until, pass_until, after_key, rows_synced, after_tag FROM maskbus.sync_state";

/// Writes entity `$1`'s watermark into `maskbus.sync_state` (synced_until `$2`, pass_until `$3`,
/// after_key `$4`, rows_synced `$5`, after_tag `$6`), in the transaction of the page it covers.
pub const RECORD_WATERMARK: &str =
    "INSERT INTO maskbus.sync_state (entity, synced_until, pass_until, after_key, rows_synced, after_tag, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, now())
     ON CONFLICT (entity) DO UPDATE
        SET synced_until = EXCLUDED.synced_until, pass_until = EXCLUDED.pass_until,
            after_key = EXCLUDED.after_key, rows_synced = EXCLUDED.rows_synced,
            after_tag = EXCLUDED.after_tag, updated_at = now()";

/// Opens entity `$1`'s pass read in ranges in `maskbus.sync_state`: pass_until `$2`, no key
/// cursor (the ranges hold theirs); what it had synced before stays.
pub const BEGIN_RANGED_PASS: &str =
    "INSERT INTO maskbus.sync_state (entity, pass_until, after_key, after_tag, rows_synced, updated_at)
     VALUES ($1, $2, NULL, NULL, 0, now())
     ON CONFLICT (entity) DO UPDATE
        SET pass_until = EXCLUDED.pass_until, after_key = NULL, after_tag = NULL, updated_at = now()";

/// Closes entity `$1`'s pass read in ranges in `maskbus.sync_state` once every range is done:
/// synced_until `$2`, pass_until `$3`, after_key `$4`, rows_synced `$5`, after_tag `$6`.
pub const FINISH_RANGED_PASS: &str = "UPDATE maskbus.sync_state
    SET synced_until = $2, pass_until = $3, after_key = $4, rows_synced = $5, after_tag = $6,
        updated_at = now()
  WHERE entity = $1";

/// Forgets entity `$1`'s watermark in `maskbus.sync_state` (and, by cascade, its ranges): a
/// table whose schema or rules changed is written again by the next pass.
pub const FORGET_WATERMARK: &str = "DELETE FROM maskbus.sync_state WHERE entity = $1";

/// Forgets the watermarks of the entities in `$1` (a text array) in `maskbus.sync_state`: tables
/// to be copied again (failing closed in the stream, or emptied after a bulk load).
pub const FORGET_WATERMARKS: &str = "DELETE FROM maskbus.sync_state WHERE entity = ANY($1)";

/// How far entity `$1`'s first pass is, from `maskbus.sync_state` and `maskbus.sync_ranges`:
/// whether it is synced, and the seconds since its watermark or any of its ranges last moved
/// (for a worker waiting on a parent table another worker loads). A table read in ranges moves
/// its ranges, not its watermark, until it is in.
pub const PASS_PROGRESS: &str =
    "SELECT s.synced_until IS NOT NULL,
            extract(epoch FROM now() - greatest(s.updated_at,
                (SELECT max(r.updated_at) FROM maskbus.sync_ranges r WHERE r.entity = s.entity)))::float8
       FROM maskbus.sync_state s WHERE s.entity = $1";

/// Whether anything was ever synced into the target, from `maskbus.sync_state` and
/// `maskbus.stream_state`: until then, its subset may still change.
pub const ANYTHING_SYNCED: &str =
    "SELECT EXISTS (SELECT 1 FROM maskbus.sync_state WHERE synced_until IS NOT NULL OR pass_until IS NOT NULL)
         OR EXISTS (SELECT 1 FROM maskbus.stream_state)";

/// Every watermark as `maskbus status` shows it, from `maskbus.sync_state`: entity,
/// synced_until, whether a pass is under way, when it last moved (UTC, ISO 8601).
pub const WATERMARKS_FOR_STATUS: &str = "SELECT entity, synced_until, pass_until IS NOT NULL,
            to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
       FROM maskbus.sync_state ORDER BY entity";

// maskbus.sync_ranges: a pass read in key ranges side by side.

/// Reads entity `$1`'s ranges from `maskbus.sync_ranges`, in key order: range_no, until,
/// after_key, through, done, rows_synced, after_tag, through_tag (the producer's tags on the two
/// cursors).
pub const RANGES: &str =
    "SELECT range_no, until, after_key, through, done, rows_synced, after_tag, through_tag
   FROM maskbus.sync_ranges WHERE entity = $1 ORDER BY range_no";

/// Records one range of a pass in `maskbus.sync_ranges`: entity `$1`, range_no `$2`, until
/// `$3`, after_key `$4`, through `$5`, done `$6`, rows_synced `$7`, after_tag `$8`,
/// through_tag `$9`.
pub const RECORD_RANGE: &str =
    "INSERT INTO maskbus.sync_ranges (entity, range_no, until, after_key, through, done, rows_synced, after_tag, through_tag)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Moves range `$2` of entity `$1` (of the pass closing at `$6`) in `maskbus.sync_ranges`:
/// after_key `$3` (with its tag `$7`), done `$4`, rows_synced `$5`, in the transaction of the
/// page it covers. It changes no row when the range was forgotten meanwhile.
pub const ADVANCE_RANGE: &str =
    "UPDATE maskbus.sync_ranges SET after_key = $3, after_tag = $7, done = $4, rows_synced = $5,
            updated_at = now()
      WHERE entity = $1 AND range_no = $2 AND until = $6";

/// Forgets entity `$1`'s ranges in `maskbus.sync_ranges` (before new ones are recorded, or once
/// its watermark records the window as synced).
pub const FORGET_RANGES: &str = "DELETE FROM maskbus.sync_ranges WHERE entity = $1";

// maskbus.pending_links: foreign keys that close a cycle, set when the pass is through.

/// Stages links in `maskbus.pending_links`: for entity `$1`, the columns `$2` (text array) of
/// the rows keyed by `$3` set later to `$4` (both JSON arrays of text arrays, in the same order),
/// in the transaction of the page that wrote those rows with the columns NULL.
pub const STAGE_LINKS: &str = "INSERT INTO maskbus.pending_links (entity, key, columns, vals)
     SELECT $1,
            ARRAY(SELECT e.v FROM jsonb_array_elements_text(k.value) WITH ORDINALITY e(v, i) ORDER BY e.i),
            $2,
            ARRAY(SELECT e.v FROM jsonb_array_elements_text(v.value) WITH ORDINALITY e(v, i) ORDER BY e.i)
       FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY k(value, n)
       JOIN jsonb_array_elements($4::jsonb) WITH ORDINALITY v(value, n) USING (n)
     ON CONFLICT (entity, key) DO UPDATE SET columns = EXCLUDED.columns, vals = EXCLUDED.vals";

/// The links staged in `maskbus.pending_links` for entity `$1` and the columns `$2`: key, vals
/// (the rows [`maskbus_pg::statements::set_later`] sets).
pub const STAGED_LINKS: &str =
    "SELECT key, vals FROM maskbus.pending_links WHERE entity = $1 AND columns = $2::text[]";

/// Forgets entity `$1`'s staged links in `maskbus.pending_links`, once they are set.
pub const CLEAR_LINKS: &str = "DELETE FROM maskbus.pending_links WHERE entity = $1";

// maskbus.lifted: what a bulk load took off, until it is rebuilt.

/// Reads every lifted object from `maskbus.lifted`, indexes first: entity, table_schema,
/// table_name, kind, name, definition, and for a foreign key fk_columns, parent_schema,
/// parent_table, parent_columns, fk_nullable, fk_deferrable.
pub const LIFTED: &str = "SELECT entity, table_schema, table_name, kind, name, definition,
            fk_columns, parent_schema, parent_table, parent_columns, fk_nullable, fk_deferrable
       FROM maskbus.lifted
      ORDER BY kind = 'foreign key', entity, name";

/// Records an object a bulk load lifts in `maskbus.lifted` (the columns of [`LIFTED`], `$1` to
/// `$12` in that order), in the transaction that drops it.
pub const RECORD_LIFTED: &str =
    "INSERT INTO maskbus.lifted (entity, table_schema, table_name, kind, name, definition,
         fk_columns, parent_schema, parent_table, parent_columns, fk_nullable, fk_deferrable)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";

/// Claims lifted object `$3` of kind `$2` of entity `$1` by deleting its record from
/// `maskbus.lifted`, in the transaction that rebuilds it: a second rebuilder changes no row and
/// leaves the object alone.
pub const CLAIM_LIFTED: &str =
    "DELETE FROM maskbus.lifted WHERE entity = $1 AND kind = $2 AND name = $3";

// maskbus.stream_state: the position in the change stream.

/// Reads the stream position from `maskbus.stream_state`: started_lsn, applied_lsn,
/// join_snapshot, transactions_applied, rows_applied.
pub const STREAM_STATE: &str =
    "SELECT started_lsn, applied_lsn, join_snapshot, transactions_applied, rows_applied
       FROM maskbus.stream_state";

/// Records in `maskbus.stream_state` a stream (re)started at LSN `$1`, its copy still to be
/// made.
pub const STREAM_STARTED: &str =
    "INSERT INTO maskbus.stream_state (started_lsn, applied_lsn) VALUES ($1, $1)
     ON CONFLICT (only_row) DO UPDATE
        SET started_lsn = $1, applied_lsn = $1, join_snapshot = NULL, updated_at = now()";

/// Records in `maskbus.stream_state` the snapshot `$1` the stream's copy reached.
pub const STREAM_JOINED: &str =
    "UPDATE maskbus.stream_state SET join_snapshot = $1, updated_at = now()";

/// Forgets the stream in `maskbus.stream_state` (it was lost; the next round starts it again).
pub const FORGET_STREAM: &str = "DELETE FROM maskbus.stream_state";

/// Moves the applied position in `maskbus.stream_state` forward to LSN `$1` (never back), past
/// transactions that brought nothing to apply.
pub const STREAM_REACHED: &str =
    "UPDATE maskbus.stream_state SET applied_lsn = $1, updated_at = now()
      WHERE applied_lsn::pg_lsn < $1::text::pg_lsn";

/// Records in `maskbus.stream_state` the position `$1` reached by `$2` source transactions of
/// `$3` rows, in the target transaction that applied them.
pub const STREAM_APPLIED: &str = "UPDATE maskbus.stream_state
    SET applied_lsn = $1, transactions_applied = transactions_applied + $2,
        rows_applied = rows_applied + $3, updated_at = now()";

/// The stream position as `maskbus status` shows it, from `maskbus.stream_state`: applied_lsn,
/// join_snapshot, transactions_applied, rows_applied, when it last moved (UTC, ISO 8601).
pub const STREAM_FOR_STATUS: &str =
    "SELECT applied_lsn, join_snapshot, transactions_applied, rows_applied,
            to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
       FROM maskbus.stream_state";

// maskbus.target_subset: which subset the target holds.

/// Reads the subset the target holds from `maskbus.target_subset` (no row: none recorded yet).
pub const HELD_SUBSET: &str = "SELECT subset FROM maskbus.target_subset";

/// Records subset `$1` (NULL: the whole source) in `maskbus.target_subset`; `since` moves only
/// when the subset changes.
pub const RECORD_SUBSET: &str = "INSERT INTO maskbus.target_subset (subset) VALUES ($1)
     ON CONFLICT (only_row) DO UPDATE SET subset = EXCLUDED.subset,
         since = CASE WHEN target_subset.subset IS NOT DISTINCT FROM EXCLUDED.subset
                      THEN target_subset.since ELSE now() END";

/// [`HELD_SUBSET`] for `maskbus status`, which never migrates: no row on a target made before
/// `maskbus.target_subset` existed.
pub const HELD_SUBSET_FOR_STATUS: &str = "SELECT subset FROM maskbus.target_subset WHERE to_regclass('maskbus.target_subset') IS NOT NULL";

// maskbus.schema_state and maskbus.table_rules: the schema and the rules the target follows.

/// Reads the served schema the target last took in from `maskbus.schema_state`: fingerprint,
/// served and left_out (both JSON as text).
pub const SCHEMA_BASELINE: &str =
    "SELECT fingerprint, served::text, left_out::text FROM maskbus.schema_state";

/// Records in `maskbus.schema_state` the served schema the target has taken in: fingerprint
/// `$1`, served `$2` and left_out `$3` (both JSON as text).
pub const RECORD_SCHEMA_BASELINE: &str =
    "INSERT INTO maskbus.schema_state (fingerprint, served, left_out)
     VALUES ($1, $2::text::jsonb, $3::text::jsonb)
     ON CONFLICT (only_row) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, served = EXCLUDED.served,
            left_out = EXCLUDED.left_out, updated_at = now()";

/// The tables that fail closed, from `maskbus.schema_state`'s left_out: key (the table), value
/// (the reason). No rows on a target made before `maskbus.schema_state` existed.
pub const CLOSED_TABLES: &str =
    "SELECT key, value FROM maskbus.schema_state, jsonb_each_text(left_out)
      WHERE to_regclass('maskbus.schema_state') IS NOT NULL ORDER BY key";

// maskbus.table_failures: the tables the last pass could not sync, and why.

/// Forgets in `maskbus.table_failures` the tables of `$1` (a text array) that are not in `$2`
/// (the ones failing now): a pass over them synced them.
pub const FORGET_FAILURES: &str = "DELETE FROM maskbus.table_failures
      WHERE entity = ANY($1::text[]) AND NOT entity = ANY($2::text[])";

/// Records in `maskbus.table_failures` that table `$1` failed with reason `$2` (kept since the
/// first pass it failed in).
pub const RECORD_FAILURE: &str = "INSERT INTO maskbus.table_failures (entity, reason)
     VALUES ($1, $2) ON CONFLICT (entity) DO UPDATE SET reason = EXCLUDED.reason";

/// The tables failing now, from `maskbus.table_failures`: entity, reason. No rows on a target
/// made before the table existed.
pub const TABLE_FAILURES: &str = "SELECT entity, reason FROM maskbus.table_failures
      WHERE to_regclass('maskbus.table_failures') IS NOT NULL ORDER BY entity";

/// Reads every entity's rules fingerprint from `maskbus.table_rules`: entity, fingerprint.
pub const RULES_FINGERPRINTS: &str = "SELECT entity, fingerprint FROM maskbus.table_rules";

/// Records in `maskbus.table_rules` the fingerprint `$2` of the rules entity `$1`'s rows are
/// masked by.
pub const RECORD_RULES_FINGERPRINT: &str =
    "INSERT INTO maskbus.table_rules (entity, fingerprint) VALUES ($1, $2)
     ON CONFLICT (entity) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, updated_at = now()";

// maskbus.owned_tables: the tables maskbus created or adopted, the only ones it writes.

/// Every table maskbus owns in the target, from `maskbus.owned_tables`: entity.
pub const OWNED_TABLES: &str = "SELECT entity FROM maskbus.owned_tables";

/// Records in `maskbus.owned_tables` the tables in `$1` (a text array of `schema.table`) as
/// created by maskbus, in the transaction that creates them (after its `CREATE TABLE`s, none of
/// which existed before): only those that exist now, so a table whose statement was left out
/// is not recorded, and one made later under its name is not maskbus's.
pub const RECORD_CREATED: &str = "INSERT INTO maskbus.owned_tables (entity, how)
     SELECT e, 'created' FROM unnest($1::text[]) AS e
      WHERE to_regclass(format('%I.%I', split_part(e, '.', 1),
                               substr(e, strpos(e, '.') + 1))) IS NOT NULL
     ON CONFLICT (entity) DO UPDATE SET how = 'created', since = now()";

/// The reconcile lock (a session lock, held by a connection of its own for the whole
/// comparison and its changes): one process converges a target's schema at a time.
pub const LOCK_RECONCILE: &str = "SELECT pg_advisory_lock(hashtext('maskbus.reconcile'))";

/// The indexes and foreign keys a bulk load has lifted and not rebuilt yet: schema, table,
/// name.
pub const LIFTED_NAMES: &str = "SELECT table_schema, table_name, name FROM maskbus.lifted";

/// The tables maskbus created in its target (not those it adopted): `schema.table`.
pub const CREATED_TABLES: &str = "SELECT entity FROM maskbus.owned_tables WHERE how = 'created'";

/// Adopts in `maskbus.owned_tables` the tables of schemas `$1` and names `$2` (text arrays, in
/// the same order) that the target has, with their partitions; never one of maskbus's own
/// schema or of PostgreSQL's. Returns the entities adopted now (not owned before).
pub const ADOPT: &str = "INSERT INTO maskbus.owned_tables (entity, how)
     SELECT DISTINCT n.nspname || '.' || c.relname, 'adopted'
       FROM unnest($1::text[], $2::text[]) AS e (s, t)
      CROSS JOIN LATERAL (SELECT to_regclass(format('%I.%I', e.s, e.t)) AS root) AS r
       JOIN pg_class c ON c.oid = r.root OR c.oid IN (SELECT relid FROM pg_partition_tree(r.root))
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p')
        AND n.nspname NOT IN ('maskbus', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_%'
     ON CONFLICT (entity) DO NOTHING
     RETURNING entity";

/// Adopts in `maskbus.owned_tables` every table the target holds (on its first run, once the
/// first-run guard passed): the schema it was made with. Never one of maskbus's own schema or
/// of PostgreSQL's. Returns the entities adopted now.
pub const ADOPT_ALL: &str = "INSERT INTO maskbus.owned_tables (entity, how)
     SELECT n.nspname || '.' || c.relname, 'adopted'
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p')
        AND n.nspname NOT IN ('maskbus', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_%'
     ON CONFLICT (entity) DO NOTHING
     RETURNING entity";

/// Forgets in `maskbus.owned_tables` the tables in `$1` (a text array: dropped by maskbus, in
/// the transaction that drops them) and every owned table that is gone (a partition dropped
/// with its parent): a table made later under the same name is not maskbus's.
pub const FORGET_OWNED: &str = "DELETE FROM maskbus.owned_tables
      WHERE entity = ANY($1::text[])
         OR to_regclass(format('%I.%I', split_part(entity, '.', 1),
                               substr(entity, strpos(entity, '.') + 1))) IS NULL";

// maskbus.delete_checks: when each table's deletes were last followed.

/// Records in `maskbus.delete_checks` that the rows deleted on the source were followed for the
/// tables in `$1` (a text array) up to each one's watermark in `maskbus.sync_state` (a table
/// without one is not recorded).
pub const RECORD_DELETE_CHECKS: &str =
    "INSERT INTO maskbus.delete_checks (entity, checked_until, failure, checked_at)
     SELECT entity, synced_until, NULL, now() FROM maskbus.sync_state
      WHERE entity = ANY($1::text[]) AND synced_until IS NOT NULL
     ON CONFLICT (entity) DO UPDATE
        SET checked_until = EXCLUDED.checked_until, failure = NULL, checked_at = now()";

/// Records in `maskbus.delete_checks` that following the deletes of table `$1` failed with
/// reason `$2` (names only): its check stays where it last succeeded.
pub const RECORD_DELETE_CHECK_FAILURE: &str =
    "INSERT INTO maskbus.delete_checks (entity, checked_until, failure, checked_at)
     VALUES ($1, NULL, $2, now())
     ON CONFLICT (entity) DO UPDATE SET failure = EXCLUDED.failure, checked_at = now()";

/// Every table's last delete check as `maskbus status` shows it, from `maskbus.delete_checks`:
/// entity, checked_until, failure, when it finished (UTC, ISO 8601). Fails with undefined_table
/// on a target made before the table existed.
pub const DELETE_CHECKS_FOR_STATUS: &str = "SELECT entity, checked_until, failure,
            to_char(checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
       FROM maskbus.delete_checks ORDER BY entity";

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    /// Every table of schema `maskbus` this module names is one a migration makes (or one of
    /// the three advisory locks).
    #[test]
    fn every_table_named_is_made_by_a_migration() {
        let made: Vec<String> = MIGRATIONS
            .iter()
            .flat_map(|m| m.sql.split("CREATE TABLE maskbus.").skip(1))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_string)
            .collect();
        assert!(made.contains(&"sync_state".to_string()), "{made:?}");
        let source = include_str!("bookkeeping.rs");
        let named: Vec<&str> = source
            .split("maskbus.")
            .skip(1)
            .filter_map(|rest| {
                let end = rest
                    .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                    .unwrap_or(rest.len());
                Some(&rest[..end]).filter(|name| !name.is_empty())
            })
            .collect();
        assert!(named.len() > 20, "{named:?}");
        for name in named {
            assert!(
                made.iter().any(|m| m == name) || ["schema", "lift", "reconcile"].contains(&name),
                "maskbus.{name} is made by no migration"
            );
        }
    }
}
