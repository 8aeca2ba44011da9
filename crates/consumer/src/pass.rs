//! One sync pass: every table in fill order, page by page up to one source snapshot, each page
//! written with its watermark; missing parents fetched by the columns their foreign key names;
//! tables of a deferrable cycle filled in one transaction; the deferred links and the sequences
//! after. A table that fails for good is reported, its dependants skipped, the rest synced.

use super::pages::{self, EntityPlan, Skipped, SyncState};
use super::writer::ApplyError;
use super::{Consumer, ConsumerError, PassReport};
use maskbus_protocol::{ReceivedPage, ReceivedReply, Request, Snapshot, VERSION};
use std::collections::BTreeSet;
use tokio::sync::watch;

/// The most key text one rows request carries (a key may be as long alone): escaped as JSON,
/// a request stays under the producer's body limit (8 MiB).
pub(super) const MAX_ROWS_REQUEST_KEY_BYTES: usize = 1 << 20;

/// `keys` in batches of at most `MAX_PAGE_ROWS` keys and [`MAX_ROWS_REQUEST_KEY_BYTES`] of
/// text (a batch holds at least one key).
fn key_batches(keys: Vec<Vec<String>>) -> Vec<Vec<Vec<String>>> {
    let mut batches = Vec::new();
    let mut batch: Vec<Vec<String>> = Vec::new();
    let mut bytes = 0;
    for key in keys {
        let size: usize = key.iter().map(|v| v.len() + 8).sum();
        if !batch.is_empty()
            && (batch.len() == maskbus_protocol::MAX_PAGE_ROWS as usize
                || bytes + size > MAX_ROWS_REQUEST_KEY_BYTES)
        {
            batches.push(std::mem::take(&mut batch));
            bytes = 0;
        }
        bytes += size;
        batch.push(key);
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    batches
}

impl Consumer {
    /// The rows of `parent` whose `columns` equal one of `keys`, asked of the producer (masked),
    /// in requests of at most [`MAX_ROWS_REQUEST_KEY_BYTES`] of key text, each answered in as
    /// many parts as its rows need; when an answer was cut short (rows too large to fit one),
    /// the keys not yet answered are asked again.
    pub(super) async fn parent_rows(
        &self,
        parent: &EntityPlan,
        columns: &[String],
        keys: Vec<Vec<String>>,
    ) -> Result<ReceivedPage, ConsumerError> {
        let mut merged: Option<ReceivedPage> = None;
        for batch in key_batches(keys) {
            let mut wanted = batch;
            // Each round answers at least one key, or stops.
            while !wanted.is_empty() {
                let (page, more) = self.rows_once(parent, columns, wanted.clone()).await?;
                let at: Vec<Option<usize>> = columns
                    .iter()
                    .map(|c| page.columns.iter().position(|p| p == c))
                    .collect();
                let got: BTreeSet<Vec<String>> = page
                    .rows
                    .iter()
                    .filter_map(|row| {
                        at.iter()
                            .map(|i| i.and_then(|i| row.get(i)).map(str::to_string))
                            .collect::<Option<Vec<String>>>()
                    })
                    .collect();
                let answered = page.rows.len();
                match &mut merged {
                    None => merged = Some(page),
                    Some(all) => all.rows.extend(page.rows),
                }
                if !more || answered == 0 {
                    break;
                }
                let before = wanted.len();
                wanted.retain(|k| !got.contains(k));
                if wanted.len() == before {
                    break; // keys printed another way than the source prints them: no progress
                }
            }
        }
        merged.ok_or_else(|| ConsumerError::BadReply {
            entity: parent.entity.clone(),
            reason: "expected a page".into(),
        })
    }

    /// One rows request, its parts merged into one page; and whether the producer left rows out.
    async fn rows_once(
        &self,
        parent: &EntityPlan,
        columns: &[String],
        keys: Vec<Vec<String>>,
    ) -> Result<(ReceivedPage, bool), ConsumerError> {
        let request = Request::Rows {
            v: VERSION,
            entity: parent.entity.clone(),
            columns: columns.to_vec(),
            keys,
        };
        let what = format!("rows of {}", parent.entity);
        let mut merged: Option<ReceivedPage> = None;
        let mut more = false;
        for reply in self.asker.ask_patiently(&request, &what).await? {
            let ReceivedReply::Page(page) = reply else {
                return Err(ConsumerError::BadReply {
                    entity: parent.entity.clone(),
                    reason: "expected a page".into(),
                });
            };
            more |= page.more;
            match &mut merged {
                None => merged = Some(page),
                Some(all) => all.rows.extend(page.rows),
            }
        }
        let page = merged.ok_or_else(|| ConsumerError::BadReply {
            entity: parent.entity.clone(),
            reason: "expected a page".into(),
        })?;
        Ok((page, more))
    }

    /// Applies a page, first fetching any parent rows the target lacks.
    pub(super) async fn apply_with_parents(
        &self,
        plans: &[EntityPlan],
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&SyncState>,
        report: &mut PassReport,
        depth: usize,
    ) -> Result<u64, ConsumerError> {
        match self.writer.apply(plan, page, state).await {
            Ok(n) => Ok(n),
            Err(ApplyError::Consumer(e)) => Err(e),
            Err(ApplyError::MissingParents(Some(constraint)))
                if plan.outside.iter().any(|fk| fk.name == constraint) =>
            {
                // A foreign key to a table the producer does not serve: no fetch can help.
                let parent = plan
                    .outside
                    .iter()
                    .find(|fk| fk.name == constraint)
                    .map_or_else(
                        || "a table outside the sync".to_string(),
                        |fk| fk.parent.to_string(),
                    );
                Err(ConsumerError::Unsupported {
                    entity: plan.entity.clone(),
                    reason: format!(
                        "foreign key {constraint} references {parent}, which the producer does not serve and the target lacks the rows of; add {parent} to the policy (maskbus policy check names these)"
                    ),
                })
            }
            Err(ApplyError::MissingParents(_)) if depth <= plans.len() + 1 => {
                for fk in &plan.parents {
                    let Some(parent_plan) = plans.iter().find(|p| p.table == fk.parent) else {
                        continue;
                    };
                    let positions: Option<Vec<usize>> = fk
                        .columns
                        .iter()
                        .map(|c| page.columns.iter().position(|p| p == c))
                        .collect();
                    let Some(positions) = positions else { continue };
                    let tuples: Vec<Vec<String>> = page
                        .rows
                        .iter()
                        .filter_map(|r| {
                            positions
                                .iter()
                                .map(|&i| r.get(i).map(String::from))
                                .collect()
                        })
                        .collect();
                    let lookup: Vec<(String, String)> = fk
                        .parent_columns
                        .iter()
                        .map(|c| {
                            (
                                c.clone(),
                                parent_plan.types.get(c).cloned().unwrap_or_default(),
                            )
                        })
                        .collect();
                    let missing = self.writer.missing(parent_plan, &lookup, &tuples).await?;
                    for chunk in missing.chunks(maskbus_protocol::MAX_PAGE_ROWS as usize) {
                        let parents = self
                            .parent_rows(parent_plan, &fk.parent_columns, chunk.to_vec())
                            .await?;
                        report.parents_fetched += parents.rows.len() as u64;
                        Box::pin(self.apply_with_parents(
                            plans,
                            parent_plan,
                            &parents,
                            None,
                            report,
                            depth + 1,
                        ))
                        .await?;
                    }
                }
                Box::pin(self.apply_with_parents(plans, plan, page, state, report, depth + 1)).await
            }
            Err(ApplyError::MissingParents(_)) => Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: format!(
                    "rows reference parent rows the producer could not supply (through {})",
                    plan.parents
                        .iter()
                        .map(|fk| format!("{} to {}", fk.name, fk.parent))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    /// Asks for one request's pages (unless they were prefetched) and applies them with the
    /// watermark they lead to. While the target writes them, the next request is already on its
    /// way to the producer; its replies are returned for the next call.
    async fn fetch_and_apply(
        &self,
        plans: &[EntityPlan],
        plan: &EntityPlan,
        request: &Request,
        prefetched: Option<Vec<ReceivedReply>>,
        state: SyncState,
        report: &mut PassReport,
    ) -> Result<(ReceivedPage, SyncState, Option<Vec<ReceivedReply>>), ConsumerError> {
        let what = format!("a page of {}", plan.entity);
        let replies = match prefetched {
            Some(replies) => replies,
            None => self.asker.ask_patiently(request, &what).await?,
        };
        let page = pages::merge_pages(&plan.entity, replies)?;
        let Some(until) = page.until.clone() else {
            return Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "a page reply without the snapshot that closes its window".into(),
            });
        };
        let next = pages::next_state(state, &page, &until.0);
        let next_request = pages::next_request(request, &page);
        let prefetch = async {
            match &next_request {
                Some(next) => self.asker.ask_patiently(next, &what).await.ok(),
                None => None,
            }
        };
        let (applied, next_replies) = tokio::join!(
            self.apply_with_parents(plans, plan, &page, Some(&next), report, 0),
            prefetch
        );
        applied?;
        Ok((page, next, next_replies))
    }

    /// Syncs one entity up to the pass's snapshot. Returns the rows moved.
    async fn sync_entity(
        &self,
        plans: &[EntityPlan],
        plan: &EntityPlan,
        mut state: SyncState,
        until: &mut Option<Snapshot>,
        stop: &watch::Receiver<bool>,
        report: &mut PassReport,
    ) -> Result<u64, ConsumerError> {
        let mut after = state.pass_until.as_ref().and(state.after_key.clone());
        let mut moved = 0u64;
        // The replies to the next request, asked for while this page was being written.
        let mut prefetched: Option<Vec<ReceivedReply>> = None;
        loop {
            if *stop.borrow() {
                return Err(ConsumerError::Stopped);
            }
            let request = Request::Page {
                v: VERSION,
                entity: plan.entity.clone(),
                since: state.synced_until.clone().map(Snapshot),
                until: until.clone(),
                after: after.clone(),
                limit: self.config.page_size,
                pages: Some(self.config.pages_per_request),
                subset: self.config.subset.clone(),
            };
            // The page and its watermark commit together; on a transient failure (a database
            // restarting) the same request is asked again, so nothing is skipped or doubled.
            let mut retry = maskbus_pg::Retry::transient();
            let (page, next_state) = loop {
                match self
                    .fetch_and_apply(
                        plans,
                        plan,
                        &request,
                        prefetched.take(),
                        state.clone(),
                        report,
                    )
                    .await
                {
                    Ok((page, next_state, next_replies)) => {
                        prefetched = next_replies;
                        break (page, next_state);
                    }
                    Err(e) if e.is_transient() && !self.writer.in_group().await => {
                        tracing::warn!(entity = %plan.entity, error = %e, "transient failure; retrying the page in {:?}", retry.next_pause());
                        if !retry.pause().await {
                            return Err(e);
                        }
                    }
                    Err(e) => return Err(e),
                }
            };
            *until = page.until.clone();
            state = next_state;
            moved += page.rows.len() as u64;
            // A merged page holds the replies of one request: parts 0..=part.
            let before = report.pages;
            report.pages += u64::from(page.part) + 1;
            if before / 100 != report.pages / 100 {
                tracing::info!(entity = %plan.entity, rows = moved, pages = report.pages, "syncing");
            }
            if !page.more {
                return Ok(moved);
            }
            after = page.next_after;
        }
    }

    /// Children first (see `load::children_first`), the tables that reference `failed` are in
    /// already: they are emptied again and their watermarks forgotten, so they end as they would
    /// have parents first (not synced) and no foreign key is left that cannot be rebuilt.
    /// Returns them, each with its reason.
    async fn unload_children(
        &self,
        plans: &[EntityPlan],
        failed: &EntityPlan,
        report: &mut PassReport,
    ) -> Result<Vec<Skipped>, ConsumerError> {
        let loaded: Vec<&EntityPlan> =
            super::load::dependants(plans, &BTreeSet::from([failed.entity.clone()]))
                .into_iter()
                .filter(|c| report.synced(&c.entity))
                .collect();
        self.writer.unload(&loaded).await?;
        report
            .rows
            .retain(|(e, _)| !loaded.iter().any(|c| c.entity == *e));
        Ok(loaded
            .into_iter()
            .map(|child| Skipped {
                entity: child.entity.clone(),
                reason: format!("its parent {} could not be synced", failed.entity),
            })
            .collect())
    }

    /// One pass: every entity, parents first, up to one snapshot; then the deferred links and
    /// the sequences. A table that fails for good is reported and its dependants are skipped;
    /// the others go on, unless `all_or_nothing` is set. Between pages it checks `stop`.
    pub async fn sync_pass(
        &self,
        stop: &watch::Receiver<bool>,
    ) -> Result<PassReport, ConsumerError> {
        let (plans, skipped) = self.plan().await?;
        // With several workers on one target, this one syncs its share of the tables only.
        let share = super::share::assign(&plans, self.config.workers);
        let me = self.config.worker.saturating_sub(1);
        let mine: Vec<bool> = share.iter().map(|&w| w == me).collect();
        let my_plans: Vec<&EntityPlan> = plans
            .iter()
            .zip(&mine)
            .filter_map(|(p, &m)| m.then_some(p))
            .collect();
        let my_entities: BTreeSet<String> = my_plans.iter().map(|p| p.entity.clone()).collect();
        let owned: Vec<EntityPlan> = my_plans.iter().map(|p| (*p).clone()).collect();
        let skipped = if me == 0 { skipped } else { Vec::new() };
        let states = self.states().await?;
        let mut in_bulk = BTreeSet::new();
        if self.config.bulk_load {
            let my_states = states
                .iter()
                .filter(|(e, _)| my_entities.contains(*e))
                .map(|(e, s)| (e.clone(), s.clone()))
                .collect();
            // Foreign keys to another worker's tables are lifted too: before they are rebuilt,
            // the parents the other worker's older snapshot lacks are fetched (see below).
            let synced: Vec<_> = plans.iter().map(|p| &p.table).collect();
            in_bulk = self
                .writer
                .lift_for_load(&super::load::never_synced(&owned, &my_states), &synced)
                .await?;
        }
        let children_first = super::load::children_first(&plans, &in_bulk, self.config.workers);
        let order: Vec<usize> = if children_first {
            (0..plans.len()).rev().collect()
        } else {
            (0..plans.len()).collect()
        };
        // Alone on the target, a table loaded in bulk gets its indexes (and its foreign keys, once
        // their parent is loaded too) back while the next tables load; a table of a cycle, or
        // with links to set, waits for the end of the pass.
        let early = (self.config.workers <= 1 && !in_bulk.is_empty())
            .then(|| super::rebuild::EarlyRebuild::start(self.writer.rebuilder()));
        // A pass cut short by a crash is resumed with its own closing snapshot, for every entity,
        // so parents and children stay within one window.
        let mut until: Option<Snapshot> = my_plans
            .iter()
            .find_map(|p| states.get(&p.entity).and_then(|s| s.pass_until.clone()))
            .map(Snapshot);
        let mut report = PassReport {
            resumed: until.is_some(),
            ..PassReport::default()
        };
        for s in &skipped {
            tracing::error!(entity = %s.entity, reason = %s.reason, "cannot sync this table");
        }
        let skipped_count = skipped.len();
        report.failed = skipped;
        if self.config.all_or_nothing && !report.failed.is_empty() {
            return Err(ConsumerError::Partial {
                tables: plans.len() + skipped_count,
                failed: report.failed,
            });
        }
        let mut failed: BTreeSet<String> = report.failed.iter().map(|s| s.entity.clone()).collect();
        // Tables filled together share one transaction, from the first of them in fill order to
        // the last; what lies between (their children) goes into it too.
        let group_span = |index: usize| {
            let members: Vec<usize> = (0..plans.len())
                .filter(|&i| plans[i].together == Some(index))
                .collect();
            (members.first().copied(), members.last().copied())
        };
        let mut open_group: Option<(usize, usize, usize)> = None; // (group, first, last)
        for position in order {
            let plan = &plans[position];
            if !mine[position] {
                continue;
            }
            if let (Some(group), None) = (plan.together, open_group) {
                if let (Some(first), Some(last)) = group_span(group) {
                    if first == position {
                        self.writer.begin_group().await?;
                        open_group = Some((group, first, last));
                    }
                }
            }
            if !states.contains_key(&plan.entity) {
                self.wait_for_other_workers_parents(&plans, &mine, plan, stop)
                    .await?;
            }
            let outcome = if let Some(parent) = plan
                .parents
                .iter()
                .find(|fk| failed.contains(&fk.parent.to_string()))
            {
                Err(format!("its parent {} could not be synced", parent.parent))
            } else {
                let state = states.get(&plan.entity).cloned().unwrap_or_default();
                match self
                    .sync_entity(&plans, plan, state, &mut until, stop, &mut report)
                    .await
                {
                    Ok(moved) => Ok(moved),
                    Err(e)
                        if e.is_transient()
                            || matches!(e, ConsumerError::Stopped)
                            || self.config.all_or_nothing =>
                    {
                        self.writer.abort_group().await;
                        if children_first && !e.is_transient() && self.config.all_or_nothing {
                            // All or nothing: the tables this pass loaded are emptied again
                            // (children first, some may lack their parents for good).
                            let loaded: Vec<&EntityPlan> =
                                plans.iter().filter(|p| report.synced(&p.entity)).collect();
                            self.writer.unload(&loaded).await?;
                        }
                        return Err(e);
                    }
                    Err(e) => Err(e.to_string()),
                }
            };
            match outcome {
                Ok(moved) => {
                    tracing::info!(entity = %plan.entity, rows = moved, "entity caught up");
                    report.rows.push((plan.entity.clone(), moved));
                    if let Some(early) = early.as_ref().filter(|_| {
                        in_bulk.contains(&plan.entity)
                            && plan.together.is_none()
                            && plan.deferred.is_empty()
                    }) {
                        early.table_loaded(&plan.table);
                    }
                }
                Err(reason) => {
                    tracing::error!(entity = %plan.entity, %reason, "this table failed; syncing the others");
                    failed.insert(plan.entity.clone());
                    report.failed.push(Skipped {
                        entity: plan.entity.clone(),
                        reason,
                    });
                    if children_first {
                        for child in self.unload_children(&plans, plan, &mut report).await? {
                            failed.insert(child.entity.clone());
                            report.failed.push(child);
                        }
                    }
                }
            }
            let Some((group, first, last)) = open_group else {
                continue;
            };
            let group_failed = plans[first..=position]
                .iter()
                .any(|p| failed.contains(&p.entity));
            if position == last || group_failed {
                let committed = if group_failed {
                    self.writer.abort_group().await;
                    Err("a table filled in the same transaction failed".to_string())
                } else {
                    match self.writer.commit_group().await {
                        Ok(()) => Ok(()),
                        Err(e) if e.is_transient() => return Err(e.into()),
                        Err(e) => Err(e.to_string()),
                    }
                };
                if let Err(reason) = committed {
                    // Everything since the group's BEGIN was rolled back: say so for each table.
                    for member in &plans[first..=position] {
                        report.rows.retain(|(e, _)| *e != member.entity);
                        if failed.insert(member.entity.clone()) {
                            report.failed.push(Skipped {
                                entity: member.entity.clone(),
                                reason: format!("rolled back with the tables of its cycle (group {group}): {reason}"),
                            });
                        }
                    }
                }
                open_group = None;
            }
        }
        let tables = my_plans.len() + skipped_count;
        for plan in my_plans.iter().filter(|p| !p.deferred.is_empty()) {
            report.links_set += self.writer.set_links(plan).await?;
        }
        self.writer.move_sequences(&owned).await?;
        if self.config.workers > 1 {
            self.fetch_parents_of_orphans(&plans, &my_entities, &mut report)
                .await?;
        }
        // What a load lifted (in this pass, or in one cut short before it) is rebuilt now; with
        // several workers, each rebuilds what belongs to its tables.
        let mut early_rebuilt = 0;
        if let Some(early) = early {
            early_rebuilt = early.finish().await;
        }
        let (rebuilt, not_rebuilt) = self
            .writer
            .rebuilder()
            .restore_lifted((self.config.workers > 1).then_some(&my_entities))
            .await?;
        report.rebuilt = early_rebuilt + rebuilt;
        report.until = until.map(|s| s.0);
        report.failed.extend(not_rebuilt);
        if !report.failed.is_empty() {
            return Err(ConsumerError::Partial {
                tables,
                failed: report.failed,
            });
        }
        Ok(report)
    }
}
