//! The target's schema kept in step with the one the producer serves ([`SchemaSync`]), before
//! each pass's rows:
//!
//! - a target that holds none of the synced tables gets all of them, made from the served
//!   schema in one transaction (no `pg_dump` of production on the test side);
//! - a target made another way (`pg_dump --schema-only`, by hand) is compared with the served
//!   schema on first contact: every difference is named, none undone;
//! - when the served schema's fingerprint differs from the one the target last took in (a
//!   migration on the source), the difference between the two served schemas
//!   (`maskbus_model::schema::diff`) is applied table by table, each table's changes in one
//!   transaction; a change that gives rows new values (a new, renamed or retyped column) forgets
//!   the table's watermark in the same transaction, so the pass writes its rows again;
//! - a table the producer left out of the schema (a column with no rule, a stale rule, personal
//!   data in its schema) or whose change the target refused fails closed, by name, with the
//!   reason; the others go on;
//! - a table whose masking rules changed (their fingerprint) forgets its watermark and is
//!   written again, alone.

use super::client::Asker;
use super::target_db::{Baseline, TargetDb};
use super::ConsumerError;
use maskbus_model::schema::{diff, Change, Schema};
use maskbus_protocol::{ReceivedReply, Request, VERSION};
use std::collections::BTreeMap;

/// What the producer's entity list says of the schema.
pub struct Served<'a> {
    pub entities: &'a [String],
    pub fingerprint: Option<&'a str>,
    pub rules: &'a BTreeMap<String, String>,
}

/// Keeps one target's schema in step with the served one.
pub struct SchemaSync<'a> {
    asker: &'a Asker,
    db: &'a TargetDb,
}

impl<'a> SchemaSync<'a> {
    pub fn new(asker: &'a Asker, db: &'a TargetDb) -> Self {
        Self { asker, db }
    }

    /// Brings the target's schema to the served one; returns the tables that fail closed, each
    /// with its reason.
    pub async fn prepare(
        &self,
        served: Served<'_>,
    ) -> Result<BTreeMap<String, String>, ConsumerError> {
        let offered = served.entities;
        if offered.is_empty() {
            return Ok(BTreeMap::new());
        }
        let baseline = self.db.schema_baseline().await?;
        let missing = self.db.missing_tables(offered).await?;
        let failed = match (baseline, served.fingerprint) {
            // An empty target: made from the served schema.
            (_, Some(fingerprint)) if missing.len() == offered.len() => {
                let (schema, left_out) = self.fetch(offered).await?;
                if self.db.create_schema(&schema).await? {
                    tracing::info!(
                        tables = schema.tables.len(),
                        types = schema.types.len(),
                        extensions = schema.extensions.len(),
                        "the target held none of the synced tables: created them from the schema the producer serves"
                    );
                }
                self.record(fingerprint, schema, left_out).await?
            }
            // A target made another way (pg_dump, by hand): its differences from the served
            // schema are named, never undone; what is served now is the start of what follows.
            (None, Some(fingerprint)) => {
                let (mut schema, left_out) = self.fetch(offered).await?;
                let present = self.db.read_schema(offered).await?;
                for change in diff(&present, &schema) {
                    tracing::warn!(difference = %change.describe(), "the target's schema differs from the one the producer serves; maskbus leaves it as it is (a page that does not fit it fails its table by name)");
                }
                for entity in left_out.keys() {
                    schema.keep_from(&present, &maskbus_pg::TableRef::parse(entity));
                }
                self.record(fingerprint, schema, left_out).await?
            }
            // A migration on the source: the difference between the two served schemas.
            (Some(baseline), Some(fingerprint)) if baseline.fingerprint != fingerprint => {
                self.follow(offered, baseline, fingerprint).await?
            }
            (Some(baseline), _) => baseline.left_out,
            (None, None) => BTreeMap::new(),
        };
        for entity in self.db.follow_rules(served.rules).await? {
            tracing::warn!(%entity, "the masking rules of this table changed: its rows are written again by this pass");
        }
        for (entity, reason) in &failed {
            tracing::error!(%entity, %reason, "this table's schema does not follow the source: it is not synced until it does; the others are");
        }
        Ok(failed)
    }

