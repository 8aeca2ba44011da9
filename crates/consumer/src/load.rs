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

use super::bookkeeping;
use super::owned::Owned;
use super::pages::{EntityPlan, Skipped, SyncState};
use super::rebuild::{EarlyRebuild, Rebuilder};
use super::target_db::TargetDb;
use maskbus_pg::bulk::{self, Lifted, LiftedKind};
use maskbus_pg::{PgError, TableRef};
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

/// Whether a pass fills its tables children first. Parents go first, so that a row's parent is
/// there when the row lands; but when one consumer loads every table of the pass in bulk (the
/// foreign keys among them lifted, no table of a cycle or with links to set later), order does
/// not matter for correctness, and children go first: the largest tables are usually the leaves
/// (transactions, events, lines), and their indexes are then built while the tables they
/// reference load, not at the end. A table whose parent then fails is emptied again
/// ([`BulkLoad::unload`]), so it ends as it would have parents first: not synced.
pub fn children_first(plans: &[EntityPlan], in_bulk: &BTreeSet<String>, workers: u32) -> bool {
    workers <= 1
        && !plans.is_empty()
        && plans
            .iter()
            .all(|p| in_bulk.contains(&p.entity) && p.together.is_none() && p.deferred.is_empty())
}

/// The tables of `plans` that reference one of `failed` through their foreign keys, directly or
/// through each other.
pub fn dependants<'a>(plans: &'a [EntityPlan], failed: &BTreeSet<String>) -> Vec<&'a EntityPlan> {
    let mut reached: BTreeSet<&str> = failed.iter().map(String::as_str).collect();
    let mut out: Vec<&EntityPlan> = Vec::new();
    loop {
        let before = out.len();
        for plan in plans {
            let references_reached = plan
                .parents
                .iter()
                .any(|fk| reached.contains(fk.parent.to_string().as_str()));
            if references_reached && !reached.contains(plan.entity.as_str()) {
                reached.insert(&plan.entity);
                out.push(plan);
            }
        }
        if out.len() == before {
            return out;
        }
    }
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

/// The bulk load of one pass: which of its tables were empty and are loaded in bulk (their
/// secondary indexes and foreign keys lifted), in which order, and the rebuild of what was
/// lifted, early beside the pass where it can be and at its end for the rest.
pub struct BulkLoad<'db> {
    db: &'db TargetDb,
    /// The entities of this pass that were empty and load in bulk.
    in_bulk: BTreeSet<String>,
    /// Whether the pass fills its tables children first ([`children_first`]).
    children_first: bool,
    /// Alone on the target, the rebuild of each table loaded in bulk as soon as it is in.
    early: Option<EarlyRebuild>,
}

impl<'db> BulkLoad<'db> {
    /// A pass that loads nothing in bulk (but still rebuilds what an earlier one lifted).
    pub fn off(db: &'db TargetDb) -> Self {
        Self {
            db,
            in_bulk: BTreeSet::new(),
            children_first: false,
            early: None,
        }
    }

    /// Lifts for a pass over `plans` by `workers` workers: of `candidates` (the tables never
    /// synced), those that hold no row load in bulk. See [`BulkLoad::lift_for_load`].
    pub async fn lift(
        db: &'db TargetDb,
        plans: &[EntityPlan],
        candidates: &[&EntityPlan],
        workers: u32,
    ) -> Result<Self, PgError> {
        let mut load = Self::off(db);
        let synced: Vec<&TableRef> = plans.iter().map(|p| &p.table).collect();
        load.in_bulk = load.lift_for_load(candidates, &synced).await?;
        load.children_first = children_first(plans, &load.in_bulk, workers);
        // Alone on the target, a table loaded in bulk gets its indexes (and its foreign keys,
        // once their parent is loaded too) back while the next tables load; a table of a
        // cycle, or with links to set, waits for the end of the pass.
        load.early = (workers <= 1 && !load.in_bulk.is_empty())
            .then(|| EarlyRebuild::start(Rebuilder::new(db)));
        Ok(load)
    }

    pub fn children_first(&self) -> bool {
        self.children_first
    }

    /// `plan`'s table is through for this pass: what was lifted of it may be rebuilt now.
    pub fn loaded(&self, plan: &EntityPlan) {
        if let Some(early) = self.early.as_ref().filter(|_| {
            self.in_bulk.contains(&plan.entity)
                && plan.together.is_none()
                && plan.deferred.is_empty()
        }) {
            early.table_loaded(&plan.table);
        }
    }

    /// Rebuilds what is still lifted (by this pass, or by one cut short before it): the early
    /// rebuilds are waited for, the rest rebuilt now; with several workers (`mine`), each
    /// rebuilds what belongs to its tables. Returns the objects rebuilt and those that could not
    /// be, each as a failed table with the reason.
    pub async fn finish(
        self,
        mine: Option<&BTreeSet<String>>,
    ) -> Result<(usize, Vec<Skipped>), PgError> {
        let early = match self.early {
            Some(early) => early.finish().await,
            None => 0,
        };
        let (rebuilt, not_rebuilt) = Rebuilder::new(self.db).restore_lifted(mine).await?;
        Ok((early + rebuilt, not_rebuilt))
    }

