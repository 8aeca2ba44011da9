//! The target side of the change stream: a change request's replies grouped into source
//! transactions, each applied in one target transaction together with the stream position it
//! reaches (`maskbus.stream_state`), so a crash anywhere loses and doubles nothing.
//!
//! A transaction's sets are applied in the order the source made them, which the source's own
//! foreign keys already accepted; deferrable constraints are checked at commit. Upserts are by
//! key (a change seen twice changes nothing), deletes by key, a truncate of several tables is
//! one `TRUNCATE`.

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

/// One source transaction's sets of changes, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct TransactionChanges {
    pub lsn: Lsn,
    pub sets: Vec<ReceivedChanges>,
}

/// What one change request brought.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeBatch {
    pub transactions: Vec<TransactionChanges>,
    /// Where the stream stands once they are applied.
    pub through: Lsn,
    /// The stream was started by this request.
    pub started: bool,
    /// More changes may wait after `through`.
    pub more: bool,
    /// The next transaction needs the served schema applied first.
    pub schema_changed: bool,
    /// Tables the producer left out of these changes: they fail closed.
    pub closed: std::collections::BTreeSet<String>,
}

/// Groups a change request's replies (in part order) into transactions. A transaction must be
/// whole (its last set marked `commit`), and sets of one transaction must agree on its position.
pub fn group(replies: Vec<ReceivedReply>) -> Result<ChangeBatch, ConsumerError> {
    let bad = |reason: &str| ConsumerError::BadReply {
        entity: String::new(),
        reason: reason.to_string(),
    };
    let mut batch = ChangeBatch {
        transactions: Vec::new(),
        through: Lsn::default(),
        started: false,
        more: false,
        schema_changed: false,
        closed: std::collections::BTreeSet::new(),
    };
    let mut open: Vec<ReceivedChanges> = Vec::new();
    for reply in replies {
        let ReceivedReply::Changes(set) = reply else {
            return Err(bad("expected changes"));
        };
        batch.through = set.through.0;
        batch.started |= set.started;
        batch.more |= set.more;
        batch.schema_changed |= set.schema_changed;
        batch
            .closed
            .extend(set.closed.iter().map(|e| maskbus_model::qualify(e)));
        if set.op == ChangeOp::None {
            continue;
        }
        let Some(lsn) = set.lsn else {
            return Err(bad(
                "a set of changes without the position of its transaction",
            ));
        };
        if open.first().is_some_and(|first| first.lsn != set.lsn) {
            return Err(bad("a transaction's changes were cut before its commit"));
        }
        if lsn.0 > batch.through {
            return Err(bad(
                "a transaction ends after the position the reply stands at",
            ));
        }
        let commit = set.commit;
        open.push(set);
        if commit {
            batch.transactions.push(TransactionChanges {
                lsn: lsn.0,
                sets: std::mem::take(&mut open),
            });
        }
    }
    if !open.is_empty() {
        return Err(bad("a transaction's changes were cut before its commit"));
    }
    Ok(batch)
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
            .query_opt(
                "SELECT started_lsn, applied_lsn, join_snapshot, transactions_applied, rows_applied
                   FROM maskbus.stream_state",
                &[],
            )
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
            .execute(
                "DELETE FROM maskbus.sync_state WHERE entity = ANY($1)",
                &[&entities],
            )
            .await
            .map_err(|e| self.db.target().query_error("forgetting watermarks", &e))?;
        Ok(())
    }

    /// Records a stream (re)started at `at`: the copy is still to be made.
    pub async fn started(&self, at: Lsn) -> Result<(), PgError> {
        self.stream_statement(
            "INSERT INTO maskbus.stream_state (started_lsn, applied_lsn) VALUES ($1, $1)
             ON CONFLICT (only_row) DO UPDATE
                SET started_lsn = $1, applied_lsn = $1, join_snapshot = NULL, updated_at = now()",
            &[&at.to_string()],
        )
        .await
    }

    /// Records the snapshot the copy reached: the stream is followed from now on.
    pub async fn joined(&self, snapshot: &Snapshot) -> Result<(), PgError> {
        self.stream_statement(
            "UPDATE maskbus.stream_state SET join_snapshot = $1, updated_at = now()",
            &[&snapshot.0],
        )
        .await
    }

    /// Forgets the stream (it was lost): the next round starts it again.
    pub async fn forgotten(&self) -> Result<(), PgError> {
        self.stream_statement("DELETE FROM maskbus.stream_state", &[])
            .await
    }

    /// Moves the position past transactions that brought nothing to apply.
    pub async fn reached(&self, through: Lsn) -> Result<(), PgError> {
        self.stream_statement(
            "UPDATE maskbus.stream_state SET applied_lsn = $1, updated_at = now()
              WHERE applied_lsn::pg_lsn < $1::text::pg_lsn",
            &[&through.to_string()],
        )
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

    /// Applies source transactions, in order, and records the position the last one reaches, all
    /// in one target transaction: the target never holds part of a source transaction, and a
    /// crash keeps all of them or none. Returns the rows written or deleted.
    /// A set of a table in `skip` (one that fails closed, to be copied again once it follows)
    /// is passed over.
    pub async fn apply(
        &self,
        plans: &[EntityPlan],
        transactions: &[TransactionChanges],
        skip: &std::collections::BTreeSet<String>,
    ) -> Result<u64, ConsumerError> {
        let Some(last) = transactions.last() else {
            return Ok(0);
        };
        let mut client = self.client().await?;
        let failed = |what: String| {
            let target = self.db.target();
            move |e: tokio_postgres::Error| ConsumerError::from(target.query_error(what, &e))
        };
        let tx = client
            .transaction()
            .await
            .map_err(failed("BEGIN of streamed transactions".into()))?;
        tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")
            .await
            .map_err(failed("SET CONSTRAINTS".into()))?;
        // Each statement is prepared once per batch: the sets of many small transactions share
        // a few shapes.
        let mut prepared: HashMap<String, tokio_postgres::Statement> = HashMap::new();
        let mut rows = 0u64;
        for transaction in transactions {
            let what = |verb: &str, entity: &str| {
                format!(
                    "{verb} {entity} for the source transaction ending at {} (if the target has drifted from the source, `maskbus verify --repair` mends it)",
                    transaction.lsn
                )
            };
            let mut sets = transaction.sets.iter().peekable();
            while let Some(set) = sets.next() {
                if skip.contains(&set.entity) {
                    continue;
                }
                let (sql, verb) = match set.op {
                    ChangeOp::None => continue,
                    ChangeOp::Truncate => {
                        // Tables truncated together (a CASCADE) go in one statement.
                        let mut tables = vec![&plan_of(plans, &set.entity)?.table];
                        while let Some(next) = sets.next_if(|s| s.op == ChangeOp::Truncate) {
                            tables.push(&plan_of(plans, &next.entity)?.table);
                        }
                        tx.batch_execute(&statements::truncate(&tables))
                            .await
                            .map_err(failed(what("truncating", &set.entity)))?;
                        continue;
                    }
                    ChangeOp::Delete => {
                        let plan = plan_of(plans, &set.entity)?;
                        if set.columns != plan.key.names()
                            || set.rows.iter().any(|r| r.len() != set.columns.len())
                        {
                            return Err(ConsumerError::BadReply {
                                entity: plan.entity.clone(),
                                reason: "a delete carries the key columns, and only them".into(),
                            });
                        }
                        (
                            statements::delete_by_key(&plan.table, &plan.key),
                            "deleting from",
                        )
                    }
                    ChangeOp::Upsert => {
                        let plan = plan_of(plans, &set.entity)?;
                        let columns = pages::reply_columns(
                            plan,
                            &set.entity,
                            &set.key,
                            &set.columns,
                            &set.rows,
                        )?;
                        // No links are deferred here: the source made these rows in this order.
                        let sql = statements::upsert(&statements::Write {
                            table: &plan.table,
                            key: &plan.key,
                            columns: &columns,
                            deferred: &[],
                            identity: columns.iter().any(|(c, _)| plan.identity.contains(c)),
                        });
                        (sql, "writing")
                    }
                };
                let statement = match prepared.get(&sql) {
                    Some(statement) => statement.clone(),
                    None => {
                        let statement = tx
                            .prepare(&sql)
                            .await
                            .map_err(failed(what(verb, &set.entity)))?;
                        prepared.insert(sql, statement.clone());
                        statement
                    }
                };
                let columns: Vec<Vec<Option<&str>>> = (0..set.columns.len())
                    .map(|i| set.rows.iter().map(|row| row.get(i)).collect())
                    .collect();
                rows += tx
                    .execute(&statement, &params(&columns))
                    .await
                    .map_err(failed(what(verb, &set.entity)))?;
            }
        }
        tx.execute(
            "UPDATE maskbus.stream_state
                SET applied_lsn = $1, transactions_applied = transactions_applied + $2,
                    rows_applied = rows_applied + $3, updated_at = now()",
            &[
                &last.lsn.to_string(),
                &(transactions.len() as i64),
                &(rows as i64),
            ],
        )
        .await
        .map_err(failed("recording the stream position".into()))?;
        tx.commit().await.map_err(failed(format!(
            "COMMIT of the source transactions up to {}",
            last.lsn
        )))?;
        Ok(rows)
    }
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

    #[test]
    fn replies_become_whole_transactions() {
        let batch = group(vec![
            set("public.a", "upsert", Some("0/10"), false, "0/30", 0),
            set("public.b", "delete", Some("0/10"), true, "0/30", 1),
            set("public.a", "upsert", Some("0/20"), true, "0/30", 2),
        ])
        .unwrap();
        assert_eq!(batch.through, Lsn(0x30));
        assert_eq!(batch.transactions.len(), 2);
        assert_eq!(batch.transactions[0].sets.len(), 2);
        assert_eq!(batch.transactions[1].lsn, Lsn(0x20));
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
        let idle = group(vec![set("", "none", None, false, "0/30", 0)]).unwrap();
        assert!(idle.transactions.is_empty());
        assert_eq!(idle.through, Lsn(0x30));
    }
}
