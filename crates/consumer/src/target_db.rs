//! The target database as the consumer holds it: opened only when it is a maskbus target (or
//! empty, or adopted by `--init-target`), with the consumer's bookkeeping in schema `maskbus`
//! (`maskbus.sync_state`, `maskbus.pending_links`, `maskbus.lifted`, `maskbus.stream_state`, ...)
//! migrated on open; and what the consumer reads of it: its catalog as entity plans, the
//! watermarks, another worker's progress, the rows a lifted foreign key leaves without a parent.
//! The writes are [`crate::writer::PageWriter`]'s, [`crate::load::BulkLoad`]'s and
//! [`crate::changes::ChangeApplier`]'s. The SQL over the bookkeeping, and its migrations, are in
//! [`crate::bookkeeping`].

use super::bookkeeping;
use super::load::ParentProgress;
use super::pages::{self, EntityPlan, RangeState, Skipped, SyncState};
use super::rebuild::Rebuilder;
use super::ConsumerError;
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{Database, ForeignKey, PgError, PgPool, TableInfo, TableRef};
use std::collections::{BTreeMap, BTreeSet};

/// The served schema a target last took in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Baseline {
    pub fingerprint: String,
    pub served: maskbus_model::schema::Schema,
    /// Tables that fail closed, with the reason (left out by the producer, or refused here).
    pub left_out: BTreeMap<String, String>,
}

/// An opened target database.
pub struct TargetDb {
    target: Database,
    pool: PgPool,
    /// This process made schema `maskbus` (the target had none when it was opened): a first
    /// run whose served schema then fails to be made takes it away again
    /// ([`TargetDb::create_schema`]), so nothing half-made is left behind.
    made_bookkeeping: bool,
    /// Rows of pages committed by this process, whatever pass they were of: what a pass cut
    /// short by a signal wrote is counted too ([`TargetDb::rows_written`]).
    written: std::sync::atomic::AtomicU64,
}

/// Whether the target has no schema `maskbus` yet.
const NO_BOOKKEEPING: &str = "SELECT to_regnamespace('maskbus') IS NULL";

/// Takes away the bookkeeping a first run made, when nothing was synced with it: the schema
/// `maskbus` did not exist before this process made it, and no table holds a watermark.
const UNDO_BOOKKEEPING: &str = "DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM maskbus.sync_state
                       WHERE synced_until IS NOT NULL OR pass_until IS NOT NULL) THEN
           DROP SCHEMA maskbus CASCADE;
       END IF;
     END $$";

/// Whether the database is this consumer's target: `maskbus.sync_state` exists (the marker the
/// first run leaves) and belongs to this role (or one it is a member of). A marker another role
/// made does not make a database maskbus', nor skip the first-run guard.
const IS_OWN_TARGET: &str = "SELECT EXISTS (
       SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'maskbus' AND c.relname = 'sync_state'
          AND pg_has_role(c.relowner, 'MEMBER'))";

/// Every table, partition and materialized view of the database that holds a row or may,
/// whoever owns it and whether or not this role may read it (outside the catalogs and maskbus'
/// own bookkeeping, which must belong to this role): those with pages on disk. The size is read
/// from the relation itself (`pg_relation_size`, which needs no privilege on it), not from
/// statistics that lag (`reltuples` is -1 until a table is analysed, `n_live_tup` waits for a
/// flush of the statistics): a row inserted a moment ago has its page already. Each with its SQL
/// name, its name, and whether this role may look into it to be sure its pages hold live rows
/// (SELECT on a plain table that no row-level security hides rows of).
const RELATIONS_WITH_ROWS: &str =
    "SELECT format('%I.%I', n.nspname, c.relname), format('%s.%s', n.nspname, c.relname),
            c.relkind = 'r' AND has_table_privilege(c.oid, 'SELECT') AND NOT c.relrowsecurity
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'm')
        AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_%'
        AND NOT (n.nspname = 'maskbus' AND pg_has_role(c.relowner, 'MEMBER'))
        AND pg_relation_size(c.oid) > 0
      ORDER BY 2";

