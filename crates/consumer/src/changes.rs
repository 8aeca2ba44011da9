//! The target side of the change stream: a change request's replies read in part order as they
//! come, checked into source transactions ([`Grouping`]) and applied in one target transaction
//! together with the stream position they reach (`maskbus.stream_state`), so a crash anywhere
//! loses and doubles nothing.
//!
//! A large source transaction arrives as the producer masks it: its replies are applied as they
//! come, in the same open target transaction, which commits with the last. An answer that stops
//! before a transaction's commit (the producer met a migration, a refusal, a silence) is rolled
//! back whole: the target never holds part of a source transaction.
//!
//! A transaction's sets are applied in the order the source made them, which the source's own
//! foreign keys already accepted; deferrable constraints are checked at commit. Upserts are by
//! key (a change seen twice changes nothing), deletes by key, a truncate of several tables is
//! one `TRUNCATE`. A table without a key holds a multiset: its upserts insert, and its deletes
//! carry whole rows, one copy of each deleted (found by all its values: never more rows than
//! sent), each applied exactly once with the stream position.

use super::bookkeeping;
use super::client::Answer;
use super::owned::Owned;
use super::pages::{self, EntityPlan};
use super::target_db::TargetDb;
use super::writer::params;
use super::ConsumerError;
use maskbus_pg::{statements, PgError};
use maskbus_protocol::{ChangeOp, Lsn, ReceivedChanges, ReceivedReply, Snapshot};
use std::collections::HashMap;
use tokio_postgres::types::ToSql;

/// Where the target stands in the change stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamState {
    pub started: Lsn,
    pub applied: Lsn,
    /// The snapshot the first copy reached; `None` while it is still to be made.
    pub join: Option<Snapshot>,
    pub transactions: i64,
    pub rows: i64,
}

/// A change request's replies, read in part order and checked as they come: each source
/// transaction's sets end with one marked `commit` that names where the transaction ends (the
/// sets before it name the same position, or none when they went before the commit was read),
/// and no transaction ends after the position the answer stands at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grouping {
    through: Lsn,
    started: bool,
    more: bool,
    schema_changed: bool,
    closed: std::collections::BTreeSet<String>,
    unpublished: std::collections::BTreeSet<String>,
    /// A transaction is open (sets read since the last commit), and the position its sets
    /// named so far.
    open: Option<Option<Lsn>>,
    transactions: u64,
}

/// What a whole answer said, once read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnswerSummary {
    /// Where the stream stands once its transactions are applied.
    pub through: Lsn,
    /// The stream was started by this request.
    pub started: bool,
    /// More changes may wait after `through`.
    pub more: bool,
    /// The next transaction needs the served schema applied first.
    pub schema_changed: bool,
    /// Tables the producer left out of these changes: they fail closed.
    pub closed: std::collections::BTreeSet<String>,
    /// Policy tables the stream's publication lacks (a DBA's): they fail closed by name.
    pub unpublished: std::collections::BTreeSet<String>,
    /// Whole source transactions read.
    pub transactions: u64,
    /// The answer stopped inside a transaction, for a migration met there: nothing of it may be
    /// applied (the schema goes first, then the transaction is asked for again).
    pub abandoned: bool,
}

impl Grouping {
    /// Reads the next set; true when it holds changes to apply.
    pub fn read(&mut self, set: &ReceivedChanges) -> Result<bool, ConsumerError> {
        self.through = set.through.0;
        self.started |= set.started;
        self.more |= set.more;
        self.schema_changed |= set.schema_changed;
        self.closed
            .extend(set.closed.iter().map(|e| maskbus_model::qualify(e)));
        self.unpublished
            .extend(set.unpublished.iter().map(|e| maskbus_model::qualify(e)));
        if set.op == ChangeOp::None {
            return Ok(false);
        }
        let named = set.lsn.map(|p| p.0);
        if let (Some(Some(open)), Some(lsn)) = (self.open, named) {
            if open != lsn {
                return Err(bad("a transaction's changes were cut before its commit"));
            }
        }
        if named.is_some_and(|lsn| lsn > self.through) {
            return Err(bad(
                "a transaction ends after the position the reply stands at",
            ));
        }
        if set.commit {
            if named.is_none() {
                return Err(bad(
                    "a transaction's last set of changes does not say where it ends",
                ));
            }
            self.open = None;
            self.transactions += 1;
        } else {
            let so_far = self.open.flatten();
            self.open = Some(named.or(so_far));
        }
        Ok(true)
    }

