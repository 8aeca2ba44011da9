//! Which consumer worker syncs which table, when several share one target.
//!
//! Every worker computes the same answer from the same plan (the producer's entity list and the
//! target's catalog), so they never need to talk: each entity's watermark is written by exactly
//! one worker, and stays exact. Tables that must be filled by one hand stay together: the tables
//! of a cycle filled in one transaction, and a table with the table its deferred links point to
//! (its links are set at the end of the worker's pass). Everything else is dealt out in fill
//! order, unit by unit, round robin. Before a table's first load its worker waits while a
//! parent that another worker loads is making progress; a foreign key between two workers'
//! tables is lifted by the child's worker like any other, and before it is rebuilt the parent
//! rows the child's (later) snapshot references and the target lacks are fetched from the
//! producer (`fetch_parents_of_orphans`, below).

use super::pages::EntityPlan;
use super::parents::Parents;
use super::rebuild::Rebuilder;
use super::target_db::TargetDb;
use super::ConsumerError;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::watch;

/// For each plan, in order, the worker (0-based, below `workers`) that syncs it.
pub fn assign(plans: &[EntityPlan], workers: u32) -> Vec<u32> {
    let workers = workers.max(1);
    // Union-find over plan indexes.
    let mut parent: Vec<usize> = (0..plans.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let index: BTreeMap<&str, usize> = plans
        .iter()
        .enumerate()
        .map(|(i, p)| (p.entity.as_str(), i))
        .collect();
    let mut union = |a: usize, b: usize| {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    };
    let mut group_first: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, plan) in plans.iter().enumerate() {
        if let Some(group) = plan.together {
            let first = *group_first.entry(group).or_insert(i);
            union(first, i);
        }
        for fk in &plan.parents {
            if fk.columns.iter().any(|c| plan.deferred.contains(c)) {
                if let Some(&j) = index.get(fk.parent.to_string().as_str()) {
                    union(i, j);
                }
            }
        }
    }
    // Units in fill order (by their first table), dealt round robin.
    let mut unit_worker: BTreeMap<usize, u32> = BTreeMap::new();
    let mut next = 0u32;
    (0..plans.len())
        .map(|i| {
            let unit = root(&mut parent, i);
            *unit_worker.entry(unit).or_insert_with(|| {
                let w = next % workers;
                next += 1;
                w
            })
        })
        .collect()
}

/// With several workers, a child table's rows come from its worker's snapshot and its parents'
/// from another worker's, possibly older: before a lifted foreign key between them is rebuilt,
/// the parent rows that child rows reference and the target lacks are fetched from the
/// producer (by the columns the key references) and written. A parent the source no longer has
/// is left to the rebuild, which then names the key. Returns the parent rows fetched.
pub async fn fetch_parents_of_orphans(
    db: &TargetDb,
    parents: &Parents<'_>,
    mine: &BTreeSet<String>,
) -> Result<u64, ConsumerError> {
    let batch = maskbus_protocol::MAX_PAGE_ROWS as usize;
    let mut fetched = 0;
    for (entity, object) in Rebuilder::new(db).lifted().await? {
        let Some(fk) = object.foreign_key else {
            continue;
        };
        let Some(parent_plan) = parents.plan_of(&fk.parent) else {
            continue;
        };
        if !mine.contains(&entity) {
            continue;
        }
        // Bounded: each round writes the parents it asked for, or stops.
        for _ in 0..100_000 {
            let missing = db.orphans(&fk, batch as i64).await?;
            if missing.is_empty() {
                break;
            }
            let asked = missing.len();
            let rows = parents
                .rows(parent_plan, &fk.parent_columns, missing)
                .await?;
            fetched += rows.rows.len() as u64;
            fetched += parents
                .apply(parent_plan, &rows, None)
                .await?
                .parents_fetched;
            if rows.rows.len() < asked {
                break;
            }
        }
    }
    Ok(fetched)
}

/// Before a table's first load, waits while a parent that another worker loads is still being
/// loaded and making progress (its watermark moved within `patience`; one that has not started
/// is given that long to start). Loading the child first would be correct, but every row whose
/// parent is not there yet costs a fetch. A stalled or failed parent stops the wait: the child
/// then fetches what it needs, or fails by name.
pub async fn wait_for_parents(
    db: &TargetDb,
    plans: &[EntityPlan],
    mine: &[bool],
    plan: &EntityPlan,
    stop: &watch::Receiver<bool>,
    patience: Duration,
) -> Result<(), ConsumerError> {
    use super::load::ParentProgress;
    let patience = patience.as_secs_f64();
    for fk in &plan.parents {
        let Some(position) = plans.iter().position(|p| p.table == fk.parent) else {
            continue;
        };
        if mine[position] || fk.parent == plan.table {
            continue;
        }
        let parent = &plans[position].entity;
        let started = std::time::Instant::now();
        let mut told = false;
        loop {
            if *stop.borrow() {
                return Err(ConsumerError::Stopped);
            }
            let waiting = match db.progress(parent).await? {
                ParentProgress::Loaded => false,
                ParentProgress::Loading(idle) => idle < patience,
                ParentProgress::NotStarted => started.elapsed().as_secs_f64() < patience,
            };
            if !waiting {
                break;
            }
            if !told {
                tracing::info!(entity = %plan.entity, %parent, "waiting for the worker that loads its parent");
                told = true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::{test_link as link, test_plan};

    fn plan(name: &str) -> EntityPlan {
        test_plan(name, &[])
    }

    #[test]
    fn one_worker_takes_everything_and_tables_are_dealt_round_robin() {
        let plans: Vec<EntityPlan> = ["a", "b", "c", "d", "e"].map(plan).into();
        assert_eq!(assign(&plans, 1), vec![0, 0, 0, 0, 0]);
        assert_eq!(assign(&plans, 2), vec![0, 1, 0, 1, 0]);
        assert_eq!(assign(&plans, 3), vec![0, 1, 2, 0, 1]);
    }

    #[test]
    fn a_cycle_stays_with_one_worker() {
        let mut plans: Vec<EntityPlan> = ["a", "b", "c", "d"].map(plan).into();
        // b <-> d closed by a deferred link of d; a and c are in a NOT NULL deferrable group.
        plans[1].parents.push(link("b", "d_id", "d"));
        plans[3].parents.push(link("d", "b_id", "b"));
        plans[3].deferred.push("b_id".into());
        plans[0].together = Some(7);
        plans[2].together = Some(7);
        let workers = assign(&plans, 2);
        assert_eq!(workers[1], workers[3]);
        assert_eq!(workers[0], workers[2]);
        assert_ne!(workers[0], workers[1], "two units, two workers");
    }
}