/// The first relation (outside maskbus' own bookkeeping) that holds a row, if any: one this
/// role may read is looked into (its pages may be those of deleted rows); any other holds rows
/// as far as the catalog can tell, since this role cannot see them.
async fn first_table_with_rows(
    target: &Database,
    client: &tokio_postgres::Client,
) -> Result<Option<String>, PgError> {
    let tables = client
        .query(RELATIONS_WITH_ROWS, &[])
        .await
        .map_err(|e| target.query_error("listing the target's tables", &e))?;
    for row in &tables {
        let (sql_name, name, readable): (String, String, bool) =
            (row.get(0), row.get(1), row.get(2));
        if !readable {
            return Ok(Some(name));
        }
        let has_rows: bool = client
            .query_one(
                &format!("SELECT EXISTS (SELECT 1 FROM ONLY {sql_name})"),
                &[],
            )
            .await
            .map_err(|e| target.query_error(format!("looking into {name}"), &e))?
            .get(0);
        if has_rows {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// The target's login and current roles, each with whether it is (or may become) a superuser,
/// and the roles it is a member of that reach the server's files and programs.
const ROLE_POWERS: &str = "SELECT u.name,
            EXISTS (SELECT 1 FROM pg_roles s
                     WHERE s.rolsuper AND pg_has_role(u.name, s.oid, 'MEMBER')),
            ARRAY(SELECT p.rolname::text FROM pg_roles p
                   WHERE p.rolname IN ('pg_execute_server_program', 'pg_write_server_files',
                                       'pg_read_server_files')
                     AND pg_has_role(u.name, p.oid, 'MEMBER')
                   ORDER BY 1)
       FROM (VALUES (current_user::text), (session_user::text)) AS u(name)";

/// Refuses a target role that could turn the served schema (untrusted input) into commands on
/// the server: a superuser, a member of one (`SET ROLE`), or a member of the roles that write
/// and read the server's files or run its programs. `allow` (`allow_superuser_target`) takes
/// it all the same, for a throwaway database.
async fn refuse_superuser(
    target: &Database,
    client: &tokio_postgres::Client,
    allow: bool,
) -> Result<(), ConsumerError> {
    let rows = client
        .query(ROLE_POWERS, &[])
        .await
        .map_err(|e| target.query_error("reading the target role's attributes", &e))?;
    for row in &rows {
        let (role, superuser, reach): (String, bool, Vec<String>) =
            (row.get(0), row.get(1), row.get(2));
        let power = if superuser {
            "is a superuser (or may become one)".to_string()
        } else if !reach.is_empty() {
            format!(
                "may reach the server's files or programs (member of {})",
                reach.join(", ")
            )
        } else {
            continue;
        };
        if allow {
            tracing::warn!(%role, %power, "allow_superuser_target = true: the consumer runs on its target with powers beyond the database; only for a throwaway database");
            return Ok(());
        }
        return Err(ConsumerError::SuperuserTarget {
            database: target.dbname().to_string(),
            role,
            power,
        });
    }
    Ok(())
}

impl TargetDb {
    /// Opens the target. On the first run (no `maskbus.sync_state` yet) the database must hold no
    /// rows in any table, or `adopt` must say that this database really is the test database:
    /// maskbus never writes into a database that is not its target (production, by a typo).
    /// `connections`: the writer's pool (one per range written side by side, and the rebuilds).
    ///
    /// A target role that is a superuser (or reaches the server's files or programs) is refused
    /// first, before anything is read or written, unless `allow_superuser` says this is a
    /// throwaway database: the consumer builds its target from what the bus says, and the bus is
    /// untrusted input.
    pub async fn open(
        mut target: Database,
        adopt: bool,
        disable_triggers: bool,
        allow_superuser: bool,
        connections: usize,
    ) -> Result<Self, ConsumerError> {
        if disable_triggers {
            // Every connection of the writer, pooled or not, writes as a replica would.
            let options = format!(
                "{} -c session_replication_role=replica",
                target.config.get_options().unwrap_or("")
            );
            target.config.options(options.trim());
        }
        let first_run = {
            let client = target.connect().await?;
            refuse_superuser(&target, &client, allow_superuser).await?;
            let marked: bool = client
                .query_one(IS_OWN_TARGET, &[])
                .await
                .map_err(|e| target.query_error("looking for the maskbus target marker", &e))?
                .get(0);
            if !marked && !adopt {
                if let Some(table) = first_table_with_rows(&target, &client).await? {
                    return Err(ConsumerError::NotATarget {
                        database: target.dbname().to_string(),
                        table,
                    });
                }
            }
            // Taken over an empty database (the guard passed), not one `adopt` forced.
            let fresh: bool = client
                .query_one(NO_BOOKKEEPING, &[])
                .await
                .map_err(|e| target.query_error("looking for schema maskbus", &e))?
                .get(0);
            (!marked && !adopt, fresh)
        };
        let (first_run, made_bookkeeping) = first_run;
        maskbus_pg::apply_migrations(&target, bookkeeping::MIGRATIONS).await?;
        if first_run {
            // The guard passed on a database holding no row: the tables it was made with are
            // maskbus's from now on, and no other ever is but those it creates. A database
            // taken with `adopt` (`--init-target`) holds rows: only the served tables it holds
            // are adopted, when they are served (`crate::owned::adopt_served`), never a table
            // of the test team's that happens to be there.
            crate::owned::adopt_all(&target).await?;
        }
        let pool = PgPool::new(target.clone(), connections.max(3))?;
        Ok(Self {
            target,
            pool,
            made_bookkeeping,
            written: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Counts `rows` of a page as written (its transaction committed).
    pub fn count_written(&self, rows: u64) {
        self.written
            .fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
    }

    /// Rows of pages this process committed to the target so far.
    pub fn rows_written(&self) -> u64 {
        self.written.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// The target's pool (the rebuilds after a bulk load run on it too).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The target's tables and foreign keys in `schemas`, counting those a bulk load has lifted
    /// and not yet rebuilt (they are the target's all the same).
    pub async fn catalog(
        &self,
        schemas: &[String],
    ) -> Result<(Vec<TableInfo>, Vec<ForeignKey>), PgError> {
        let client = self.client().await?;
        let tables = maskbus_pg::catalog::tables(&self.target, &client, schemas).await?;
        let mut fks = maskbus_pg::catalog::foreign_keys(&self.target, &**client, schemas).await?;
        fks.extend(
            Rebuilder::new(self)
                .lifted()
                .await?
                .into_iter()
                .filter_map(|(_, l)| l.foreign_key)
                .filter(|fk| schemas.contains(&fk.table.schema)),
        );
        Ok((tables, fks))
    }

    /// Every entity's watermark, by `schema.table`.
    pub async fn states(&self) -> Result<BTreeMap<String, SyncState>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(bookkeeping::WATERMARKS, &[])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.sync_state", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    SyncState {
                        synced_until: r.get(1),
                        pass_until: r.get(2),
                        after_key: r.get(3),
                        rows_synced: r.get(4),
                        after_tag: r.get(5),
                    },
                )
            })
            .collect())
    }

    /// The ranges of `entity`'s pass in progress, in key order (none when it is read in one).
    pub async fn ranges(&self, entity: &str) -> Result<Vec<RangeState>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(bookkeeping::RANGES, &[&entity])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.sync_ranges", &e))?;
        Ok(rows
            .iter()
            .map(|r| RangeState {
                entity: entity.to_string(),
                range_no: r.get(0),
                until: r.get(1),
                after_key: r.get(2),
                through: r.get(3),
                done: r.get(4),
                rows_synced: r.get(5),
                after_tag: r.get(6),
                through_tag: r.get(7),
            })
            .collect())
    }

    /// Records that `ranges` (of one entity, none read yet) make its pass closing at their
    /// `until`, in one transaction with the entity's watermark.
    pub async fn begin_ranges(&self, ranges: &[RangeState]) -> Result<(), PgError> {
        let Some(first) = ranges.first() else {
            return Ok(());
        };
        let mut client = self.client().await?;
        let q = |action: &'static str| {
            move |e: tokio_postgres::Error| self.target.query_error(action, &e)
        };
        let tx = client.transaction().await.map_err(q("BEGIN"))?;
        tx.execute(
            bookkeeping::BEGIN_RANGED_PASS,
            &[&first.entity, &first.until],
        )
        .await
        .map_err(q("recording the watermark"))?;
        tx.execute(bookkeeping::FORGET_RANGES, &[&first.entity])
            .await
            .map_err(q("recording the ranges"))?;
        for range in ranges {
            tx.execute(
                bookkeeping::RECORD_RANGE,
                &[
                    &range.entity,
                    &range.range_no,
                    &range.until,
                    &range.after_key,
                    &range.through,
                    &range.done,
                    &range.rows_synced,
                    &range.after_tag,
                    &range.through_tag,
                ],
            )
            .await
            .map_err(q("recording the ranges"))?;
        }
        tx.commit().await.map_err(q("COMMIT of the ranges"))
    }

    /// Every range of `entity` is done: its watermark becomes `state` (the window synced) and
    /// its ranges are forgotten, in one transaction.
    pub async fn finish_ranges(&self, entity: &str, state: &SyncState) -> Result<(), PgError> {
        let mut client = self.client().await?;
        let q = |action: &'static str| {
            move |e: tokio_postgres::Error| self.target.query_error(action, &e)
        };
        let tx = client.transaction().await.map_err(q("BEGIN"))?;
        tx.execute(
            bookkeeping::FINISH_RANGED_PASS,
            &[
                &entity,
                &state.synced_until,
                &state.pass_until,
                &state.after_key,
                &state.rows_synced,
                &state.after_tag,
            ],
        )
        .await
        .map_err(q("recording the watermark"))?;
        tx.execute(bookkeeping::FORGET_RANGES, &[&entity])
            .await
            .map_err(q("forgetting the ranges"))?;
        tx.commit().await.map_err(q("COMMIT of the watermark"))
    }

    /// How `offered` (the producer's entities, with the keys it names) lands in the target,
    /// from the target's catalog alone; and what cannot, with the reason.
    pub async fn entity_plans(
        &self,
        offered: &[String],
        keys: &BTreeMap<String, Vec<String>>,
    ) -> Result<(Vec<EntityPlan>, Vec<Skipped>), ConsumerError> {
        let offered: Vec<String> = offered
            .iter()
            .filter(|e| maskbus_protocol::is_entity_name(e))
            .map(|e| maskbus_model::qualify(e))
            .collect();
        let schemas: Vec<String> = offered
            .iter()
            .map(|e| maskbus_pg::TableRef::parse(e).schema)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let (tables, fks) = self.catalog(&schemas).await?;
        let (plans, skipped) = pages::entity_plans(&offered, keys, &tables, &fks)?;
        for plan in &plans {
            for fk in &plan.outside {
                tracing::warn!(entity = %plan.entity, constraint = %fk.name, parent = %fk.parent, "a foreign key references a table the producer does not serve; its rows must already be in the target");
            }
        }
        Ok((plans, skipped))
    }

    /// The extensions PostgreSQL marks trusted on the target's server, and those the target has.
    pub async fn extensions(&self) -> Result<(BTreeSet<String>, BTreeSet<String>), PgError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT ARRAY(SELECT DISTINCT name::text FROM pg_available_extension_versions
                               WHERE trusted),
                        ARRAY(SELECT extname::text FROM pg_extension)",
                &[],
            )
            .await
            .map_err(|e| {
                self.target
                    .query_error("reading the target's extensions", &e)
            })?;
        let (trusted, installed): (Vec<String>, Vec<String>) = (row.get(0), row.get(1));
        Ok((
            trusted.into_iter().collect(),
            installed.into_iter().collect(),
        ))
    }

    /// Those of `entities` (`schema.table`) that the target has no table for.
    pub async fn missing_tables(&self, entities: &[String]) -> Result<Vec<String>, PgError> {
        let client = self.client().await?;
        let client: &tokio_postgres::Client = &client;
        self.missing_in(client, entities).await
    }

    async fn missing_in(
        &self,
        client: &impl tokio_postgres::GenericClient,
        entities: &[String],
    ) -> Result<Vec<String>, PgError> {
        let tables: Vec<TableRef> = entities.iter().map(|e| TableRef::parse(e)).collect();
        let schemas: Vec<&str> = tables.iter().map(|t| t.schema.as_str()).collect();
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        let rows = client
            .query(
                "SELECT s || '.' || n FROM unnest($1::text[], $2::text[]) AS e(s, n)
                  WHERE to_regclass(format('%I.%I', s, n)) IS NULL",
                &[&schemas, &names],
            )
            .await
            .map_err(|e| self.target.query_error("looking for the synced tables", &e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Creates `schema` (served by the producer) in one transaction, unless another worker
    /// made it first (then returns `None`): the target holds either all of it or none. Every
    /// served text is rebuilt from PostgreSQL's parse tree by `maskbus_pg::ddl` (never run as
    /// served); what it refuses is left out and returned, to be said.
    ///
    /// On a first run that made schema `maskbus` itself, a refusal (not a dropped connection)
    /// takes the bookkeeping away again: the target is left as it was found, and the next run
    /// starts from there.
    pub async fn create_schema(
        &self,
        schema: &maskbus_model::schema::Schema,
    ) -> Result<Option<Vec<maskbus_pg::ddl::Refused>>, ConsumerError> {
        let made = self.create_schema_once(schema).await;
        if let Err(e) = &made {
            if self.made_bookkeeping && !e.is_transient() {
                self.undo_bookkeeping().await;
            }
        }
        made
    }

    /// Drops the bookkeeping this process made ([`UNDO_BOOKKEEPING`]); a failure is logged, the
    /// error that led here is the one reported.
    async fn undo_bookkeeping(&self) {
        let undone = match self.target.connect().await {
            Ok(client) => client
                .batch_execute(UNDO_BOOKKEEPING)
                .await
                .map_err(|e| self.target.query_error("dropping schema maskbus", &e)),
            Err(e) => Err(e),
        };
        match undone {
            Ok(()) => tracing::info!("the served schema could not be made: schema maskbus, made by this first run, is dropped again, so the target is as it was"),
            Err(e) => tracing::warn!(error = %e, "the served schema could not be made, and schema maskbus, made by this first run, could not be dropped again"),
        }
    }

    async fn create_schema_once(
        &self,
        schema: &maskbus_model::schema::Schema,
    ) -> Result<Option<Vec<maskbus_pg::ddl::Refused>>, ConsumerError> {
        let built = maskbus_pg::ddl::create(schema);
        let statements = built.statements();
        let left_out = built.tables_left_out();
        // A connection of its own, dropped after: nothing an expression sets outlives it.
        let mut client = self.target.connect().await?;
        let q = |action: String| {
            let target = &self.target;
            move |e: tokio_postgres::Error| ConsumerError::from(target.query_error(action, &e))
        };
        let tx = client
            .transaction()
            .await
            .map_err(q("BEGIN of the schema".into()))?;
        tx.batch_execute(maskbus_pg::ddl::SESSION)
            .await
            .map_err(q("settings of the schema's transaction".into()))?;
        tx.execute(bookkeeping::LOCK_SCHEMA, &[])
            .await
            .map_err(q("waiting for other workers making the schema".into()))?;
        let names = schema.table_names();
        if self.missing_in(&tx, &names).await?.len() != names.len() {
            return Ok(None);
        }
        // What is made is maskbus's; a table left out is not made, and not recorded.
        let names: Vec<String> = names
            .into_iter()
            .filter(|n| !left_out.contains_key(&maskbus_pg::TableRef::parse(n)))
            .collect();
        // One statement each, by the extended protocol: none can carry a second.
        // An error names the statement by its kind and object (read from maskbus's own text,
        // never the server's) and, for a missing privilege, the grant that fixes it.
        let user = self.target.user().unwrap_or("the target role").to_string();
        for (n, statement) in statements.iter().enumerate() {
            tx.execute(statement.as_str(), &[]).await.map_err(|e| {
                let described = maskbus_pg::ddl::describe(statement);
                ConsumerError::from(self.target.query_error_fixed(
                    format!(
                        "creating the served schema: {described} (statement {} of {})",
                        n + 1,
                        statements.len()
                    ),
                    &e,
                    |code| {
                        (code == "42501")
                            .then(|| described.permission_fix(&user, self.target.dbname()))
                    },
                ))
            })?;
        }
        // maskbus owns what it made, recorded in the transaction that makes it.
        crate::owned::Step::Created(names)
            .run(&tx, &self.target, "the served schema")
            .await?;
        tx.commit()
            .await
            .map_err(q("COMMIT of the served schema".into()))?;
        Ok(Some(built.refused().to_vec()))
    }

    /// The served schema the target last took in, if any.
    pub async fn schema_baseline(&self) -> Result<Option<Baseline>, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(bookkeeping::SCHEMA_BASELINE, &[])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.schema_state", &e))?;
        let Some(row) = row else { return Ok(None) };
        let bad = |e: serde_json::Error| {
            self.target
                .refusal("reading maskbus.schema_state", e.to_string())
        };
        Ok(Some(Baseline {
            fingerprint: row.get(0),
            served: serde_json::from_str(row.get::<_, &str>(1)).map_err(bad)?,
            left_out: serde_json::from_str(row.get::<_, &str>(2)).map_err(bad)?,
        }))
    }

    /// Records `baseline` as the served schema the target has taken in.
    pub async fn record_baseline(&self, baseline: &Baseline) -> Result<(), PgError> {
        let client = self.client().await?;
        let client: &tokio_postgres::Client = &client;
        self.record_baseline_in(client, baseline).await
    }

    async fn record_baseline_in(
        &self,
        client: &impl tokio_postgres::GenericClient,
        baseline: &Baseline,
    ) -> Result<(), PgError> {
        let served = serde_json::to_string(&baseline.served).unwrap_or_default();
        let left_out = serde_json::to_string(&baseline.left_out).unwrap_or_default();
        client
            .execute(
                bookkeeping::RECORD_SCHEMA_BASELINE,
                &[&baseline.fingerprint, &served, &left_out],
            )
            .await
            .map_err(|e| {
                self.target
                    .query_error("recording maskbus.schema_state", &e)
            })?;
        Ok(())
    }

    /// The schema of `entities` as the target holds it (those it has), read like the source's.
    pub async fn read_schema(
        &self,
        entities: &[String],
    ) -> Result<maskbus_model::schema::Schema, PgError> {
        // A connection of its own: the read empties its search path.
        let client = self.target.connect().await?;
        let tables: Vec<TableRef> = entities.iter().map(|e| TableRef::parse(e)).collect();
        Ok(
            maskbus_pg::schema_read::read(&self.target, &client, &tables)
                .await?
                .0,
        )
    }

    /// Applies `steps` (one table's changes, with what they do to the tables maskbus owns) in
    /// one transaction, with `baseline` when given (the served schema as far as the target has it
    /// now, that table included): a crash between two tables leaves each either changed and
    /// recorded, or neither. With `rewrite`, the table's watermark goes in the same transaction, so the next
    /// pass writes its rows again.
    pub async fn apply_changes(
        &self,
        entity: Option<&str>,
        steps: &[crate::owned::Step],
        rewrite: bool,
        baseline: Option<&Baseline>,
    ) -> Result<(), PgError> {
        // A connection of its own, dropped after: nothing an expression sets outlives it.
        let mut client = self.target.connect().await?;
        let what = entity.unwrap_or("the served types");
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target.query_error(action, &e);
        let tx = client
            .transaction()
            .await
            .map_err(q(format!("BEGIN of the schema changes of {what}")))?;
        tx.batch_execute(maskbus_pg::ddl::SESSION)
            .await
            .map_err(q("settings of the schema's transaction".into()))?;
        // One statement each, by the extended protocol: none can carry a second.
        for step in steps {
            step.run(&tx, &self.target, what).await?;
        }
        if let (Some(entity), true) = (entity, rewrite) {
            tx.execute(bookkeeping::FORGET_WATERMARK, &[&entity])
                .await
                .map_err(q("forgetting a watermark".into()))?;
        }
        if let Some(baseline) = baseline {
            self.record_baseline_in(&tx, baseline).await?;
        }
        tx.commit()
            .await
            .map_err(q(format!("COMMIT of the schema changes of {what}")))
    }

    /// Holds the target's reconcile lock while the returned connection lives: one process
    /// converges a target's schema at a time.
    pub async fn converging(&self) -> Result<tokio_postgres::Client, PgError> {
        let client = self.target.connect().await?;
        client
            .execute(bookkeeping::LOCK_RECONCILE, &[])
            .await
            .map_err(|e| {
                self.target
                    .query_error("taking the schema reconcile lock", &e)
            })?;
        Ok(client)
    }

    /// The indexes and foreign keys a bulk load has lifted and not rebuilt yet, by table.
    pub async fn lifted(&self) -> Result<BTreeSet<(TableRef, String)>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(bookkeeping::LIFTED_NAMES, &[])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.lifted", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1)),
                    r.get(2),
                )
            })
            .collect())
    }

    /// The tables maskbus created in this target (`schema.table`): those the reconcile loop
    /// compares by the target's real catalog (the adopted ones keep their own differences).
    pub async fn created_tables(&self) -> Result<BTreeSet<String>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(bookkeeping::CREATED_TABLES, &[])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.owned_tables", &e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Compares each entity's rules fingerprint with the one its rows were masked by: a table
    /// whose rules changed forgets its watermark (and is written again by the next pass), in
    /// the transaction that records the new fingerprint. Returns those entities.
    pub async fn follow_rules(
        &self,
        rules: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, PgError> {
        let mut client = self.client().await?;
        let q = |action: &'static str| {
            move |e: tokio_postgres::Error| self.target.query_error(action, &e)
        };
        let tx = client.transaction().await.map_err(q("BEGIN"))?;
        let held: BTreeMap<String, String> = tx
            .query(bookkeeping::RULES_FINGERPRINTS, &[])
            .await
            .map_err(q("reading maskbus.table_rules"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let mut changed = Vec::new();
        for (entity, fingerprint) in rules {
            let entity = maskbus_model::qualify(entity);
            match held.get(&entity) {
                Some(old) if old == fingerprint => continue,
                Some(_) => {
                    tx.execute(bookkeeping::FORGET_WATERMARK, &[&entity])
                        .await
                        .map_err(q("forgetting a watermark"))?;
                    changed.push(entity.clone());
                }
                None => {}
            }
            tx.execute(
                bookkeeping::RECORD_RULES_FINGERPRINT,
                &[&entity, fingerprint],
            )
            .await
            .map_err(q("recording maskbus.table_rules"))?;
        }
        tx.commit()
            .await
            .map_err(q("COMMIT of maskbus.table_rules"))?;
        Ok(changed)
    }

    /// Records which of the tables a pass covered (`covered`) failed, with the reason: what
    /// `status` and `/health` say fails until a pass syncs the table again.
    pub async fn record_failures(
        &self,
        covered: &[String],
        failed: &[crate::Skipped],
    ) -> Result<(), ConsumerError> {
        let mut client = self.target.connect().await?;
        let q = |what: &'static str| {
            let target = self.target.clone();
            move |e: tokio_postgres::Error| ConsumerError::from(target.query_error(what, &e))
        };
        let tx = client
            .transaction()
            .await
            .map_err(q("BEGIN for maskbus.table_failures"))?;
        let failing: Vec<&str> = failed.iter().map(|f| f.entity.as_str()).collect();
        tx.execute(bookkeeping::FORGET_FAILURES, &[&covered, &failing])
            .await
            .map_err(q("clearing maskbus.table_failures"))?;
        for f in failed {
            tx.execute(bookkeeping::RECORD_FAILURE, &[&f.entity, &f.reason])
                .await
                .map_err(q("recording maskbus.table_failures"))?;
        }
        tx.commit()
            .await
            .map_err(q("COMMIT of maskbus.table_failures"))
    }

    /// Whether the first-run guard passes on the target as it is now (see [`TargetDb::open`]):
    /// the served tables a first run finds are adopted only then (`crate::owned`).
    pub async fn first_run_guard_passes(&self) -> Result<bool, ConsumerError> {
        let client = self.target.connect().await?;
        Ok(first_table_with_rows(&self.target, &client)
            .await?
            .is_none())
    }

    /// Where the target is (its name is said in errors; never its address).
    pub fn target(&self) -> &Database {
        &self.target
    }

    /// How far `entity`'s first pass is (for a worker about to load a table whose parent another
    /// worker loads).
    pub async fn progress(&self, entity: &str) -> Result<ParentProgress, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(bookkeeping::PASS_PROGRESS, &[&entity])
            .await
            .map_err(|e| self.target.query_error("reading maskbus.sync_state", &e))?;
        Ok(match row {
            None => ParentProgress::NotStarted,
            Some(r) if r.get::<_, bool>(0) => ParentProgress::Loaded,
            Some(r) => ParentProgress::Loading(r.get::<_, Option<f64>>(1).unwrap_or(0.0)),
        })
    }

    /// Up to `limit` values of `fk`'s columns that child rows hold and no parent row has.
    pub async fn orphans(&self, fk: &ForeignKey, limit: i64) -> Result<Vec<Vec<String>>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(&maskbus_pg::statements::orphans(fk), &[&limit])
            .await
            .map_err(|e| {
                self.target.query_error(
                    format!(
                        "looking for rows of {} whose {} parent is missing",
                        fk.table, fk.name
                    ),
                    &e,
                )
            })?;
        Ok(rows
            .iter()
            .map(|r| (0..fk.columns.len()).map(|i| r.get(i)).collect())
            .collect())
    }
}
