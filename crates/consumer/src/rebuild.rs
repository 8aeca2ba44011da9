//! Rebuilding what a bulk load lifted (`maskbus.lifted`): each object in its own transaction
//! together with the deletion of its record, two at a time as `pg_restore -j 2` does, and the
//! indexes of a table whose load is through already while the next tables load.
//!
//! [`Rebuilder`] needs only the target and a pool, so it can work beside the pass: when a
//! table's first pass is through, [`EarlyIndexes`] builds that table's lifted indexes on a
//! connection of its own while the pass loads the next table (on two cores, the largest
//! table's index builds then overlap the other tables' loads instead of lengthening the tail).
//! Whatever it has not rebuilt when the pass ends is rebuilt by [`Rebuilder::restore_lifted`]
//! with the foreign keys.

use super::bookkeeping;
use super::owned::Owned;
use super::pages::Skipped;
use super::target_db::TargetDb;
use maskbus_pg::bulk::{Lifted, LiftedKind};
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{Database, ForeignKey, PgError, PgPool, TableRef};
use std::collections::BTreeSet;

/// Rebuilds lifted objects on its own connections.
#[derive(Clone)]
pub struct Rebuilder {
    target: Database,
    pool: PgPool,
}

impl Rebuilder {
    /// Rebuilds on `db`'s pool.
    pub fn new(db: &TargetDb) -> Self {
        Self {
            target: db.target().clone(),
            pool: db.pool().clone(),
        }
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// Every object a load lifted and has not rebuilt yet, by entity, indexes first.
    pub async fn lifted(&self) -> Result<Vec<(String, Lifted)>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(bookkeeping::LIFTED, &[])
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

    /// Rebuilds one lifted object and deletes its record, in one transaction. The record is
    /// deleted first: a second rebuilder of the same object (the early rebuild of a pass cut
    /// short, still finishing, and the next pass) waits on it, then finds it gone and leaves
    /// the object alone. Returns whether this call rebuilt it.
    async fn restore_one(&self, entity: &str, object: &Lifted) -> Result<bool, Rebuild> {
        let started = std::time::Instant::now();
        let mut client = self.client().await.map_err(Rebuild::Failed)?;
        // Only a table maskbus owns has anything rebuilt on it (`maskbus.lifted` is the
        // consumer's alone; this holds whatever it says).
        {
            let plain: &tokio_postgres::Client = &client;
            Owned::read(&self.target, plain)
                .await
                .and_then(|owned| {
                    owned.refuse_unless_owned(
                        &self.target,
                        &format!("rebuilding {} {} of", object.kind.as_str(), object.name),
                        &object.table,
                    )
                })
                .map_err(Rebuild::Failed)?;
        }
        let result: Result<bool, tokio_postgres::Error> = async {
            let tx = client.transaction().await?;
            let claimed = tx
                .execute(
                    bookkeeping::CLAIM_LIFTED,
                    &[&entity, &object.kind.as_str(), &object.name],
                )
                .await?;
            if claimed == 0 {
                return Ok(false);
            }
            tx.batch_execute(&object.restore_batch()).await?;
            tx.commit().await?;
            Ok(true)
        }
        .await;
        let e = match result {
            Ok(done) => {
                if done {
                    tracing::info!(%entity, kind = object.kind.as_str(), name = %object.name,
                        ms = started.elapsed().as_millis() as u64, "rebuilt after the load");
                }
                return Ok(done);
            }
            Err(e) => e,
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

/// Rebuilds, one at a time beside the pass, what a load lifted as soon as the tables it needs
/// are loaded: a table's indexes when its load is through, a foreign key when its table and
/// the parent table both are.
pub struct EarlyRebuild {
    tables: Option<tokio::sync::mpsc::UnboundedSender<TableRef>>,
    worker: tokio::task::JoinHandle<usize>,
}

impl EarlyRebuild {
    pub fn start(rebuilder: Rebuilder) -> Self {
        let (tables, mut incoming) = tokio::sync::mpsc::unbounded_channel::<TableRef>();
        let worker = tokio::spawn(async move {
            let (mut rebuilt, mut loaded, mut tried) = (0, BTreeSet::new(), BTreeSet::new());
            while let Some(table) = incoming.recv().await {
                loaded.insert(table);
                // Read again for every table (one small query): workers sharing the target
                // lift and rebuild too, and a record already rebuilt must not be built twice.
                let objects = match rebuilder.lifted().await {
                    Ok(objects) => objects,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read maskbus.lifted; the rebuild waits for the end of the pass");
                        continue;
                    }
                };
                for (entity, object) in ready_to_rebuild(&objects, &loaded) {
                    // Tried once here: a failure stays recorded, and the rebuild at the end of
                    // the pass tries it again and reports it.
                    if !tried.insert((entity.clone(), object.name.clone())) {
                        continue;
                    }
                    match rebuilder.restore_one(entity, object).await {
                        Ok(done) => rebuilt += usize::from(done),
                        Err(Rebuild::Failed(e) | Rebuild::Deadlock(e)) => {
                            tracing::warn!(%entity, name = %object.name, error = %e,
                                "early rebuild failed; it is tried again at the end of the pass");
                        }
                    }
                }
            }
            rebuilt
        });
        Self {
            tables: Some(tables),
            worker,
        }
    }

    /// `table`'s load is through (and nothing in this pass writes to it again).
    pub fn table_loaded(&self, table: &TableRef) {
        if let Some(tables) = &self.tables {
            let _ = tables.send(table.clone());
        }
    }

    /// Waits for the rebuilds under way; returns how many objects were rebuilt.
    pub async fn finish(mut self) -> usize {
        self.tables = None;
        (&mut self.worker).await.unwrap_or(0)
    }
}

/// The lifted objects (in `maskbus.lifted` order: indexes first) whose tables are all `loaded`.
pub fn ready_to_rebuild<'a>(
    objects: &'a [(String, Lifted)],
    loaded: &BTreeSet<TableRef>,
) -> Vec<&'a (String, Lifted)> {
    objects
        .iter()
        .filter(|(_, object)| {
            loaded.contains(&object.table)
                && object
                    .foreign_key
                    .as_ref()
                    .is_none_or(|fk| loaded.contains(&fk.parent))
        })
        .collect()
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
    outcome: Result<bool, Rebuild>,
    restored: &mut usize,
    failed: &mut Vec<Skipped>,
) -> Result<(), PgError> {
    match outcome {
        Ok(done) => *restored += usize::from(done),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(table: &str, name: &str, parent: Option<&str>) -> (String, Lifted) {
        let table = TableRef::new("public", table);
        let foreign_key = parent.map(|p| ForeignKey {
            name: name.into(),
            table: table.clone(),
            columns: vec!["x".into()],
            parent: TableRef::new("public", p),
            parent_columns: vec!["id".into()],
            nullable: true,
            deferrable: false,
        });
        let kind = if parent.is_some() {
            LiftedKind::ForeignKey
        } else {
            LiftedKind::Index
        };
        (
            format!("public.{}", table.name),
            Lifted {
                table,
                kind,
                name: name.into(),
                definition: String::new(),
                foreign_key,
            },
        )
    }

    #[test]
    fn a_foreign_key_waits_for_both_of_its_tables() {
        let objects = vec![
            lifted("child", "child_x_idx", None),
            lifted("parent", "parent_y_idx", None),
            lifted("child", "child_x_fkey", Some("parent")),
        ];
        let names = |loaded: &[&str]| -> Vec<String> {
            let loaded = loaded.iter().map(|t| TableRef::new("public", *t)).collect();
            ready_to_rebuild(&objects, &loaded)
                .iter()
                .map(|(_, o)| o.name.clone())
                .collect()
        };
        assert!(names(&[]).is_empty());
        assert_eq!(names(&["child"]), ["child_x_idx"]);
        assert_eq!(names(&["parent"]), ["parent_y_idx"]);
        assert_eq!(
            names(&["child", "parent"]),
            ["child_x_idx", "parent_y_idx", "child_x_fkey"]
        );
    }
}