    /// What the answer said, once its last reply is read: refused if it stopped inside a
    /// transaction for any reason but a migration.
    pub fn finish(self) -> Result<AnswerSummary, ConsumerError> {
        let abandoned = self.open.is_some();
        if abandoned && !self.schema_changed {
            return Err(bad("a transaction's changes were cut before its commit"));
        }
        Ok(AnswerSummary {
            through: self.through,
            started: self.started,
            more: self.more,
            schema_changed: self.schema_changed,
            closed: self.closed,
            unpublished: self.unpublished,
            transactions: self.transactions,
            abandoned,
        })
    }
}

fn bad(reason: &str) -> ConsumerError {
    ConsumerError::BadReply {
        entity: String::new(),
        reason: reason.to_string(),
    }
}

/// What applying one answer did.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    pub summary: AnswerSummary,
    /// Rows written or deleted.
    pub rows: u64,
    /// The entities changes were applied to, in the order first met.
    pub touched: Vec<String>,
    /// Entities whose watermarks went in this round (they fail closed: copied again once they
    /// follow).
    pub forgotten: std::collections::BTreeSet<String>,
    /// A table whose change met a foreign key the target cannot satisfy (its parent fails or is
    /// skipped, or the parent row is missing): nothing of the answer was committed, and it is
    /// asked for again with this table passed over (it waits, and is copied again once it can).
    pub waits: Option<super::Skipped>,
    /// Tables that changes named and the plans do not hold (added to the policy since they
    /// were made): passed over, they are planned and copied (each copy's snapshot holds them).
    pub unplanned: std::collections::BTreeSet<String>,
}

/// What the follower passes over in an answer.
#[derive(Clone, Copy)]
pub struct Passing<'a> {
    /// Tables that fail closed, or are not copied yet: their changes are passed over and their
    /// watermark goes (unless in `forgotten` already).
    pub skip: &'a std::collections::BTreeSet<String>,
    pub forgotten: &'a std::collections::BTreeSet<String>,
    /// Per table, the snapshot its copy was taken at: a change of a transaction it holds is in
    /// the copy already (a table copied after the stream began, or again).
    pub joins: &'a HashMap<String, Snapshot>,
}

/// The table and constraint of a foreign-key violation (SQLSTATE 23503), if `e` is one: the
/// table is always the referencing one.
fn foreign_key_violation(e: &tokio_postgres::Error) -> Option<(maskbus_pg::TableRef, String)> {
    let db = e.as_db_error()?;
    if db.code() != &tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION {
        return None;
    }
    Some((
        maskbus_pg::TableRef::new(db.schema()?, db.table()?),
        db.constraint()?.to_string(),
    ))
}

/// A data exception or an integrity constraint (SQLSTATE classes 22 and 23) met writing one
/// table's change: the change does not fit that table as the target holds it.
fn fits_not(e: &tokio_postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|db| matches!(&db.code().code()[..2], "22" | "23"))
}

/// Which table waits for a foreign-key violation on `child`'s `constraint`, met while changing
/// `changing` (none: at commit): the child, unless it is passed over already (then its stale
/// rows hold back a change of the parent, which waits for it). None: no table of the plans.
fn who_waits(
    plans: &[EntityPlan],
    skip: &std::collections::BTreeSet<String>,
    child: &maskbus_pg::TableRef,
    constraint: &str,
    changing: Option<&str>,
) -> Option<super::Skipped> {
    let child_plan = plans.iter().find(|p| &p.table == child)?;
    let parent = child_plan
        .parents
        .iter()
        .chain(&child_plan.outside)
        .find(|fk| fk.name == constraint)
        .map(|fk| fk.parent.to_string())
        .unwrap_or_else(|| "a table it references".to_string());
    if !skip.contains(&child_plan.entity) {
        return Some(super::Skipped {
            entity: child_plan.entity.clone(),
            reason: format!("waits for its parent {parent}: a streamed change names a row of it the target lacks (it fails, is skipped, or misses that row); its changes are passed over and it is copied again once {parent} follows"),
        });
    }
    let changing = changing.filter(|c| *c != child_plan.entity)?;
    Some(super::Skipped {
        entity: changing.to_string(),
        reason: format!("waits for its child {}, which fails: rows of it in the target still reference rows a streamed change of this table deletes; copied again once {} follows", child_plan.entity, child_plan.entity),
    })
}

