//! Pages whose parents the target lacks: a page is written, and when a foreign key refuses it
//! the parent rows it names are asked of the producer (by the columns the key references, in
//! bounded requests), written first, their own parents likewise, and the page written again.
//! Used by the pass, by a worker before it rebuilds a key between two workers' tables, and by
//! a repair.

use super::client::Asker;
use super::pages::{EntityPlan, Progress};
use super::writer::{ApplyError, PageWriter};
use super::ConsumerError;
use maskbus_protocol::{ReceivedPage, ReceivedReply, Request, VERSION};
use std::collections::BTreeSet;

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

/// What writing one page took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Rows of the page written.
    pub rows: u64,
    /// Parent rows fetched from the producer (and written) so that the page could be.
    pub parents_fetched: u64,
}

/// Writes pages of the tables of `plans`, fetching the parents they lack.
pub struct Parents<'a> {
    asker: &'a Asker,
    writer: &'a PageWriter<'a>,
    plans: &'a [EntityPlan],
}

impl<'a> Parents<'a> {
    pub fn new(asker: &'a Asker, writer: &'a PageWriter<'a>, plans: &'a [EntityPlan]) -> Self {
        Self {
            asker,
            writer,
            plans,
        }
    }

    /// The plan of `table`, when it is one of the sync's.
    pub fn plan_of(&self, table: &maskbus_pg::TableRef) -> Option<&'a EntityPlan> {
        self.plans.iter().find(|p| p.table == *table)
    }

    /// The rows of `parent` whose `columns` equal one of `keys`, asked of the producer (masked),
    /// in requests of at most [`MAX_ROWS_REQUEST_KEY_BYTES`] of key text, each answered in as
    /// many parts as its rows need; when an answer was cut short (rows too large to fit one),
    /// the keys not yet answered are asked again.
    pub async fn rows(
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
    pub async fn apply(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&Progress>,
    ) -> Result<Applied, ConsumerError> {
        let mut applied = Applied::default();
        applied.rows = self.apply_at(plan, page, state, &mut applied, 0).await?;
        Ok(applied)
    }

    /// Writes the parent rows `page`'s rows reference and the target lacks, asked of the
    /// producer along each foreign key of `plan` (their own parents likewise, up to `depth`).
    pub async fn supply(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        applied: &mut Applied,
        depth: usize,
    ) -> Result<(), ConsumerError> {
        let plans = self.plans;
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
                    .rows(parent_plan, &fk.parent_columns, chunk.to_vec())
                    .await?;
                applied.parents_fetched += parents.rows.len() as u64;
                Box::pin(self.apply_at(parent_plan, &parents, None, applied, depth + 1)).await?;
            }
        }
        Ok(())
    }

    async fn apply_at(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&Progress>,
        applied: &mut Applied,
        depth: usize,
    ) -> Result<u64, ConsumerError> {
        let plans = self.plans;
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
                self.supply(plan, page, applied, depth).await?;
                Box::pin(self.apply_at(plan, page, state, applied, depth + 1)).await
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
}
