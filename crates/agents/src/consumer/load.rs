//! The first pass into empty tables is loaded as `pg_restore` loads a dump: before it, the
//! secondary indexes and foreign keys of those tables are lifted (`maskbus_pg::bulk`), their
//! pages go in with COPY, and after it every lifted object is rebuilt, each foreign key
//! validated once in bulk instead of row by row.
//!
//! What is lifted is recorded in `maskbus.lifted` in the transaction that lifts it, and each
//! record is deleted in the transaction that rebuilds its object. A load cut short (a crash, a
//! signal, a failed table) therefore leaves its records behind, and the next pass rebuilds them
//! when it is through: at the end of every pass, whatever it was, nothing stays lifted unless it
//! cannot be rebuilt, and then the pass says which object, on which table, and why.

use super::pages::{EntityPlan, Skipped, SyncState};
use super::writer::Writer;
use maskbus_pg::bulk::{self, Lifted, LiftedKind};
use maskbus_pg::{ForeignKey, PgError, TableRef};
use std::collections::{BTreeMap, BTreeSet};

/// The tables a pass may load in bulk: never synced (no watermark), by plan order.
pub fn never_synced<'a>(
    plans: &'a [EntityPlan],
    states: &BTreeMap<String, SyncState>,
) -> Vec<&'a EntityPlan> {
    plans
        .iter()
        .filter(|p| !states.contains_key(&p.entity))
        .collect()
}

/// How far another worker's table is, as seen in the shared target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParentProgress {
    /// Its first pass is through: its rows up to that pass are all in.
    Loaded,
    /// Being loaded; its watermark last moved this many seconds ago.
    Loading(f64),
    /// No watermark yet.
    NotStarted,
}