/// The tables `skip` passes over that reference `parent` by its key, with that key's columns in
/// the child: their stale rows referencing a deleted parent row are deleted first (the source
/// holds no such row, and the child is copied and repaired once it follows).
fn failing_children<'p>(
    plans: &'p [EntityPlan],
    skip: &std::collections::BTreeSet<String>,
    parent: &EntityPlan,
) -> Vec<(&'p EntityPlan, maskbus_model::KeyDef)> {
    let key = parent.key.names();
    plans
        .iter()
        .filter(|c| skip.contains(&c.entity))
        .flat_map(|c| {
            c.parents
                .iter()
                .filter(|fk| fk.parent == parent.table && fk.parent_columns == key)
                .map(move |fk| {
                    let columns = fk
                        .columns
                        .iter()
                        .zip(&parent.key.columns)
                        .map(|(name, k)| maskbus_model::KeyColumn {
                            name: name.clone(),
                            sql_type: k.sql_type.clone(),
                        })
                        .collect();
                    (
                        c,
                        maskbus_model::KeyDef {
                            columns,
                            source: parent.key.source.clone(),
                        },
                    )
                })
        })
        .collect()
}

/// Applies the change stream to the target and keeps its position there.
pub struct ChangeApplier<'db> {
    db: &'db TargetDb,
}

impl<'db> ChangeApplier<'db> {
    pub fn new(db: &'db TargetDb) -> Self {
        Self { db }
    }

    async fn client(&self) -> Result<maskbus_pg::deadpool_postgres::Object, PgError> {
        self.db.client().await
    }

