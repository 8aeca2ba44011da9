//! One sync pass ([`Pass`]): every table in fill order, page by page up to one source snapshot,
//! each page written with its watermark; missing parents fetched by the columns their foreign
//! key names; tables of a deferrable cycle filled in one transaction; the deferred links and the
//! sequences after. A table that fails for good is reported, its dependants skipped, the rest
//! synced.

use super::client::Asker;
use super::load::BulkLoad;
use super::pages::{self, EntityPlan, Progress, RangeState, Skipped, SyncState};
use super::parents::Parents;
use super::target_db::TargetDb;
use super::writer::PageWriter;
use super::{ConsumerError, PassReport};
use maskbus_config::ConsumerConfig;
use maskbus_protocol::{ReceivedPage, ReceivedReply, Request, Snapshot, VERSION};
use std::collections::{BTreeMap, BTreeSet};
use tokio::sync::watch;

/// The tables filled together that are open: their shared transaction began at `first`.
#[derive(Clone, Copy)]
struct OpenGroup {
    group: usize,
    first: usize,
    last: usize,
}

/// What one page stream moved in this run, and the window its pages named.
#[derive(Default)]
struct Moved {
    rows: u64,
    pages: u64,
    parents: u64,
    until: Option<Snapshot>,
    /// The next entity's first request, asked for while this stream's last page was written,
    /// with its replies.
    carried: Option<Asked>,
}

/// A request asked for ahead of its turn, with its replies: used only for an equal request.
type Asked = (Request, Vec<ReceivedReply>);

/// The entity synced after the one in hand, when its turn begins with a plain page request
/// (not in key ranges, not in a group, no parent that another worker loads): that request is
/// asked for while the one in hand writes its last page, so the producer reads the next table
/// (or computes a subset's closure) while the target writes.
#[derive(Clone)]
struct Upcoming {
    plan: EntityPlan,
    state: SyncState,
}

/// One pass of one worker over the tables the producer serves and the target can take.
pub struct Pass<'a> {
    config: &'a ConsumerConfig,
    asker: &'a Asker,
    db: &'a TargetDb,
    stop: &'a watch::Receiver<bool>,
    writer: PageWriter<'a>,
    /// Every entity of the sync, in fill order, and whether this worker syncs it.
    plans: Vec<EntityPlan>,
    mine: Vec<bool>,
    /// Every entity's watermark as the pass began.
    states: BTreeMap<String, SyncState>,
    /// The snapshot that closes the pass (once the first page has named it).
    until: Option<Snapshot>,
    /// Entities that failed (or whose parent did): their dependants are skipped.
    failed: BTreeSet<String>,
    /// The entity after the one in hand, whose first request may be asked ahead.
    upcoming: Option<Upcoming>,
    /// Its first request and the replies, when they were asked ahead.
    carried: Option<Asked>,
    report: PassReport,
}

impl<'a> Pass<'a> {
    pub fn new(
        config: &'a ConsumerConfig,
        asker: &'a Asker,
        db: &'a TargetDb,
        stop: &'a watch::Receiver<bool>,
    ) -> Self {
        Self {
            config,
            asker,
            db,
            stop,
            writer: PageWriter::new(db),
            plans: Vec::new(),
            mine: Vec::new(),
            states: BTreeMap::new(),
            until: None,
            failed: BTreeSet::new(),
            upcoming: None,
            carried: None,
            report: PassReport::default(),
        }
    }