impl Writer {
    /// How far `entity`'s first pass is (for a worker about to load a table whose parent another
    /// worker loads).
    pub async fn progress(&self, entity: &str) -> Result<ParentProgress, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT synced_until IS NOT NULL, extract(epoch FROM now() - updated_at)::float8
                   FROM maskbus.sync_state WHERE entity = $1",
                &[&entity],
            )
            .await
            .map_err(|e| self.target.query_error("reading maskbus.sync_state", &e))?;
        Ok(match row {
            None => ParentProgress::NotStarted,
            Some(r) if r.get::<_, bool>(0) => ParentProgress::Loaded,
            Some(r) => ParentProgress::Loading(r.get::<_, Option<f64>>(1).unwrap_or(0.0)),
        })
    }

    /// Lifts the secondary indexes and foreign keys of the tables in `candidates` that hold no
    /// row, recording them, in one transaction. Only foreign keys to tables of this sync
    /// (`synced`) are lifted: the rows of any other parent must already be there, and the
    /// check as rows land is what says so. Returns how many objects were lifted.
    pub async fn lift_for_load(
        &self,
        candidates: &[&EntityPlan],
        synced: &[&TableRef],
    ) -> Result<usize, PgError> {
        if candidates.is_empty() {
            return Ok(0);
        }
        let mut client = self.client().await?;
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target.query_error(action, &e);
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        let mut empty: Vec<TableRef> = Vec::new();
        let mut entity_of: BTreeMap<TableRef, &str> = BTreeMap::new();
        for plan in candidates {
            let has_rows: bool = tx
                .query_one(
                    &format!("SELECT EXISTS (SELECT 1 FROM {})", plan.table.sql()),
                    &[],
                )
                .await
                .map_err(q(format!("looking into {}", plan.entity)))?
                .get(0);
            if !has_rows {
                empty.push(plan.table.clone());
                entity_of.insert(plan.table.clone(), &plan.entity);
            }
        }
        let lifted: Vec<Lifted> = bulk::liftable(&self.target, &*tx, &empty)
            .await?
            .into_iter()
            .filter(|l| {
                l.foreign_key
                    .as_ref()
                    .is_none_or(|fk| synced.contains(&&fk.parent))
            })
            .collect();
        for object in &lifted {
            let fk = object.foreign_key.as_ref();
            let entity = entity_of
                .get(&object.table)
                .copied()
                .unwrap_or_default()
                .to_string();
            tx.execute(
                "INSERT INTO maskbus.lifted (entity, table_schema, table_name, kind, name, definition,
                     fk_columns, parent_schema, parent_table, parent_columns, fk_nullable, fk_deferrable)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                &[
                    &entity,
                    &object.table.schema,
                    &object.table.name,
                    &object.kind.as_str(),
                    &object.name,
                    &object.definition,
                    &fk.map(|f| &f.columns),
                    &fk.map(|f| &f.parent.schema),
                    &fk.map(|f| &f.parent.name),
                    &fk.map(|f| &f.parent_columns),
                    &fk.map(|f| f.nullable),
                    &fk.map(|f| f.deferrable),
                ],
            )
            .await
            .map_err(q("recording what the load lifts in maskbus.lifted".into()))?;
            tx.batch_execute(&object.drop_sql())
                .await
                .map_err(q(format!(
                    "lifting {} {} of {entity} for the load",
                    object.kind.as_str(),
                    object.name
                )))?;
        }
        tx.commit()
            .await
            .map_err(q("COMMIT of the lifted indexes and foreign keys".into()))?;
        if !lifted.is_empty() {
            tracing::info!(
                tables = empty.len(),
                indexes = lifted.iter().filter(|l| l.kind == LiftedKind::Index).count(),
                foreign_keys = lifted.iter().filter(|l| l.kind == LiftedKind::ForeignKey).count(),
                "loading empty tables in bulk: secondary indexes and foreign keys are rebuilt at the end"
            );
        }
        Ok(lifted.len())
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

    /// Every object a load lifted and has not rebuilt yet, by entity, indexes first.
    pub async fn lifted(&self) -> Result<Vec<(String, Lifted)>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT entity, table_schema, table_name, kind, name, definition,
                        fk_columns, parent_schema, parent_table, parent_columns, fk_nullable, fk_deferrable
                   FROM maskbus.lifted
                  ORDER BY kind = 'foreign key', entity, name",
                &[],
            )
            .await
            .map_err(|e| self.target.query_error("reading maskbus.lifted", &e))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let table = TableRef::new(r.get::<_, String>(1), r.get::<_, String>(2));
                let name: String = r.get(4);
                let parent: (Option<String>, Option<String>) = (r.get(7), r.get(8));
                let foreign_key = match (r.get(6), parent, r.get(9)) {
                    (Some(columns), (Some(schema), Some(parent)), Some(parent_columns)) => {
                        Some(ForeignKey {
                            name: name.clone(),
                            table: table.clone(),
                            columns,
                            parent: TableRef::new(schema, parent),
                            parent_columns,
                            nullable: r.get::<_, Option<bool>>(10).unwrap_or(false),
                            deferrable: r.get::<_, Option<bool>>(11).unwrap_or(false),
                        })
                    }
                    _ => None,
                };
                Some((
                    r.get(0),
                    Lifted {
                        table,
                        kind: LiftedKind::parse(r.get(3))?,
                        name,
                        definition: r.get(5),
                        foreign_key,
                    },
                ))
            })
            .collect())
    }

    /// Rebuilds every lifted object (of the entities in `only`, if given), each in its own
    /// transaction together with the deletion of its record: the indexes first (a foreign key's
    /// validation reads them), then the foreign keys, [`REBUILDERS`] at a time on their own
    /// connections, as `pg_restore -j` does. Returns how many were rebuilt, and the entities
    /// whose objects could not be (they stay recorded, and the next pass tries again). A
    /// transient failure (the target restarting) is returned as an error.
    pub async fn restore_lifted(
        &self,
        only: Option<&BTreeSet<String>>,
    ) -> Result<(usize, Vec<Skipped>), PgError> {
        use futures_util::StreamExt;
        let objects: Vec<(String, Lifted)> = self
            .lifted()
            .await?
            .into_iter()
            .filter(|(entity, _)| only.is_none_or(|only| only.contains(entity)))
            .collect();
        let mut restored = 0;
        let mut failed = Vec::new();
        for order in [0, 1] {
            let phase = objects
                .iter()
                .filter(|(_, object)| object.restore_order() == order);
            let outcomes: Vec<_> = futures_util::stream::iter(phase)
                .map(|(entity, object)| async move {
                    (entity, object, self.restore_one(entity, object).await)
                })
                .buffer_unordered(REBUILDERS)
                .collect()
                .await;
            // Two rebuilds that lock the same tables in turn can deadlock, and Postgres cancels
            // one of them: it is done again, alone. Alone it can only have deadlocked with
            // another session: transient, the next pass retries.
            let mut collided = Vec::new();
            for (entity, object, outcome) in outcomes {
                match outcome {
                    Err(Rebuild::Deadlock(_)) => collided.push((entity, object)),
                    outcome => settle(entity, object, outcome, &mut restored, &mut failed)?,
                }
            }
            for (entity, object) in collided {
                let outcome = self.restore_one(entity, object).await;
                settle(entity, object, outcome, &mut restored, &mut failed)?;
            }
        }
        Ok((restored, failed))
    }

    /// Rebuilds one lifted object and deletes its record, in one transaction.
    async fn restore_one(&self, entity: &str, object: &Lifted) -> Result<(), Rebuild> {
        let started = std::time::Instant::now();
        let mut client = self.client().await.map_err(Rebuild::Failed)?;
        let result: Result<(), tokio_postgres::Error> = async {
            let tx = client.transaction().await?;
            tx.batch_execute(&object.restore_batch()).await?;
            tx.execute(
                "DELETE FROM maskbus.lifted WHERE entity = $1 AND kind = $2 AND name = $3",
                &[&entity, &object.kind.as_str(), &object.name],
            )
            .await?;
            tx.commit().await
        }
        .await;
        let Err(e) = result else {
            tracing::info!(%entity, kind = object.kind.as_str(), name = %object.name,
                ms = started.elapsed().as_millis() as u64, "rebuilt after the load");
            return Ok(());
        };
        let deadlock = e.code() == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED);
        let e = self.target.query_error(
            format!(
                "rebuilding {} {} of {entity}",
                object.kind.as_str(),
                object.name
            ),
            &e,
        );
        if deadlock {
            tracing::info!(%entity, name = %object.name, "rebuild deadlocked with another; retrying it alone");
            return Err(Rebuild::Deadlock(e));
        }
        Err(Rebuild::Failed(e))
    }
}

/// How many lifted objects are rebuilt at once, each on its own connection.
pub const REBUILDERS: usize = 2;

/// Why one rebuild did not happen.
enum Rebuild {
    /// Postgres cancelled it to break a deadlock with another rebuild.
    Deadlock(PgError),
    Failed(PgError),
}

/// Counts a rebuild, reports one that cannot be done, and passes on a transient failure.
fn settle(
    entity: &str,
    object: &Lifted,
    outcome: Result<(), Rebuild>,
    restored: &mut usize,
    failed: &mut Vec<Skipped>,
) -> Result<(), PgError> {
    match outcome {
        Ok(()) => *restored += 1,
        Err(Rebuild::Deadlock(e)) => return Err(e),
        Err(Rebuild::Failed(e)) if e.is_transient() => return Err(e),
        Err(Rebuild::Failed(e)) => {
            tracing::error!(%entity, error = %e, "cannot rebuild what the load lifted");
            failed.push(Skipped {
                entity: entity.to_string(),
                reason: format!(
                    "{e}; the rows are in but {} {} is not: fix the cause and run again (maskbus.lifted keeps its definition)",
                    object.kind.as_str(),
                    object.name
                ),
            });
        }
    }
    Ok(())
}