    /// The stream position the target holds, if it follows a stream.
    pub async fn state(&self) -> Result<Option<StreamState>, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(bookkeeping::STREAM_STATE, &[])
            .await
            .map_err(|e| {
                self.db
                    .target()
                    .query_error("reading maskbus.stream_state", &e)
            })?;
        let Some(row) = row else { return Ok(None) };
        let lsn = |text: String| {
            text.parse::<Lsn>().map_err(|e| {
                self.db
                    .target()
                    .refusal("reading maskbus.stream_state", e.to_string())
            })
        };
        Ok(Some(StreamState {
            started: lsn(row.get(0))?,
            applied: lsn(row.get(1))?,
            join: row.get::<_, Option<String>>(2).map(Snapshot),
            transactions: row.get(3),
            rows: row.get(4),
        }))
    }

    /// Forgets the watermarks of `entities`: each is copied again (and repaired) once it
    /// follows the source.
    pub async fn forget_watermarks(
        &self,
        entities: &std::collections::BTreeSet<String>,
    ) -> Result<(), PgError> {
        let entities: Vec<&str> = entities.iter().map(String::as_str).collect();
        let client = self.client().await?;
        client
            .execute(bookkeeping::FORGET_WATERMARKS, &[&entities])
            .await
            .map_err(|e| self.db.target().query_error("forgetting watermarks", &e))?;
        Ok(())
    }

    /// Records a stream (re)started at `at`: the copy is still to be made.
    pub async fn started(&self, at: Lsn) -> Result<(), PgError> {
        self.stream_statement(bookkeeping::STREAM_STARTED, &[&at.to_string()])
            .await
    }

    /// Records the snapshot the copy reached: the stream is followed from now on.
    pub async fn joined(&self, snapshot: &Snapshot) -> Result<(), PgError> {
        self.stream_statement(bookkeeping::STREAM_JOINED, &[&snapshot.0])
            .await
    }

    /// Forgets the stream (it was lost): the next round starts it again.
    pub async fn forgotten(&self) -> Result<(), PgError> {
        self.stream_statement(bookkeeping::FORGET_STREAM, &[]).await
    }

    /// Moves the position past transactions that brought nothing to apply.
    pub async fn reached(&self, through: Lsn) -> Result<(), PgError> {
        self.stream_statement(bookkeeping::STREAM_REACHED, &[&through.to_string()])
            .await
    }

    async fn stream_statement(
        &self,
        sql: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> Result<(), PgError> {
        let client = self.client().await?;
        client.execute(sql, values).await.map_err(|e| {
            self.db
                .target()
                .query_error("recording the stream position", &e)
        })?;
        Ok(())
    }

    /// Reads an answer's replies as they come and applies their source transactions, in
    /// order, in one target transaction that records the position the answer stands at: the
    /// target never holds part of a source transaction, and a crash keeps all of them or none.
    /// A set of a table in `skip` (one that fails closed, to be copied again once it follows)
    /// or that the producer says fails closed is passed over, and the watermark of each such
    /// table not in `forgotten` goes in the same transaction.
    ///
    /// A foreign key the target cannot satisfy (a child row whose parent table fails) does not
    /// stop the stream: nothing is committed, and [`Applied::waits`] names the table that waits,
    /// for the follower to ask again with it passed over. A set of a table not in `plans` is
    /// passed over and named in [`Applied::unplanned`]; one whose transaction the table's copy
    /// holds already (`passing.joins`) is passed over too.
    pub async fn apply(
        &self,
        plans: &[EntityPlan],
        answer: &mut Answer<'_>,
        passing: Passing<'_>,
    ) -> Result<Applied, ConsumerError> {
        let Passing {
            skip,
            forgotten,
            joins,
        } = passing;
        let failed = |what: String| {
            let target = self.db.target();
            move |e: tokio_postgres::Error| ConsumerError::from(target.query_error(what, &e))
        };
        let mut grouping = Grouping::default();
        let mut applied = Applied::default();
        // An idle answer (one reply with no change) opens no target transaction.
        let idle = matches!(
            answer.peek().await?,
            Some(ReceivedReply::Changes(first)) if first.op == ChangeOp::None
        );
        let mut client = self.client().await?;
        let tx = if idle {
            None
        } else {
            let tx = client
                .transaction()
                .await
                .map_err(failed("BEGIN of streamed transactions".into()))?;
            tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")
                .await
                .map_err(failed("SET CONSTRAINTS".into()))?;
            Some(tx)
        };
        // Each statement is prepared once per answer: the sets of many small transactions share
        // a few shapes.
        let mut prepared: HashMap<String, tokio_postgres::Statement> = HashMap::new();
        // Consecutive truncates (a CASCADE) go in one statement, once the next set is read.
        let mut truncates: Vec<&maskbus_pg::TableRef> = Vec::new();
        // The tables maskbus owns, read before this answer's first write: whatever a change
        // names, no other table is written, emptied or deleted from.
        let mut owned: Option<Owned> = None;
        let mut read = 0u32;
        // The next reply is claimed and read while the target runs the statement of this one.
        let mut next = answer.next().await?;
        while let Some(reply) = next.take() {
            read += 1;
            let set = match reply {
                ReceivedReply::Changes(set) => set,
                ReceivedReply::Error { error, .. } => {
                    return Err(ConsumerError::Refused {
                        what: format!("the source's changes (after {} replies)", read - 1),
                        error,
                    })
                }
                _ => return Err(bad("expected changes")),
            };
            if !grouping.read(&set)?
                || skip.contains(&set.entity)
                || grouping.closed.contains(&set.entity)
                || grouping.unpublished.contains(&set.entity)
                || set
                    .xid
                    .zip(joins.get(&set.entity))
                    .is_some_and(|(xid, copied)| copied.holds(xid.0))
            {
                next = answer.next().await?;
                continue;
            }
            if !plans.iter().any(|p| p.entity == set.entity) {
                // A table the plans do not hold yet (added to the policy): planned and copied
                // after this answer, with a snapshot that holds this change.
                applied.unplanned.insert(set.entity.clone());
                next = answer.next().await?;
                continue;
            }
            let what = |verb: &str| {
                format!(
                    "{verb} {} for the source's changes (if the target has drifted from the source, `maskbus verify --repair` mends it)",
                    set.entity
                )
            };
            let Some(tx) = tx.as_ref() else {
                return Err(bad("changes after a reply that said there were none"));
            };
            let plan = plan_of(plans, &set.entity)?;
            let owns = match owned {
                Some(ref owns) => owns,
                None => owned.insert(Owned::read(self.db.target(), &**tx).await?),
            };
            owns.require(&plan.table.to_string())?;
            if set.op != ChangeOp::Truncate && !truncates.is_empty() {
                with_failing_children(plans, skip, &mut truncates);
                tx.batch_execute(&statements::truncate(&truncates))
                    .await
                    .map_err(failed(what("truncating before")))?;
                truncates.clear();
            }
            if !applied.touched.contains(&plan.entity) {
                applied.touched.push(plan.entity.clone());
            }
            let (sql, verb) = match set.op {
                ChangeOp::None | ChangeOp::Truncate => {
                    if set.op == ChangeOp::Truncate {
                        truncates.push(&plan.table);
                    }
                    next = answer.next().await?;
                    continue;
                }
                ChangeOp::Delete if plan.key.is_keyless() => {
                    match keyless_columns(plan, &set) {
                        Ok(columns) => (
                            statements::keyless::delete_rows(&plan.table, &columns),
                            "deleting from",
                        ),
                        // Not the rows the target holds (its schema has not followed yet):
                        // that table waits, and is copied again.
                        Err(reason) => {
                            return Ok(Applied {
                                waits: Some(super::Skipped {
                                    entity: plan.entity.clone(),
                                    reason: format!("a streamed delete does not fit the table the target holds ({reason}): its changes are passed over, and it is copied again once its schema follows"),
                                }),
                                ..Applied::default()
                            });
                        }
                    }
                }
                ChangeOp::Delete => {
                    if set.columns != plan.key.names()
                        || set.rows.iter().any(|r| r.len() != set.columns.len())
                    {
                        return Err(ConsumerError::BadReply {
                            entity: plan.entity.clone(),
                            reason: "a delete carries the key columns, and only them".into(),
                        });
                    }
                    // Rows of failing children that reference the deleted rows go first.
                    let children = failing_children(plans, skip, plan);
                    if !children.is_empty() {
                        let columns: Vec<Vec<Option<&str>>> = (0..set.columns.len())
                            .map(|i| set.rows.iter().map(|row| row.get(i)).collect())
                            .collect();
                        let values = params(&columns);
                        for (child, by) in children {
                            tx.execute(&statements::delete_by_key(&child.table, &by), &values)
                                .await
                                .map_err(failed(format!(
                                    "deleting from {} (failing) the rows that reference rows deleted from {}",
                                    child.entity, plan.entity
                                )))?;
                        }
                    }
                    (
                        statements::delete_by_key(&plan.table, &plan.key),
                        "deleting from",
                    )
                }
                ChangeOp::Upsert => {
                    let columns = match pages::reply_columns(
                        plan,
                        &set.entity,
                        &set.key,
                        &set.columns,
                        &set.rows,
                    ) {
                        Ok(columns) => columns,
                        // The change does not fit the table as the target holds it (its schema
                        // has not followed yet): that table waits, the others go on.
                        Err(ConsumerError::BadReply { reason, .. }) => {
                            return Ok(Applied {
                                waits: Some(super::Skipped {
                                    entity: plan.entity.clone(),
                                    reason: format!("a streamed change does not fit the table the target holds ({reason}): its changes are passed over, and it is copied again once its schema follows"),
                                }),
                                ..Applied::default()
                            });
                        }
                        Err(e) => return Err(e),
                    };
                    let identity = columns.iter().any(|(c, _)| plan.identity.contains(c));
                    if plan.key.is_keyless() {
                        // A table without a key holds a multiset: every row is inserted.
                        let sql = statements::keyless::insert_rows(&plan.table, &columns, identity);
                        (sql, "writing")
                    } else {
                        // No links are deferred here: the source made these rows in this order.
                        let sql = statements::upsert(&statements::Write {
                            table: &plan.table,
                            key: &plan.key,
                            columns: &columns,
                            deferred: &[],
                            identity,
                        });
                        (sql, "writing")
                    }
                }
            };
            let statement = match prepared.get(&sql) {
                Some(statement) => statement.clone(),
                None => {
                    let statement = tx.prepare(&sql).await.map_err(failed(what(verb)))?;
                    prepared.insert(sql, statement.clone());
                    statement
                }
            };
            let columns: Vec<Vec<Option<&str>>> = (0..set.columns.len())
                .map(|i| set.rows.iter().map(|row| row.get(i)).collect())
                .collect();
            let values = params(&columns);
            let (executed, following) =
                tokio::join!(tx.execute(&statement, &values), answer.next());
            match executed {
                Ok(rows) => applied.rows += rows,
                Err(e) => {
                    let waits = match foreign_key_violation(&e) {
                        Some((child, fk)) => {
                            who_waits(plans, skip, &child, &fk, Some(&plan.entity))
                        }
                        // A value or a constraint the table in the target does not take yet
                        // (its schema lags the source's: a NOT NULL dropped, a column widened):
                        // that table waits, and is copied again once its schema follows.
                        None => fits_not(&e).then(|| super::Skipped {
                            entity: plan.entity.clone(),
                            reason: format!("a streamed change does not fit the table in the target ({}): its changes are passed over, and it is copied again once its schema follows", maskbus_pg::error_text(&e)),
                        }),
                    };
                    if let Some(waits) = waits {
                        // Rolled back whole (the transaction is dropped): asked for again.
                        return Ok(Applied {
                            waits: Some(waits),
                            ..Applied::default()
                        });
                    }
                    return Err(failed(what(verb))(e));
                }
            }
            next = following?;
        }
        let summary = grouping.finish()?;
        let mut forget: std::collections::BTreeSet<String> = skip
            .iter()
            .chain(&summary.closed)
            .chain(&summary.unpublished)
            .cloned()
            .collect();
        forget.retain(|entity| !forgotten.contains(entity));
        if summary.abandoned {
            // Rolled back whole (the transaction is dropped): the schema goes first.
            applied.summary = summary;
            applied.rows = 0;
            applied.touched.clear();
            return Ok(applied);
        }
        let Some(tx) = tx.filter(|_| summary.transactions > 0 || !applied.touched.is_empty())
        else {
            // Nothing applied: the position moves past what brought nothing, and the tables
            // newly failing closed lose their watermark.
            if !forget.is_empty() {
                self.forget_watermarks(&forget).await?;
            }
            self.reached(summary.through).await?;
            applied.forgotten = forget;
            applied.summary = summary;
            return Ok(applied);
        };
        if !truncates.is_empty() {
            with_failing_children(plans, skip, &mut truncates);
            tx.batch_execute(&statements::truncate(&truncates))
                .await
                .map_err(failed("truncating streamed tables".into()))?;
        }
        if !forget.is_empty() {
            let entities: Vec<&str> = forget.iter().map(String::as_str).collect();
            tx.execute(bookkeeping::FORGET_WATERMARKS, &[&entities])
                .await
                .map_err(failed("forgetting watermarks".into()))?;
        }
        tx.execute(
            bookkeeping::STREAM_APPLIED,
            &[
                &summary.through.to_string(),
                &(summary.transactions as i64),
                &(applied.rows as i64),
            ],
        )
        .await
        .map_err(failed("recording the stream position".into()))?;
        if let Err(e) = tx.commit().await {
            // A deferred foreign key, checked at commit.
            if let Some(waits) = foreign_key_violation(&e)
                .and_then(|(child, fk)| who_waits(plans, skip, &child, &fk, None))
            {
                return Ok(Applied {
                    waits: Some(waits),
                    ..Applied::default()
                });
            }
            return Err(failed(format!(
                "COMMIT of the source transactions up to {}",
                summary.through
            ))(e));
        }
        applied.forgotten = forget;
        applied.summary = summary;
        Ok(applied)
    }
}

