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
//!   written again, alone;
//! - an extension is created only when the consumer's own allow-list names it (`extensions` in
//!   its config, else the extensions PostgreSQL marks trusted), never because the producer
//!   served its name ([`ExtensionRule`]): one it refuses is left out, named with the reason
//!   (key `extension NAME` among the tables that fail closed), and the rest of the schema is
//!   made.

use super::client::Asker;
use super::target_db::{Baseline, TargetDb};
use super::ConsumerError;
use maskbus_model::schema::{diff, Change, Extension, Schema};
use maskbus_protocol::{ReceivedReply, Request, VERSION};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How an extension the consumer refuses is named among what fails closed: never a table's
/// `schema.table` (a space is in no entity name).
const EXTENSION_KEY: &str = "extension ";

/// The key of a served object the consumer did not create in the left-out report (a default,
/// a constraint, an index whose text was refused: `maskbus_pg::ddl::Refused`): not a table,
/// so nothing fails closed with it.
const DROPPED_KEY: &str = "dropped ";

/// Whether a left-out key names a table (the others name an extension or a dropped object).
pub(crate) fn names_a_table(key: &str) -> bool {
    !key.starts_with(EXTENSION_KEY) && !key.starts_with(DROPPED_KEY)
}

/// Puts what the DDL builder refused into the left-out report: a table left out whole fails
/// closed by name; an object only dropped is said under its own key.
fn report_refused(refused: &[maskbus_pg::ddl::Refused], left_out: &mut BTreeMap<String, String>) {
    for r in refused {
        tracing::error!(object = %r.object, reason = %r.reason, "a served object is not created: its text is not a side-effect-free expression the consumer rebuilds (never run)");
        match &r.table {
            Some(table) => {
                left_out
                    .entry(table.to_string())
                    .or_insert_with(|| r.to_string());
            }
            None => {
                left_out.insert(format!("{DROPPED_KEY}{}", r.object), r.to_string());
            }
        }
    }
}

/// Which served extensions the consumer creates: the one check, for a new schema and for a
/// migration's changes alike.
pub struct ExtensionRule {
    /// The consumer config's `extensions`, or the extensions PostgreSQL marks trusted.
    allowed: BTreeSet<String>,
    configured: bool,
    /// Those the target has already (made by its owner): nothing to create, nothing to report.
    installed: BTreeSet<String>,
}

impl ExtensionRule {
    /// Why the consumer does not create `extension`, or `None` when it may (or need not: the
    /// target has it).
    pub fn refusal(&self, extension: &Extension) -> Option<String> {
        if self.allowed.contains(&extension.name) || self.installed.contains(&extension.name) {
            return None;
        }
        let list = if self.configured {
            "the consumer's `extensions` list"
        } else {
            "the extensions PostgreSQL marks trusted (the default of the consumer's `extensions` list)"
        };
        Some(format!(
            "the served schema asks for extension {}, which is not among {list}: it is never created from a served name. Tables that need it cannot be made until the test database's owner creates it, or `extensions` names it",
            maskbus_model::shorten(&extension.name)
        ))
    }

    /// Leaves out of `schema` the extensions refused, each named in `left_out` with the reason.
    fn leave_out(&self, schema: &mut Schema, left_out: &mut BTreeMap<String, String>) {
        schema.extensions.retain(|e| {
            if let Some(reason) = self.refusal(e) {
                tracing::error!(extension = %maskbus_model::shorten(&e.name), "a served extension is not on the consumer's allow-list: left out, never created");
                left_out.insert(extension_key(e), reason);
                return false;
            }
            // One the target has already, and the list does not name, needs no statement.
            self.allowed.contains(&e.name)
        });
    }
}

fn extension_key(extension: &Extension) -> String {
    format!("{EXTENSION_KEY}{}", maskbus_model::shorten(&extension.name))
}

/// The tables among what fails closed (an extension refused is not one).
fn tables_of(left_out: &BTreeMap<String, String>) -> Vec<maskbus_pg::TableRef> {
    left_out
        .keys()
        .filter(|k| names_a_table(k))
        .map(|k| maskbus_pg::TableRef::parse(k))
        .collect()
}

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
    /// The consumer config's `extensions` (`None`: PostgreSQL's trusted ones).
    extensions: Option<&'a [String]>,
}

impl<'a> SchemaSync<'a> {
    pub fn new(asker: &'a Asker, db: &'a TargetDb, extensions: Option<&'a [String]>) -> Self {
        Self {
            asker,
            db,
            extensions,
        }
    }