    fn parents(&self) -> Parents<'_> {
        Parents::new(self.asker, &self.writer, &self.plans)
    }

    fn my_plans(&self) -> impl Iterator<Item = &EntityPlan> {
        self.plans
            .iter()
            .zip(&self.mine)
            .filter_map(|(p, &m)| m.then_some(p))
    }

    /// Asks for one request's pages (unless they were prefetched for this very request) and
    /// applies them with the progress they lead to. While the target writes them, the next
    /// request is already on its way to the producer: the stream's next, or when this was its
    /// last page and `ahead`, the upcoming entity's first. Its replies are returned with it for
    /// the next call, with the parents fetched.
    async fn fetch_and_apply(
        &self,
        plan: &EntityPlan,
        request: &Request,
        prefetched: Option<Asked>,
        progress: Progress,
        ahead: bool,
    ) -> Result<(ReceivedPage, Progress, Option<Asked>, u64), ConsumerError> {
        let what = format!("a page of {}", plan.entity);
        let replies = match prefetched.filter(|(asked, _)| asked == request) {
            Some((_, replies)) => replies,
            None => self.asker.ask_patiently(request, &what).await?,
        };
        let page = pages::merge_pages(&plan.entity, replies)?;
        let Some(until) = page.until.clone() else {
            return Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "a page reply without the snapshot that closes its window".into(),
            });
        };
        let next = progress.after(&page, &until.0);
        let next_request = pages::next_request(request, &page).or_else(|| {
            let upcoming = self
                .upcoming
                .as_ref()
                .filter(|_| ahead && !*self.stop.borrow())?;
            Some(self.first_request(&upcoming.plan, &upcoming.state, Some(until.clone())))
        });
        let prefetch = async {
            let next = next_request?;
            let replies = self.asker.ask_patiently(&next, &what).await.ok()?;
            Some((next, replies))
        };
        let parents = self.parents();
        let (applied, next_replies) =
            tokio::join!(parents.apply(plan, &page, Some(&next)), prefetch);
        let parents_fetched = applied?.parents_fetched;
        Ok((page, next, next_replies, parents_fetched))
    }

    /// [`Pass::fetch_and_apply`], asked again after a transient failure. The page and its
    /// progress commit together; on a transient failure (a database restarting) the same
    /// request is asked again, so nothing is skipped or doubled. Returns the page, the progress
    /// it led to and the parents fetched; `prefetched` holds the next request with its replies.
    async fn next_page(
        &self,
        plan: &EntityPlan,
        request: &Request,
        prefetched: &mut Option<Asked>,
        progress: &Progress,
        ahead: bool,
    ) -> Result<(ReceivedPage, Progress, u64), ConsumerError> {
        let mut retry = maskbus_pg::Retry::transient();
        loop {
            match self
                .fetch_and_apply(plan, request, prefetched.take(), progress.clone(), ahead)
                .await
            {
                Ok((page, next, next_replies, parents)) => {
                    *prefetched = next_replies;
                    return Ok((page, next, parents));
                }
                Err(e) if e.is_transient() && !self.writer.in_group().await => {
                    tracing::warn!(entity = %plan.entity, error = %e, "transient failure; retrying the page in {:?}", retry.next_pause());
                    if !retry.pause().await {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Syncs one entity up to the pass's snapshot: in key ranges side by side when it is large
    /// and never synced, else in one. Returns the rows moved.
    async fn sync_entity(
        &mut self,
        plan: &EntityPlan,
        state: SyncState,
    ) -> Result<u64, ConsumerError> {
        let carried = self.carried.take();
        if plan.key.is_keyless() {
            return self.sync_keyless(plan).await;
        }
        if let Some(moved) = self.sync_in_ranges(plan, &state).await? {
            return Ok(moved);
        }
        let request = self.first_request(plan, &state, self.until.clone());
        let mut moved = Moved {
            carried,
            ..Moved::default()
        };
        let outcome = self
            .read_stream(plan, request, Progress::Entity(state), None, &mut moved)
            .await;
        // The window a first page named closes the pass, for every entity, even when a later
        // page of this one failed.
        if moved.until.is_some() {
            self.until = moved.until.clone();
        }
        self.carried = moved.carried.take();
        self.report.pages += moved.pages;
        self.report.parents_fetched += moved.parents;
        outcome.map(|()| moved.rows)
    }

    /// Syncs a table without a usable key whole, as a multiset ([`crate::keyless`]): every
    /// masked row of the pass's window read, and only the rows whose count differs written.
    /// Returns the rows read.
    async fn sync_keyless(&mut self, plan: &EntityPlan) -> Result<u64, ConsumerError> {
        if *self.stop.borrow() {
            return Err(ConsumerError::Stopped);
        }
        let fetch = |until: Option<Snapshot>| {
            super::keyless::WholeFetch::new(
                self.asker,
                plan,
                until,
                self.config.page_size,
                self.config.pages_per_request,
                self.config.subset.clone(),
            )
        };
        let mut whole = fetch(self.until.clone());
        let outcome = self
            .writer
            .converge_keyless(plan, &mut whole, true, true)
            .await;
        self.report.pages += whole.pages();
        let set = match outcome {
            // A row references a parent the target lacks: in a subset, a parent that joined
            // it without changing (so no delta brought it). The window is read again (its
            // snapshot named), its parents asked for by the columns the rows reference, as for
            // a keyed page, and the table made equal again.
            Err(ConsumerError::Pg(e))
                if e.sqlstate()
                    == Some(tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION.code()) =>
            {
                let until = Some(whole.until()?);
                let mut applied = super::parents::Applied::default();
                let mut again = fetch(until.clone());
                while let Some(page) = again.next(plan).await? {
                    if !page.rows.is_empty() {
                        self.parents().supply(plan, &page, &mut applied, 0).await?;
                    }
                }
                self.report.parents_fetched += applied.parents_fetched;
                whole = fetch(until);
                let set = self
                    .writer
                    .converge_keyless(plan, &mut whole, true, true)
                    .await?;
                self.report.pages += again.pages() + whole.pages();
                set
            }
            outcome => outcome?,
        };
        self.until = Some(whole.until()?);
        if set.deleted + set.inserted > 0 {
            tracing::info!(entity = %plan.entity, deleted = set.deleted, inserted = set.inserted, "keyless table made equal to the source's rows");
        }
        Ok(set.source_rows)
    }

    /// The first request of `plan`'s stream in one range, from its watermark `state`, in the
    /// pass's window `until` (none before the first page has named it).
    fn first_request(
        &self,
        plan: &EntityPlan,
        state: &SyncState,
        until: Option<Snapshot>,
    ) -> Request {
        Request::Page {
            v: VERSION,
            entity: plan.entity.clone(),
            since: state.synced_until.clone().map(Snapshot),
            until,
            after: state.pass_until.as_ref().and(state.after_key.clone()),
            after_tag: state
                .pass_until
                .as_ref()
                .and(state.after_key.as_ref())
                .and(state.after_tag.clone()),
            through: None,
            through_tag: None,
            limit: self.config.page_size,
            pages: Some(self.config.pages_per_request),
            subset: self.config.subset.clone(),
        }
    }

    /// The entity after `position` in `order` that this worker syncs, when its turn begins
    /// with [`Self::first_request`]: never in key ranges (a subset, a delta, or one stream
    /// configured), not filled in a group, and no parent of it another worker loads or that
    /// failed (its turn would wait, or skip it).
    fn upcoming_after(&self, order: &[usize], position: usize) -> Option<Upcoming> {
        let at = order.iter().position(|&p| p == position)?;
        self.upcoming_in(&order[at + 1..])
    }

    /// The first entity of `positions` this worker syncs, as [`Self::upcoming_after`] takes it.
    fn upcoming_in(&self, positions: &[usize]) -> Option<Upcoming> {
        let &next = positions.iter().find(|&&p| self.mine[p])?;
        let plan = &self.plans[next];
        let state = self.states.get(&plan.entity).cloned().unwrap_or_default();
        let in_one_range =
            self.config.streams < 2 || state.synced_until.is_some() || self.config.subset.is_some();
        let waits = plan.parents.iter().any(|fk| {
            self.failed.contains(&fk.parent.to_string())
                || self
                    .plans
                    .iter()
                    .position(|p| p.table == fk.parent)
                    .is_some_and(|p| !self.mine[p])
        });
        // A keyless table is read whole, not by its first request (see `sync_keyless`).
        let keyed = !plan.key.is_keyless();
        (in_one_range && keyed && plan.together.is_none() && !waits).then(|| Upcoming {
            plan: plan.clone(),
            state,
        })
    }

    /// Reads one page stream (an entity, or one range of it) from `request` on, request by
    /// request until the producer says no more, each page written with the progress it leads
    /// to. `moved` counts what went in, and holds the window the pages named, also when a page
    /// fails. The stream of an entity in one range (`range` none) asks for the upcoming
    /// entity's first request while its last page is written, and leaves it in `moved`; it
    /// starts from the one `moved` carries, when that is its own first.
    async fn read_stream(
        &self,
        plan: &EntityPlan,
        mut request: Request,
        mut progress: Progress,
        range: Option<i32>,
        moved: &mut Moved,
    ) -> Result<(), ConsumerError> {
        // The next request with its replies, asked for while this page was being written.
        let mut prefetched: Option<Asked> = moved.carried.take();
        let ahead = range.is_none();
        loop {
            if *self.stop.borrow() {
                return Err(ConsumerError::Stopped);
            }
            let (page, next, parents) = self
                .next_page(plan, &request, &mut prefetched, &progress, ahead)
                .await?;
            progress = next;
            // A merged page holds the replies of one request: parts 0..=part.
            let before = moved.pages;
            moved.rows += page.rows.len() as u64;
            moved.pages += u64::from(page.part) + 1;
            moved.parents += parents;
            moved.until = page.until.clone();
            if before / 100 != moved.pages / 100 {
                tracing::info!(entity = %plan.entity, range, rows = moved.rows, pages = moved.pages, "syncing");
            }
            match pages::next_request(&request, &page) {
                Some(next) => request = next,
                None => {
                    moved.carried = prefetched;
                    return Ok(());
                }
            }
        }
    }

    /// The first pass of a large entity, in key ranges read and written side by side
    /// (`streams`), each page with where its range stands; the ranges of a pass cut short go on
    /// from there. `None` when the entity is read in one range: it was synced before (a delta
    /// is small), it is a subset's or filled with other tables in one transaction, a pass in
    /// one range is under way, or the producer does not split it (too small, or an older
    /// producer).
    async fn sync_in_ranges(
        &mut self,
        plan: &EntityPlan,
        state: &SyncState,
    ) -> Result<Option<u64>, ConsumerError> {
        if self.config.streams < 2
            || state.synced_until.is_some()
            || self.config.subset.is_some()
            || plan.together.is_some()
            || self.writer.in_group().await
        {
            return Ok(None);
        }
        let mut ranges = self.db.ranges(&plan.entity).await?;
        let window = self.until.as_ref().map(|u| u.0.as_str());
        if ranges
            .first()
            .is_some_and(|r| Some(r.until.as_str()) != window)
        {
            // Recorded for another window than the pass's (which cannot be): read in one.
            return Ok(None);
        }
        if ranges.is_empty() {
            if state.pass_until.is_some() && state.after_key.is_some() {
                return Ok(None);
            }
            let request = Request::Ranges {
                v: VERSION,
                entity: plan.entity.clone(),
                until: self.until.clone(),
                streams: self.config.streams,
                min_rows: self.config.range_rows,
            };
            let what = format!("the ranges of {}", plan.entity);
            let reply = match self.asker.ask_patiently(&request, &what).await {
                Ok(replies) => replies.into_iter().next(),
                Err(e) if e.is_transient() => return Err(e),
                Err(e) => {
                    tracing::info!(entity = %plan.entity, error = %e, "the producer did not split it into ranges; read in one");
                    return Ok(None);
                }
            };
            let Some(ReceivedReply::Ranges(reply)) = reply else {
                return Ok(None);
            };
            let width = plan.key.columns.len();
            // Each bound has its tag (over a masked key) or none has one (a kept key).
            let tags_fit = reply.bound_tags.is_empty()
                || (reply.bound_tags.len() == reply.bounds.len()
                    && reply
                        .bound_tags
                        .iter()
                        .all(|t| maskbus_protocol::is_cursor_tag(t)));
            if reply.entity != plan.entity
                || reply.bounds.len() >= maskbus_protocol::MAX_STREAMS as usize
                || reply.bounds.iter().any(|b| b.len() != width)
                || !tags_fit
            {
                return Err(ConsumerError::BadReply {
                    entity: plan.entity.clone(),
                    reason: "the ranges reply does not fit the entity's key".into(),
                });
            }
            if reply.bounds.is_empty() {
                return Ok(None);
            }
            ranges = pages::RangeState::split(
                &plan.entity,
                &reply.until.0,
                &reply.bounds,
                &reply.bound_tags,
            );
            self.db.begin_ranges(&ranges).await?;
            tracing::info!(entity = %plan.entity, ranges = ranges.len(), rows = reply.rows, "reading in ranges side by side");
        }
        let Some(until) = ranges.first().map(|r| Snapshot(r.until.clone())) else {
            return Ok(None);
        };
        self.until = Some(until.clone());
        let this = &*self;
        let outcomes = futures_util::future::join_all(
            ranges
                .iter()
                .filter(|r| !r.done)
                .map(|r| this.sync_range(plan, r.clone(), &until)),
        )
        .await;
        let mut moved = 0;
        let mut first_error = None;
        for outcome in outcomes {
            match outcome {
                Ok(range) => {
                    moved += range.rows;
                    self.report.pages += range.pages;
                    self.report.parents_fetched += range.parents;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        // Every range is in: the rows of earlier runs too, as each range recorded them.
        let rows_synced = self
            .db
            .ranges(&plan.entity)
            .await?
            .iter()
            .map(|r| r.rows_synced)
            .sum();
        let synced = SyncState {
            synced_until: Some(until.0),
            pass_until: None,
            after_key: None,
            after_tag: None,
            rows_synced,
        };
        self.db.finish_ranges(&plan.entity, &synced).await?;
        Ok(Some(moved))
    }

    /// One range of an entity's first pass, page by page from where it stands to its end.
    async fn sync_range(
        &self,
        plan: &EntityPlan,
        range: RangeState,
        until: &Snapshot,
    ) -> Result<Moved, ConsumerError> {
        let request = Request::Page {
            v: VERSION,
            entity: plan.entity.clone(),
            since: None,
            until: Some(until.clone()),
            after: range.after_key.clone(),
            after_tag: range.after_tag.clone(),
            through: range.through.clone(),
            through_tag: range.through_tag.clone(),
            limit: self.config.page_size,
            pages: Some(self.config.pages_per_request),
            subset: None,
        };
        let range_no = range.range_no;
        let mut moved = Moved::default();
        self.read_stream(
            plan,
            request,
            Progress::Range(range),
            Some(range_no),
            &mut moved,
        )
        .await?;
        tracing::debug!(entity = %plan.entity, range = range_no, rows = moved.rows, "range done");
        Ok(moved)
    }

    /// Children first (see `load::children_first`), the tables that reference `failed` are in
    /// already: they are emptied again and their watermarks forgotten, so they end as they would
    /// have parents first (not synced) and no foreign key is left that cannot be rebuilt.
    async fn unload_children(
        &mut self,
        load: &BulkLoad<'_>,
        failed: &EntityPlan,
    ) -> Result<(), ConsumerError> {
        let loaded: Vec<&EntityPlan> =
            super::load::dependants(&self.plans, &BTreeSet::from([failed.entity.clone()]))
                .into_iter()
                .filter(|c| self.report.synced(&c.entity))
                .collect();
        load.unload(&loaded).await?;
        for child in loaded {
            self.report.rows.retain(|(e, _)| *e != child.entity);
            self.failed.insert(child.entity.clone());
            self.report.failed.push(Skipped {
                entity: child.entity.clone(),
                reason: format!("its parent {} could not be synced", failed.entity),
            });
        }
        Ok(())
    }

    /// Records that `plan` failed for good with `reason`.
    fn fail(&mut self, plan: &EntityPlan, reason: String) {
        tracing::error!(entity = %plan.entity, %reason, "this table failed; syncing the others");
        self.failed.insert(plan.entity.clone());
        self.report.failed.push(Skipped {
            entity: plan.entity.clone(),
            reason,
        });
    }

    /// Tables filled together share one transaction, from the first of them in fill order to
    /// the last; what lies between (their children) goes into it too. The span of `group`.
    fn group_span(&self, group: usize) -> Option<(usize, usize)> {
        let members: Vec<usize> = (0..self.plans.len())
            .filter(|&i| self.plans[i].together == Some(group))
            .collect();
        Some((*members.first()?, *members.last()?))
    }

    /// After the table at `position`: commits the open group at its last table, or rolls it
    /// back when one of its tables failed (and says so for each of them).
    async fn close_group(
        &mut self,
        open: OpenGroup,
        position: usize,
    ) -> Result<bool, ConsumerError> {
        let OpenGroup { group, first, last } = open;
        let group_failed = self.plans[first..=position]
            .iter()
            .any(|p| self.failed.contains(&p.entity));
        if position != last && !group_failed {
            return Ok(false);
        }
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
            for member in &self.plans[first..=position] {
                self.report.rows.retain(|(e, _)| *e != member.entity);
                if self.failed.insert(member.entity.clone()) {
                    self.report.failed.push(Skipped {
                        entity: member.entity.clone(),
                        reason: format!(
                            "rolled back with the tables of its cycle (group {group}): {reason}"
                        ),
                    });
                }
            }
        }
        Ok(true)
    }

    /// Runs the pass: every entity, parents first, up to one snapshot; then the deferred links
    /// and the sequences. A table that fails for good is reported and its dependants are
    /// skipped; the others go on, unless `all_or_nothing` is set. Between pages it checks
    /// `stop`.
    pub async fn run(
        self,
        plans: Vec<EntityPlan>,
        skipped: Vec<Skipped>,
    ) -> Result<PassReport, ConsumerError> {
        let (report, tables) = self.run_reported(plans, skipped).await?;
        if !report.failed.is_empty() {
            return Err(ConsumerError::Partial {
                tables,
                failed: report.failed,
            });
        }
        Ok(report)
    }

    /// [`Pass::run`], the tables that failed in the report (`failed`) rather than an error, with
    /// the number of tables the pass covered: the follower copies the tables that can be and
    /// goes on. Unless `all_or_nothing` (then a failure is [`ConsumerError::Partial`]).
    pub async fn run_reported(
        mut self,
        plans: Vec<EntityPlan>,
        skipped: Vec<Skipped>,
    ) -> Result<(PassReport, usize), ConsumerError> {
        // With several workers on one target, this one syncs its share of the tables only.
        let share = super::workers::assign(&plans, self.config.workers);
        let me = self.config.worker.saturating_sub(1);
        self.mine = share.iter().map(|&w| w == me).collect();
        self.plans = plans;
        let my_entities: BTreeSet<String> = self.my_plans().map(|p| p.entity.clone()).collect();
        let owned: Vec<EntityPlan> = self.my_plans().cloned().collect();
        let skipped = if me == 0 { skipped } else { Vec::new() };
        self.states = self.db.states().await?;
        // A pass cut short by a crash is resumed with its own closing snapshot, for every entity,
        // so parents and children stay within one window.
        let resumed = self
            .my_plans()
            .find_map(|p| {
                self.states
                    .get(&p.entity)
                    .and_then(|s| s.pass_until.clone())
            })
            .map(Snapshot);
        self.until = resumed;
        self.report.resumed = self.until.is_some();
        for s in &skipped {
            tracing::error!(entity = %s.entity, reason = %s.reason, "cannot sync this table");
        }
        let skipped_count = skipped.len();
        // A table skipped for good keeps its dependants out, unless it was synced before (its
        // schema fails closed after a migration, say): its rows up to then are in the target,
        // and a child row that needs a newer one fails by name when the parent is refused.
        self.failed = skipped
            .iter()
            .filter(|s| !self.states.contains_key(&s.entity))
            .map(|s| s.entity.clone())
            .collect();
        let order_of = |children_first: bool| -> Vec<usize> {
            if children_first {
                (0..self.plans.len()).rev().collect()
            } else {
                (0..self.plans.len()).collect()
            }
        };
        let (load, carried) = if self.config.bulk_load {
            let my_states = self
                .states
                .iter()
                .filter(|(e, _)| my_entities.contains(*e))
                .map(|(e, s)| (e.clone(), s.clone()))
                .collect();
            // Foreign keys to another worker's tables are lifted too: before they are rebuilt,
            // the parents the other worker's older snapshot lacks are fetched (see below).
            let candidates = super::load::never_synced(&owned, &my_states);
            // The first request is asked for while the target lifts: in the order of a load of
            // every table never synced (the usual case: those are the empty ones); when the
            // lift finds otherwise, the replies go unused.
            let guessed: BTreeSet<String> = candidates.iter().map(|p| p.entity.clone()).collect();
            let guessed = super::load::children_first(&self.plans, &guessed, self.config.workers);
            let refused = self.config.all_or_nothing && !skipped.is_empty();
            let first = self.upcoming_in(&order_of(guessed)).filter(|_| !refused);
            let until = self.until.clone();
            let ask_first = async {
                let first = first?;
                let request = self.first_request(&first.plan, &first.state, until);
                let what = format!("a page of {}", first.plan.entity);
                let replies = self.asker.ask_patiently(&request, &what).await.ok()?;
                Some((request, replies))
            };
            let lift = BulkLoad::lift(self.db, &self.plans, &candidates, self.config.workers);
            let (load, carried) = tokio::join!(lift, ask_first);
            (load?, carried)
        } else {
            (BulkLoad::off(self.db), None)
        };
        self.carried = carried;
        let order = order_of(load.children_first());
        self.report.failed = skipped;
        if self.config.all_or_nothing && !self.report.failed.is_empty() {
            return Err(ConsumerError::Partial {
                tables: self.plans.len() + skipped_count,
                failed: self.report.failed,
            });
        }
        let mut open: Option<OpenGroup> = None;
        for &position in &order {
            if !self.mine[position] {
                continue;
            }
            let plan = self.plans[position].clone();
            if let (Some(group), None) = (plan.together, open) {
                if let Some((first, last)) = self.group_span(group) {
                    if first == position {
                        self.writer.begin_group().await?;
                        open = Some(OpenGroup { group, first, last });
                    }
                }
            }
            if !self.states.contains_key(&plan.entity) {
                let patience = self.config.request_timeout;
                super::workers::wait_for_parents(
                    self.db,
                    &self.plans,
                    &self.mine,
                    &plan,
                    self.stop,
                    patience,
                )
                .await?;
            }
            let outcome = if let Some(parent) = plan
                .parents
                .iter()
                .find(|fk| self.failed.contains(&fk.parent.to_string()))
            {
                Err(format!("its parent {} could not be synced", parent.parent))
            } else {
                let state = self.states.get(&plan.entity).cloned().unwrap_or_default();
                self.upcoming = self.upcoming_after(&order, position);
                match self.sync_entity(&plan, state).await {
                    Ok(moved) => Ok(moved),
                    Err(e)
                        if e.is_transient()
                            || matches!(e, ConsumerError::Stopped)
                            || self.config.all_or_nothing =>
                    {
                        self.writer.abort_group().await;
                        if load.children_first() && !e.is_transient() && self.config.all_or_nothing
                        {
                            // All or nothing: the tables this pass loaded are emptied again
                            // (children first, some may lack their parents for good).
                            let loaded: Vec<&EntityPlan> = self
                                .plans
                                .iter()
                                .filter(|p| self.report.synced(&p.entity))
                                .collect();
                            load.unload(&loaded).await?;
                        }
                        return Err(e);
                    }
                    Err(e) => Err(e.to_string()),
                }
            };
            match outcome {
                Ok(moved) => {
                    tracing::info!(entity = %plan.entity, rows = moved, "entity caught up");
                    self.report.rows.push((plan.entity.clone(), moved));
                    load.loaded(&plan);
                }
                Err(reason) => {
                    self.fail(&plan, reason);
                    if load.children_first() {
                        self.unload_children(&load, &plan).await?;
                    }
                }
            }
            if let Some(group) = open {
                if self.close_group(group, position).await? {
                    open = None;
                }
            }
        }
        let tables = owned.len() + skipped_count;
        for plan in owned.iter().filter(|p| !p.deferred.is_empty()) {
            self.report.links_set += self.writer.set_links(plan).await?;
        }
        self.writer.move_sequences(&owned).await?;
        if self.config.workers > 1 {
            self.report.parents_fetched +=
                super::workers::fetch_parents_of_orphans(self.db, &self.parents(), &my_entities)
                    .await?;
        }
        // What a load lifted (in this pass, or in one cut short before it) is rebuilt now; with
        // several workers, each rebuilds what belongs to its tables.
        let (rebuilt, not_rebuilt) = load
            .finish((self.config.workers > 1).then_some(&my_entities))
            .await?;
        let mut report = self.report;
        report.rebuilt = rebuilt;
        report.until = self.until.map(|s| s.0);
        report.failed.extend(not_rebuilt);
        let covered: Vec<String> = my_entities.iter().cloned().collect();
        if let Err(e) = self.db.record_failures(&covered, &report.failed).await {
            tracing::warn!(error = %e, "could not record which tables failed (status and /health read it)");
        }
        Ok((report, tables))
    }
}