/// `truncates` with the tables `skip` passes over that reference one of them: a truncate on the
/// source covered them too (Postgres refuses to empty a referenced table alone), and they are
/// copied again once they follow.
fn with_failing_children<'p>(
    plans: &'p [EntityPlan],
    skip: &std::collections::BTreeSet<String>,
    truncates: &mut Vec<&'p maskbus_pg::TableRef>,
) {
    loop {
        let more: Vec<&maskbus_pg::TableRef> = plans
            .iter()
            .filter(|c| skip.contains(&c.entity) && !truncates.contains(&&c.table))
            .filter(|c| c.parents.iter().any(|fk| truncates.contains(&&fk.parent)))
            .map(|c| &c.table)
            .collect();
        if more.is_empty() {
            return;
        }
        truncates.extend(more);
    }
}

/// The (column, type) of a streamed delete of a keyless table, whose rows are whole rows (a
/// copy of each is deleted, found by all its values): keyed like the plan (by row location,
/// never sent), every column the target writes named once, and no other, each row a value per
/// column. Untrusted: a delete that named fewer columns would match rows by part of them.
fn keyless_columns(
    plan: &EntityPlan,
    set: &ReceivedChanges,
) -> Result<Vec<(String, String)>, String> {
    let columns = pages::reply_columns(plan, &set.entity, &set.key, &set.columns, &set.rows)
        .map_err(|e| match e {
            ConsumerError::BadReply { reason, .. } => reason,
            other => other.to_string(),
        })?;
    if columns.len() != plan.types.len() {
        return Err(format!(
            "a delete of a table without a key names {} of its {} columns: it carries the whole row",
            columns.len(),
            plan.types.len()
        ));
    }
    Ok(columns)
}