    /// The extension rule, read now: the configured list, or the target's trusted extensions.
    async fn extension_rule(&self) -> Result<ExtensionRule, ConsumerError> {
        let (trusted, installed) = self.db.extensions().await?;
        Ok(match self.extensions {
            Some(list) => ExtensionRule {
                allowed: list.iter().cloned().collect(),
                configured: true,
                installed,
            },
            None => ExtensionRule {
                allowed: trusted,
                configured: false,
                installed,
            },
        })
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
                let (schema, mut left_out) = self.fetch(offered).await?;
                if let Some(refused) = self.db.create_schema(&schema).await? {
                    report_refused(&refused, &mut left_out);
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
                schema.keep_all_from(&present, &tables_of(&left_out));
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
        for (entity, reason) in failed.iter().filter(|(k, _)| names_a_table(k)) {
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
            mut schema,
            left_out,
            ..
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
        // Nothing of a served schema lands in maskbus's own schema, or PostgreSQL's.
        if let Some(object) = crate::owned::reserved_object(&schema) {
            return Err(ConsumerError::BadReply {
                entity: String::new(),
                reason: format!("the served schema puts {object} into a schema maskbus never writes (its own bookkeeping, or PostgreSQL's)"),
            });
        }
        let mut left_out = left_out
            .into_iter()
            .map(|l| {
                (
                    maskbus_model::qualify(&l.entity),
                    format!("the producer did not serve its schema: {}", l.reason),
                )
            })
            .collect();
        if !schema.extensions.is_empty() {
            self.extension_rule()
                .await?
                .leave_out(&mut schema, &mut left_out);
        }
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
        // The difference is computed from `baseline`, which the consumer alone writes
        // (`maskbus.schema_state`, only through `TargetDb::record_baseline` and
        // `TargetDb::apply_changes`, from served schemas it checked): no page, tool or served
        // message can write it, since every name in schema maskbus is refused before anything
        // is planned or written (`crate::owned::is_reserved`: `Consumer::plan`, `LocalTools`,
        // and the served schema in `fetch`). And it changes only the tables maskbus owns
        // (`crate::owned::decide`, below).
        let old = baseline.served.clone();
        // The served schema as far as the target has followed it, recorded with each table's
        // changes: a run cut short resumes with what is left.
        let mut current = baseline.clone();
        let mut from = old.clone();
        from.without_tables(&tables_of(&failed));
        let mut changes = diff(&from, &served);
        // An extension is created only by the rule `fetch` applied: a change asking for another
        // is left out with its reason, never run.
        if changes
            .iter()
            .any(|c| matches!(c, Change::CreateExtension(_)))
        {
            let rule = self.extension_rule().await?;
            changes.retain(|change| {
                let Change::CreateExtension(e) = change else {
                    return true;
                };
                let Some(reason) = rule.refusal(e) else {
                    return true;
                };
                failed.insert(extension_key(e), reason);
                false
            });
        }
        // A partition's rows are synced through its root.
        let roots: HashMap<String, String> = served
            .tables
            .iter()
            .rev()
            .map(|t| {
                let root = t.partition_of.as_ref().map(|(p, _)| p.to_string());
                let name = t.table.to_string();
                (name.clone(), root.unwrap_or(name))
            })
            .collect();
        // Types first (a table's change may need them), then each table's own.
        let mut types = Vec::new();
        let mut by_table: BTreeMap<String, Vec<&Change>> = BTreeMap::new();
        for change in &changes {
            match change.table() {
                None => types.push(change),
                Some(table) => by_table.entry(table.to_string()).or_default().push(change),
            }
        }
        // Defaults, constraints and indexes whose served text was refused: dropped, said.
        let mut dropped = Vec::new();
        if !types.is_empty() {
            current.served.schemas.clone_from(&served.schemas);
            current.served.extensions.clone_from(&served.extensions);
            current.served.types.clone_from(&served.types);
            current.served.sequences.clone_from(&served.sequences);
            self.db
                .apply_changes(
                    None,
                    &crate::owned::steps(&types, &served, &mut dropped)?,
                    false,
                    &current,
                )
                .await?;
            for change in &types {
                tracing::info!(change = %change.describe(), "schema followed");
            }
        }
        // Only the tables maskbus owns change; one it does not own is left as it is, and when
        // it is served it fails closed by name (never recorded: once adopted, it follows).
        let mut owned = crate::owned::Owned::load(self.db).await?;
        let names: Vec<String> = by_table.keys().cloned().collect();
        let missing: BTreeSet<String> = self.db.missing_tables(&names).await?.into_iter().collect();
        let mut refused = BTreeMap::new();
        for (entity, changes) in by_table {
            let root = roots
                .get(&entity)
                .cloned()
                .unwrap_or_else(|| entity.clone());
            let rewrite = changes.iter().any(|c| c.rewrites_rows());
            let described: Vec<String> = changes.iter().map(|c| c.describe()).collect();
            let mut after = current.clone();
            let table = maskbus_pg::TableRef::parse(&entity);
            after.served.keep_from(&served, &table);
            let exists = !missing.contains(&entity);
            match crate::owned::decide(&table, &changes, exists, &owned) {
                crate::owned::Decision::Apply => {}
                crate::owned::Decision::Describe => {
                    tracing::warn!(%entity, changes = %described.join("; "), "a table maskbus adopted as it was: its served description is taken and nothing of the change runs (its differences stay, as on a first run)");
                    current = after;
                    continue;
                }
                crate::owned::Decision::LeaveAlone => {
                    tracing::warn!(%entity, "a table no longer served that maskbus does not own: left as it is");
                    current = after;
                    continue;
                }
                crate::owned::Decision::Refuse(reason) => {
                    tracing::error!(%entity, %reason, "the served schema changes a table maskbus does not own: nothing of it runs");
                    refused.insert(root.clone(), reason);
                    continue;
                }
            }
            let applied = match crate::owned::steps(&changes, &served, &mut dropped) {
                Ok(sql) => {
                    let applied = self
                        .db
                        .apply_changes(Some(&root), &sql, rewrite, &after)
                        .await;
                    if applied.is_ok() {
                        current = after;
                        // As the target has it now (a table left out is not made).
                        owned = crate::owned::Owned::load(self.db).await?;
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
        report_refused(&dropped, &mut failed);
        let mut failed = self.record(fingerprint, next, failed).await?;
        failed.extend(refused);
        Ok(failed)
    }
}