    /// Lifts the secondary indexes and foreign keys of the tables in `candidates` that hold no
    /// row, recording them, in one transaction. Only foreign keys to tables of this sync
    /// (`synced`) are lifted: the rows of any other parent must already be there, and the
    /// check as rows land is what says so. Returns the entities loaded in bulk: those that
    /// were empty.
    async fn lift_for_load(
        &self,
        candidates: &[&EntityPlan],
        synced: &[&TableRef],
    ) -> Result<BTreeSet<String>, PgError> {
        if candidates.is_empty() {
            return Ok(BTreeSet::new());
        }
        let mut client = self.db.client().await?;
        let q = |action: String| {
            move |e: tokio_postgres::Error| self.db.target().query_error(action, &e)
        };
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        // Workers sharing a target lift at the same moment, each dropping keys that lock two
        // tables: one at a time, or two of them deadlock and one pass starts again.
        tx.execute(bookkeeping::LOCK_LIFT, &[])
            .await
            .map_err(q("waiting for other workers to finish lifting".into()))?;
        // Only a table maskbus owns has anything lifted (dropped) from it.
        let owned = Owned::read(self.db.target(), &*tx).await?;
        for plan in candidates {
            owned.refuse_unless_owned(self.db.target(), "lifting the indexes of", &plan.table)?;
        }
        let mut empty: Vec<TableRef> = Vec::new();
        let mut entity_of: BTreeMap<TableRef, &str> = BTreeMap::new();
        for plan in candidates {
            let has_rows: bool = tx
                .query_one(&maskbus_pg::statements::has_rows(&plan.table), &[])
                .await
                .map_err(q(format!("looking into {}", plan.entity)))?
                .get(0);
            if !has_rows {
                empty.push(plan.table.clone());
                entity_of.insert(plan.table.clone(), &plan.entity);
            }
        }
        let lifted: Vec<Lifted> = bulk::liftable(self.db.target(), &*tx, &empty)
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
                bookkeeping::RECORD_LIFTED,
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
        Ok(entity_of.into_values().map(str::to_string).collect())
    }

    /// Empties tables this pass loaded in bulk (they were empty before it) and forgets their
    /// watermarks, in one transaction: their parent could not be synced, so they are left as
    /// they were, and the next pass loads them again.
    pub async fn unload(&self, plans: &[&EntityPlan]) -> Result<(), PgError> {
        if plans.is_empty() {
            return Ok(());
        }
        let tables: Vec<&TableRef> = plans.iter().map(|p| &p.table).collect();
        let entities: Vec<&str> = plans.iter().map(|p| p.entity.as_str()).collect();
        let mut client = self.db.client().await?;
        let q = |e: tokio_postgres::Error| {
            self.db
                .target()
                .query_error(format!("emptying {} again", entities.join(", ")), &e)
        };
        let tx = client.transaction().await.map_err(q)?;
        // Only a table maskbus owns is ever emptied.
        let owned = Owned::read(self.db.target(), &*tx).await?;
        for table in &tables {
            owned.refuse_unless_owned(self.db.target(), "emptying", table)?;
        }
        tx.batch_execute(&maskbus_pg::statements::truncate(&tables))
            .await
            .map_err(q)?;
        tx.execute(bookkeeping::FORGET_WATERMARKS, &[&entities])
            .await
            .map_err(q)?;
        tx.commit().await.map_err(q)
    }
}

#[cfg(test)]
mod tests {
    use super::super::pages::test_plan as plan;
    use super::*;

    fn names(plans: &[&EntityPlan]) -> Vec<String> {
        plans.iter().map(|p| p.entity.clone()).collect()
    }

    #[test]
    fn dependants_are_found_through_each_other() {
        let plans = vec![
            plan("customers", &[]),
            plan("accounts", &["customers"]),
            plan("cards", &["accounts"]),
            plan("transactions", &["accounts", "cards"]),
            plan("branches", &[]),
        ];
        let failed = BTreeSet::from(["s.accounts".to_string()]);
        assert_eq!(
            names(&dependants(&plans, &failed)),
            ["s.cards", "s.transactions"]
        );
        assert!(dependants(&plans, &BTreeSet::from(["s.branches".to_string()])).is_empty());
    }

    #[test]
    fn children_go_first_only_when_one_consumer_loads_every_table_in_bulk() {
        let mut plans = vec![plan("customers", &[]), plan("accounts", &["customers"])];
        let all: BTreeSet<String> = plans.iter().map(|p| p.entity.clone()).collect();
        assert!(children_first(&plans, &all, 1));
        assert!(!children_first(&plans, &all, 2), "workers share the tables");
        let one = BTreeSet::from(["s.customers".to_string()]);
        assert!(
            !children_first(&plans, &one, 1),
            "a table already holds rows"
        );
        plans[1].deferred = vec!["customers_id".into()];
        assert!(!children_first(&plans, &all, 1), "links are set later");
    }
}
