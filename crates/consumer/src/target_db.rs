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
}

/// The first table (outside maskbus' own schema) that holds a row, if any.
async fn first_table_with_rows(
    target: &Database,
    client: &tokio_postgres::Client,
) -> Result<Option<String>, PgError> {
    let tables = client
        .query(
            "SELECT format('%I.%I', n.nspname, c.relname), format('%s.%s', n.nspname, c.relname)
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'maskbus')
                AND n.nspname NOT LIKE 'pg\\_%'
                AND has_table_privilege(c.oid, 'SELECT')
              ORDER BY 2",
            &[],
        )
        .await
        .map_err(|e| target.query_error("listing the target's tables", &e))?;
    for row in &tables {
        let (sql_name, name): (String, String) = (row.get(0), row.get(1));
        let has_rows: bool = client
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {sql_name})"), &[])
            .await
            .map_err(|e| target.query_error(format!("looking into {name}"), &e))?
            .get(0);
        if has_rows {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

impl TargetDb {
    /// Opens the target. On the first run (no `maskbus.sync_state` yet) the database must hold no
    /// rows in any table, or `adopt` must say that this database really is the test database:
    /// maskbus never writes into a database that is not its target (production, by a typo).
    /// `connections`: the writer's pool (one per range written side by side, and the rebuilds).
    pub async fn open(
        mut target: Database,
        adopt: bool,
        disable_triggers: bool,
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
        {
            let client = target.connect().await?;
            let marked: bool = client
                .query_one(bookkeeping::IS_TARGET, &[])
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
        }
        maskbus_pg::apply_migrations(&target, bookkeeping::MIGRATIONS).await?;
        let pool = PgPool::new(target.clone(), connections.max(3))?;
        Ok(Self { target, pool })
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
    /// made it first (then returns false): the target holds either all of it or none.
    pub async fn create_schema(
        &self,
        schema: &maskbus_model::schema::Schema,
    ) -> Result<bool, ConsumerError> {
        let statements = maskbus_pg::ddl::create(schema).map_err(|e| ConsumerError::BadReply {
            entity: String::new(),
            reason: e.to_string(),
        })?;
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
            return Ok(false);
        }
        // One statement each, by the extended protocol: none can carry a second.
        for (n, statement) in statements.iter().enumerate() {
            tx.execute(statement.as_str(), &[])
                .await
                .map_err(q(format!(
                    "creating the served schema (statement {} of {})",
                    n + 1,
                    statements.len()
                )))?;
        }
        tx.commit()
            .await
            .map_err(q("COMMIT of the served schema".into()))?;
        Ok(true)
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

    /// Applies `statements` (one table's changes) in one transaction, with `baseline` (the
    /// served schema as far as the target has it now, that table included): a crash between two
    /// tables leaves each either changed and recorded, or neither. With `rewrite`, the table's
    /// watermark goes in the same transaction, so the next pass writes its rows again.
    pub async fn apply_changes(
        &self,
        entity: Option<&str>,
        statements: &[String],
        rewrite: bool,
        baseline: &Baseline,
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
        for statement in statements {
            tx.execute(statement.as_str(), &[])
                .await
                .map_err(q(format!("changing the schema of {what}")))?;
        }
        if let (Some(entity), true) = (entity, rewrite) {
            tx.execute(bookkeeping::FORGET_WATERMARK, &[&entity])
                .await
                .map_err(q("forgetting a watermark".into()))?;
        }
        self.record_baseline_in(&tx, baseline).await?;
        tx.commit()
            .await
            .map_err(q(format!("COMMIT of the schema changes of {what}")))
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