    async fn record(
        &self,
        fingerprint: &str,
        served: Schema,
        left_out: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ConsumerError> {
        let baseline = Baseline {
            fingerprint: fingerprint.to_string(),
            served,
            left_out,
        };
        self.db.record_baseline(&baseline).await?;
        Ok(baseline.left_out)
    }

    /// The served schema, and the tables it leaves out with the producer's reasons.
    async fn fetch(
        &self,
        offered: &[String],
    ) -> Result<(Schema, BTreeMap<String, String>), ConsumerError> {
        let reply = self
            .asker
            .ask_patiently(&Request::Schema { v: VERSION }, "the schema")
            .await?
            .into_iter()
            .next();
        let Some(ReceivedReply::Schema {
            schema, left_out, ..
        }) = reply
        else {
            return Err(ConsumerError::BadReply {
                entity: String::new(),
                reason: "expected the schema".into(),
            });
        };
        schema
            .well_formed(offered)
            .map_err(|e| ConsumerError::BadReply {
                entity: String::new(),
                reason: e.to_string(),
            })?;
        let left_out = left_out
            .into_iter()
            .map(|l| {
                (
                    maskbus_model::qualify(&l.entity),
                    format!("the producer did not serve its schema: {}", l.reason),
                )
            })
            .collect();
        Ok((schema, left_out))
    }

    /// Applies a migration: the difference between the served schema the target took in last
    /// and the one served now, table by table. A table whose change the target refuses, or
    /// that the producer leaves out, keeps its old description in the new baseline (so it
    /// follows once it can) and fails closed.
    async fn follow(
        &self,
        offered: &[String],
        baseline: Baseline,
        fingerprint: &str,
    ) -> Result<BTreeMap<String, String>, ConsumerError> {
        let (served, mut failed) = self.fetch(offered).await?;
        let old = baseline.served.clone();
        // The served schema as far as the target has followed it, recorded with each table's
        // changes: a run cut short resumes with what is left.
        let mut current = baseline.clone();
        let mut from = old.clone();
        for entity in failed.keys() {
            from.without_table(&maskbus_pg::TableRef::parse(entity));
        }
        let changes = diff(&from, &served);
        // Types first (a table's change may need them), then each table's own.
        let mut types = Vec::new();
        let mut by_table: BTreeMap<String, Vec<&Change>> = BTreeMap::new();
        for change in &changes {
            match change.table() {
                None => types.push(change),
                Some(table) => by_table.entry(table.to_string()).or_default().push(change),
            }
        }
        let statements = |changes: &[&Change]| -> Result<Vec<String>, ConsumerError> {
            let mut out = Vec::new();
            for change in changes {
                out.extend(maskbus_pg::ddl::alter(change).map_err(|e| {
                    ConsumerError::BadReply {
                        entity: change.table().map(|t| t.to_string()).unwrap_or_default(),
                        reason: e.to_string(),
                    }
                })?);
            }
            Ok(out)
        };
        if !types.is_empty() {
            current.served.schemas.clone_from(&served.schemas);
            current.served.extensions.clone_from(&served.extensions);
            current.served.types.clone_from(&served.types);
            current.served.sequences.clone_from(&served.sequences);
            self.db
                .apply_changes(None, &statements(&types)?, false, &current)
                .await?;
            for change in &types {
                tracing::info!(change = %change.describe(), "schema followed");
            }
        }
        for (entity, changes) in by_table {
            // A partition's rows are synced through its root.
            let root = served
                .tables
                .iter()
                .find(|t| t.table.to_string() == entity)
                .and_then(|t| t.partition_of.as_ref().map(|(p, _)| p.to_string()))
                .unwrap_or_else(|| entity.clone());
            let rewrite = changes.iter().any(|c| c.rewrites_rows());
            let described: Vec<String> = changes.iter().map(|c| c.describe()).collect();
            let mut after = current.clone();
            after
                .served
                .keep_from(&served, &maskbus_pg::TableRef::parse(&entity));
            let applied = match statements(&changes) {
                Ok(sql) => {
                    let applied = self
                        .db
                        .apply_changes(Some(&root), &sql, rewrite, &after)
                        .await;
                    if applied.is_ok() {
                        current = after;
                    }
                    applied
                }
                Err(e) => {
                    failed.insert(root.clone(), e.to_string());
                    continue;
                }
            };
            match applied {
                Ok(()) => {
                    tracing::info!(entity = %root, changes = %described.join("; "), rewritten = rewrite, "schema followed")
                }
                Err(e) if e.is_transient() => return Err(e.into()),
                Err(e) => {
                    failed.insert(
                        root.clone(),
                        format!(
                            "the target refused the change ({}): {e}",
                            described.join("; ")
                        ),
                    );
                }
            }
        }
        // Whatever did not follow keeps its old description (in `current` already).
        let mut next = current.served;
        next.schemas.clone_from(&served.schemas);
        next.extensions.clone_from(&served.extensions);
        next.types.clone_from(&served.types);
        next.sequences.clone_from(&served.sequences);
        self.record(fingerprint, next, failed).await
    }
}