/// The plan of the table a change names.
fn plan_of<'p>(plans: &'p [EntityPlan], entity: &str) -> Result<&'p EntityPlan, ConsumerError> {
    plans
        .iter()
        .find(|p| p.entity == entity)
        .ok_or_else(|| ConsumerError::Unsupported {
            entity: entity.to_string(),
            reason: "a change arrived for a table the target does not sync; check the policy and the target schema".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(
        entity: &str,
        op: &str,
        lsn: Option<&str>,
        commit: bool,
        through: &str,
        part: u32,
    ) -> ReceivedReply {
        // Positions written as Postgres prints them, sent as they travel.
        let wire = |text: &str| maskbus_protocol::digest::hex(text.parse::<Lsn>().unwrap().0);
        let body = serde_json::json!({
            "type": "changes", "v": 2, "entity": entity, "op": op, "key": ["id"],
            "columns": ["id"], "rows": [["1"]], "lsn": lsn.map(wire), "commit": commit,
            "through": wire(through), "started": false, "part": part, "parts": 3,
        });
        let raw = serde_json::value::RawValue::from_string(body.to_string()).unwrap();
        ReceivedReply::from_body(&raw).unwrap()
    }

    /// Reads `replies` through a grouping: which sets are applied, and what the answer said.
    fn group(replies: Vec<ReceivedReply>) -> Result<(Vec<bool>, AnswerSummary), ConsumerError> {
        let mut grouping = Grouping::default();
        let mut applied = Vec::new();
        for reply in replies {
            let ReceivedReply::Changes(set) = reply else {
                return Err(bad("expected changes"));
            };
            applied.push(grouping.read(&set)?);
        }
        Ok((applied, grouping.finish()?))
    }

    #[test]
    fn a_keyless_delete_carries_the_whole_row_and_nothing_else() {
        let mut plan = crate::pages::test_plan("log", &[]);
        plan.key = maskbus_model::KeyDef {
            columns: maskbus_model::ROW_LOCATION
                .iter()
                .map(|(name, ty)| maskbus_pg::KeyColumn {
                    name: name.to_string(),
                    sql_type: ty.to_string(),
                })
                .collect(),
            source: maskbus_pg::KeySource::RowLocation,
        };
        plan.types = [("at", "date"), ("what", "text")]
            .iter()
            .map(|(c, t)| (c.to_string(), t.to_string()))
            .collect();
        let delete = |key: &[&str], columns: &[&str], rows: serde_json::Value| {
            let body = serde_json::json!({
                "type": "changes", "v": 2, "entity": "s.log", "op": "delete", "key": key,
                "columns": columns, "rows": rows, "lsn": null, "commit": false,
                "through": maskbus_protocol::digest::hex(1), "part": 0, "parts": 1,
            });
            let raw = serde_json::value::RawValue::from_string(body.to_string()).unwrap();
            match ReceivedReply::from_body(&raw).unwrap() {
                ReceivedReply::Changes(set) => set,
                _ => panic!("a set of changes"),
            }
        };
        let whole = delete(
            &["tableoid", "ctid"],
            &["what", "at"],
            serde_json::json!([["x", null], ["x", null]]),
        );
        assert_eq!(
            keyless_columns(&plan, &whole).unwrap(),
            vec![
                ("what".to_string(), "text".to_string()),
                ("at".into(), "date".into())
            ]
        );
        // Part of the row (it would match rows by part of their values), a column the target
        // does not write, one named twice, a row short of a value, another key: refused.
        for bad in [
            delete(&["tableoid", "ctid"], &["what"], serde_json::json!([["x"]])),
            delete(
                &["tableoid", "ctid"],
                &["what", "at", "ctid"],
                serde_json::json!([["x", null, "(0,1)"]]),
            ),
            delete(
                &["tableoid", "ctid"],
                &["what", "what"],
                serde_json::json!([["x", "x"]]),
            ),
            delete(
                &["tableoid", "ctid"],
                &["what", "at"],
                serde_json::json!([["x"]]),
            ),
            delete(&["what"], &["what", "at"], serde_json::json!([["x", null]])),
        ] {
            assert!(keyless_columns(&plan, &bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn replies_become_whole_transactions() {
        let (applied, batch) = group(vec![
            set("public.a", "upsert", Some("0/10"), false, "0/30", 0),
            set("public.b", "delete", Some("0/10"), true, "0/30", 1),
            set("public.a", "upsert", Some("0/20"), true, "0/30", 2),
        ])
        .unwrap();
        assert_eq!(applied, vec![true, true, true]);
        assert_eq!(batch.through, Lsn(0x30));
        assert_eq!(batch.transactions, 2);
        assert!(!batch.abandoned);
        // A transaction cut before its commit, or mixed with another, is refused whole.
        for bad in [
            vec![set("public.a", "upsert", Some("0/10"), false, "0/30", 0)],
            vec![
                set("public.a", "upsert", Some("0/10"), false, "0/30", 0),
                set("public.a", "upsert", Some("0/20"), true, "0/30", 1),
            ],
            vec![set("public.a", "upsert", Some("0/40"), true, "0/30", 0)],
            vec![set("public.a", "upsert", None, true, "0/30", 0)],
        ] {
            assert!(group(bad).is_err());
        }
        let (applied, idle) = group(vec![set("", "none", None, false, "0/30", 0)]).unwrap();
        assert_eq!(applied, vec![false]);
        assert_eq!(idle.transactions, 0);
        assert_eq!(idle.through, Lsn(0x30));
    }

    #[test]
    fn a_transaction_sent_as_it_was_masked_names_its_end_with_its_commit() {
        // The first replies went before the commit was read: no position, standing where the
        // consumer asked from; the last names the end and stands there.
        let (applied, batch) = group(vec![
            set("public.a", "upsert", None, false, "0/5", 0),
            set("public.a", "upsert", None, false, "0/5", 1),
            set("public.a", "upsert", Some("0/20"), true, "0/20", 2),
        ])
        .unwrap();
        assert_eq!(applied, vec![true, true, true]);
        assert_eq!((batch.transactions, batch.through), (1, Lsn(0x20)));
        // Stopped inside the transaction for a migration: nothing of it is applied.
        let mut migration = set("", "none", None, false, "0/5", 1);
        if let ReceivedReply::Changes(c) = &mut migration {
            c.schema_changed = true;
        }
        let (_, abandoned) = group(vec![
            set("public.a", "upsert", None, false, "0/5", 0),
            migration,
        ])
        .unwrap();
        assert!(abandoned.abandoned && abandoned.schema_changed);
        assert_eq!(abandoned.transactions, 0);
        // Stopped inside it for any other reason: refused.
        assert!(group(vec![
            set("public.a", "upsert", None, false, "0/5", 0),
            set("", "none", None, false, "0/5", 1),
        ])
        .is_err());
        // A position named before the commit must be the commit's.
        assert!(group(vec![
            set("public.a", "upsert", None, false, "0/5", 0),
            set("public.a", "upsert", Some("0/10"), false, "0/30", 1),
            set("public.a", "upsert", Some("0/20"), true, "0/30", 2),
        ])
        .is_err());
    }
}
