//! The target's schema converged on the one the producer serves ([`SchemaSync`]), every pass:
//!
//! - a target that holds none of the synced tables gets all of them, made from the served
//!   schema in one transaction (no `pg_dump` of production on the test side);
//! - a target made another way (`pg_dump --schema-only`, by hand) is compared with the served
//!   schema on first contact: every difference is named, none undone; its tables (adopted)
//!   take a migration's changes as the source made them, retried every pass until they apply;
//! - every pass reconciles, it does not replay: the target's real catalog of the tables maskbus
//!   created is compared with the served schema (`maskbus_model::schema::diff`) and converged,
//!   each table's changes in one transaction. What rows go into (types, tables, columns,
//!   widenings, dropped constraints) goes first; a column added NOT NULL without a default goes in
//!   nullable; what rows must satisfy (NOT NULL, UNIQUE, CHECK, FOREIGN KEY, a unique index) is
//!   added once the rows are in ([`after_rows`], a check or foreign key as `NOT VALID` then
//!   `VALIDATE`). A change that gives rows new values (a new, renamed or retyped column, a table
//!   made again) forgets the table's watermark in the same transaction, so the pass writes its
//!   rows again; a type its masked values cannot take empties that column, and the rows come
//!   again under the new type (`maskbus_pg::ddl::retype_emptied`). Nothing counts as applied
//!   that is not in the target's catalog: a change the target refuses fails its table this pass,
//!   with the reason, and is tried again by the next (`crate::reconcile`);
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

/// The key of what the served schema names but does not carry (a trigger, a rule, a row
/// security policy, a storage option of a served table) in the left-out report: the table is
/// synced without it.
const NOT_SERVED_KEY: &str = "not served ";

/// Whether a left-out key names a table (the others name an extension, a dropped object or
/// one not served).
pub(crate) fn names_a_table(key: &str) -> bool {
    !key.starts_with(EXTENSION_KEY)
        && !key.starts_with(DROPPED_KEY)
        && !key.starts_with(NOT_SERVED_KEY)
}

/// Puts what the DDL builder refused into the left-out report: a table left out whole fails
/// closed by name; an object only dropped is said under its own key.
fn report_refused(refused: &[maskbus_pg::ddl::Refused], left_out: &mut BTreeMap<String, String>) {
    for r in refused {
        let key = match &r.table {
            Some(table) => table.to_string(),
            None => format!("{DROPPED_KEY}{}", r.object),
        };
        // Said once: a pass that meets it again (every pass compares) finds it known.
        if left_out.contains_key(&key) {
            continue;
        }
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
        // One process converges a target at a time (workers, a verify beside a follower): the
        // baseline is read under the lock, so none writes back a stale one.
        let _converging = self.db.converging().await?;
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
            // Every pass: the target's real catalog converges on the served schema.
            (Some(baseline), Some(fingerprint)) => {
                self.reconcile(offered, baseline, fingerprint).await?
            }
            (Some(baseline), None) => baseline.left_out,
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
        for item in std::mem::take(&mut schema.not_served) {
            let what = format!(
                "{} {} on {}",
                item.kind.label(),
                maskbus_model::shorten(&item.name),
                item.table
            );
            let reason = format!(
                "{}; the target does not have it (its owner creates it by hand if the tests need it)",
                item.kind.why()
            );
            left_out.insert(format!("{NOT_SERVED_KEY}{what}"), reason);
        }
        Ok((schema, left_out))
    }

    /// Converges the target on the served schema (see the module's reconcile notes): the served
    /// schema is asked for again when its fingerprint changed or a change is still pending; the
    /// target's real catalog is read and compared, table by table, with it; what rows go into is
    /// applied now, what they must satisfy is tried now on a table whose rows are in place, and
    /// after the pass's rows otherwise ([`after_rows`]). A table whose change the target refuses
    /// fails closed this pass, with the reason, and is tried again by the next.
    async fn reconcile(
        &self,
        offered: &[String],
        baseline: Baseline,
        fingerprint: &str,
    ) -> Result<BTreeMap<String, String>, ConsumerError> {
        let (served, mut failed) = if baseline.fingerprint == fingerprint {
            (baseline.served.clone(), baseline.left_out.clone())
        } else {
            self.fetch(offered).await?
        };
        // The difference is computed from the target's own catalog and `baseline`, which the
        // consumer alone writes (`maskbus.schema_state`, only through
        // `TargetDb::record_baseline` and `TargetDb::apply_changes`, from served schemas it
        // checked): no page, tool or served message can write it, since every name in schema
        // maskbus is refused before anything is planned or written (`crate::owned::is_reserved`:
        // `Consumer::plan`, `LocalTools`, and the served schema in `fetch`). And it changes only
        // the tables maskbus owns (`crate::owned::decide`, below).
        let created = self.db.created_tables().await?;
        // Read by their roots (a partition comes with its root's read).
        let mut names: Vec<String> = offered.to_vec();
        for table in roots_of(&baseline.served) {
            if !names.contains(&table) {
                names.push(table);
            }
        }
        let mut present = self.db.read_schema(&names).await?;
        count_lifted_as_present(&mut present, &served, &self.db.lifted().await?);
        let adopted: BTreeSet<maskbus_pg::TableRef> = present
            .tables
            .iter()
            .chain(&baseline.served.tables)
            .map(|t| t.table.clone())
            .filter(|t| !created.contains(&t.to_string()))
            .collect();
        let mut from = crate::reconcile::compared_from(&present, &baseline.served, &adopted);
        // A table the producer leaves out is left as it is: neither dropped nor changed (nor the
        // foreign keys of others to it, on either side).
        let leaving = tables_of(&failed);
        from.without_tables(&leaving);
        let mut wanted = served.clone();
        wanted.without_tables(&leaving);
        let mut changes = diff(&from, &wanted);
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
        let roots = roots(&served);
        // Types first (a table's change may need them), then each table's own.
        let mut types = Vec::new();
        let mut by_table: BTreeMap<String, Vec<&Change>> = BTreeMap::new();
        for change in &changes {
            match change.table() {
                None => types.push(change),
                Some(table) => by_table.entry(table.to_string()).or_default().push(change),
            }
        }
        // The served schema as far as the target has followed it, recorded with each table's
        // changes (an adopted table is compared from it), under the old fingerprint until every
        // table's are through: a run cut short asks for the served schema again.
        let mut current = baseline.clone();
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
                    Some(&current),
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
        let watermarks = self.db.states().await?;
        let mut refused = BTreeMap::new();
        // A change the target refused this pass: the next pass asks for the served schema again
        // and tries it again.
        let mut pending = false;
        let mut now_after: Vec<(String, Change)> = Vec::new();
        for (entity, changes) in by_table {
            let root = roots
                .get(&entity)
                .cloned()
                .unwrap_or_else(|| entity.clone());
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
            // A table maskbus adopted takes a migration's changes whole, as the source made them;
            // one it created takes what its rows go into now and what they must satisfy once
            // they are in.
            let adopted_table = adopted.contains(&table);
            let new_table = changes.iter().any(|c| matches!(c, Change::CreateTable(_)));
            let mut before: Vec<Change> = Vec::new();
            for change in &changes {
                if adopted_table {
                    before.push((*change).clone());
                } else if crate::reconcile::phase(change, new_table)
                    == crate::reconcile::Phase::BeforeRows
                {
                    before.push(crate::reconcile::before_rows(change));
                } else {
                    now_after.push((root.clone(), (*change).clone()));
                }
            }
            // A table made again (dropped by hand, say) is written again whole.
            let rewrite = new_table || before.iter().any(Change::rewrites_rows);
            let applied = if before.is_empty() {
                Ok(())
            } else {
                self.apply_before_rows(&root, &before, &served, rewrite, &after, &mut dropped)
                    .await?
            };
            match applied {
                Ok(()) => {
                    if !before.is_empty() {
                        tracing::info!(entity = %root, changes = %described.join("; "), rewritten = rewrite, "schema followed");
                    }
                    current = after;
                    owned = crate::owned::Owned::load(self.db).await?;
                }
                Err(reason) => {
                    pending = true;
                    // A table maskbus created is compared from its catalog: its served
                    // description is the one it converges on.
                    if !adopted_table {
                        current = after;
                    }
                    failed.insert(root.clone(), reason);
                }
            }
        }
        // What rows must satisfy, on a table whose rows are in place (it keeps its watermark):
        // tried now (in stream mode no pass may follow); on the others after the pass's rows.
        let mut next = current.served;
        next.schemas.clone_from(&served.schemas);
        next.extensions.clone_from(&served.extensions);
        next.types.clone_from(&served.types);
        next.sequences.clone_from(&served.sequences);
        report_refused(&dropped, &mut failed);
        let mut fingerprint = fingerprint.to_string();
        if pending {
            fingerprint.push_str(PENDING);
        }
        let mut failed = self.record(&fingerprint, next.clone(), failed).await?;
        now_after.retain(|(root, _)| watermarks.contains_key(root) && !failed.contains_key(root));
        if !now_after.is_empty() {
            let tried: Vec<String> = now_after.iter().map(|(root, _)| root.clone()).collect();
            let waiting = apply_after_rows(self.db, &next, now_after).await?;
            for w in &waiting {
                tracing::warn!(entity = %w.entity, reason = %w.reason, "a schema change waits for the table's rows; tried again after the pass's rows and every pass");
            }
            // Said where status and /health read it (its rows still sync): in stream mode no
            // pass may come to say it.
            if let Err(e) = self.db.record_failures(&tried, &waiting).await {
                tracing::warn!(error = %e, "could not record which tables failed (status and /health read it)");
            }
        }
        failed.extend(refused);
        Ok(failed)
    }

    /// Applies one table's changes that go before its rows, in one transaction. A type change
    /// whose values cannot convert (masked text into `jsonb`, say) empties that column instead
    /// (its rows are written again under the new type). Returns the reason when the target
    /// refuses; a transient failure is the error.
    async fn apply_before_rows(
        &self,
        root: &str,
        changes: &[Change],
        served: &Schema,
        rewrite: bool,
        after: &Baseline,
        dropped: &mut Vec<maskbus_pg::ddl::Refused>,
    ) -> Result<Result<(), String>, ConsumerError> {
        let refs: Vec<&Change> = changes.iter().collect();
        let described = || {
            changes
                .iter()
                .map(Change::describe)
                .collect::<Vec<_>>()
                .join("; ")
        };
        let sql = match crate::owned::steps(&refs, served, dropped) {
            Ok(sql) => sql,
            Err(e) => return Ok(Err(e.to_string())),
        };
        let e = match self
            .db
            .apply_changes(Some(root), &sql, rewrite, Some(after))
            .await
        {
            Ok(()) => return Ok(Ok(())),
            Err(e) if e.is_transient() => return Err(e.into()),
            Err(e) => e,
        };
        let cannot_convert = e
            .sqlstate()
            .is_some_and(|code| code.starts_with("22") || code == "42804");
        let retyped = changes
            .iter()
            .any(|c| matches!(c, Change::AlterColumnType { .. }));
        if !(cannot_convert && retyped) {
            return Ok(Err(format!(
                "the target refused the change ({}): {e}; it is tried again every pass",
                described()
            )));
        }
        // `PRIMARY KEY (a, "B")`, as `pg_get_constraintdef` prints it: its columns, unquoted.
        let unquoted = |k: &str| k.trim().trim_matches('"').replace("\"\"", "\"");
        let keyed = |table: &maskbus_pg::TableRef, column: &str| {
            served.constraints.iter().any(|c| {
                &c.table == table
                    && c.kind == maskbus_model::schema::ConstraintKind::Primary
                    && c.definition
                        .split_once('(')
                        .and_then(|(_, rest)| rest.split_once(')'))
                        .is_some_and(|(columns, _)| {
                            columns.split(',').any(|k| unquoted(k) == column)
                        })
            })
        };
        // A key column is never emptied: its table fails, by name, until its rows convert.
        if changes.iter().any(
            |c| matches!(c, Change::AlterColumnType { table, column, .. } if keyed(table, column)),
        ) {
            return Ok(Err(format!(
                "the target refused the change ({}): {e}; the key's values cannot take the new type, so the table needs a fresh copy (drop it from the target and the next pass makes and fills it)",
                described()
            )));
        }
        let mut steps = Vec::new();
        for change in changes {
            match change {
                Change::AlterColumnType {
                    table,
                    column,
                    sql_type,
                } => match maskbus_pg::ddl::retype_emptied(table, column, sql_type) {
                    Ok(sql) => steps.extend(sql.into_iter().map(crate::owned::Step::Sql)),
                    Err(r) => return Ok(Err(r.to_string())),
                },
                other => steps.extend(crate::owned::steps(&[other], served, dropped)?),
            }
        }
        match self
            .db
            .apply_changes(Some(root), &steps, true, Some(after))
            .await
        {
            Ok(()) => {
                tracing::warn!(entity = %root, "a column's values could not convert to its new type: the column was emptied and the table's rows are written again under the new type");
                Ok(Ok(()))
            }
            Err(e) if e.is_transient() => Err(e.into()),
            Err(e) => Ok(Err(format!(
                "the target refused the change ({}): {e}; it is tried again every pass",
                described()
            ))),
        }
    }
}

/// Counts as present the indexes and foreign keys a bulk load has lifted (`maskbus.lifted`,
/// rebuilt at its end, or by the next run after a crash): the reconcile loop never makes them
/// behind the rebuild's back.
fn count_lifted_as_present(
    present: &mut Schema,
    served: &Schema,
    lifted: &BTreeSet<(maskbus_pg::TableRef, String)>,
) {
    if lifted.is_empty() {
        return;
    }
    let has = |table: &maskbus_pg::TableRef, name: &String| {
        lifted.contains(&(table.clone(), name.clone()))
    };
    for c in &served.constraints {
        if has(&c.table, &c.name)
            && !present
                .constraints
                .iter()
                .any(|p| p.table == c.table && p.name == c.name)
        {
            present.constraints.push(c.clone());
        }
    }
    for i in &served.indexes {
        if has(&i.table, &i.name)
            && !present
                .indexes
                .iter()
                .any(|p| p.table == i.table && p.name == i.name)
        {
            present.indexes.push(i.clone());
        }
    }
}

/// What marks a recorded fingerprint whose changes the target did not all take: it matches no
/// served fingerprint, so the next pass asks for the served schema again.
const PENDING: &str = " (pending)";

/// The tables of `schema` that are no partition (a catalog read of them reads their
/// partitions too).
fn roots_of(schema: &Schema) -> Vec<String> {
    schema
        .tables
        .iter()
        .filter(|t| t.partition_of.is_none())
        .map(|t| t.table.to_string())
        .collect()
}

/// Each served table's root (a partition's rows are synced through it).
fn roots(served: &Schema) -> HashMap<String, String> {
    served
        .tables
        .iter()
        .rev()
        .map(|t| {
            let root = t.partition_of.as_ref().map(|(p, _)| p.to_string());
            let name = t.table.to_string();
            (name.clone(), root.unwrap_or(name))
        })
        .collect()
}

/// Applies what rows must satisfy (`changes`, each with its table's root), each in its own
/// transaction, a check or foreign key as `NOT VALID` then `VALIDATE`. Returns the tables whose
/// change the rows do not satisfy yet, each with the change and the reason.
async fn apply_after_rows(
    db: &TargetDb,
    served: &Schema,
    mut changes: Vec<(String, Change)>,
) -> Result<Vec<crate::Skipped>, ConsumerError> {
    changes.sort_by_key(|(_, c)| crate::reconcile::after_rows_rank(c));
    let mut waiting: Vec<crate::Skipped> = Vec::new();
    for (root, change) in changes {
        let mut dropped = Vec::new();
        let steps = crate::owned::steps(&[&change], served, &mut dropped)?;
        if steps.is_empty() {
            continue;
        }
        match db.apply_changes(Some(&root), &steps, false, None).await {
            Ok(()) => {
                tracing::info!(entity = %root, change = %change.describe(), "schema followed, the rows satisfying it");
            }
            Err(e) if e.is_transient() => return Err(e.into()),
            Err(e) => {
                let reason = format!(
                    "{} waits: the rows the target holds do not satisfy it yet ({e}); it is tried again after every pass's rows",
                    change.describe()
                );
                match waiting.iter_mut().find(|w| w.entity == root) {
                    Some(w) => {
                        w.reason.push_str("; ");
                        w.reason.push_str(&reason);
                    }
                    None => waiting.push(crate::Skipped {
                        entity: root,
                        reason,
                    }),
                }
            }
        }
    }
    Ok(waiting)
}

/// After a pass's rows: what the rows of `synced` (tables maskbus created) must satisfy and the
/// target lacks (a NOT NULL, a unique index, a check, a foreign key the served schema has),
/// applied now that they are in. Returns the tables still lacking one, with the reason: they
/// fail this pass (their rows are synced), and it is tried again by the next.
pub async fn after_rows(
    db: &TargetDb,
    synced: &BTreeSet<String>,
) -> Result<Vec<crate::Skipped>, ConsumerError> {
    let Some(baseline) = db.schema_baseline().await? else {
        return Ok(Vec::new());
    };
    let created = db.created_tables().await?;
    let served = &baseline.served;
    let roots = roots(served);
    // The tables (and partitions) of the synced roots that maskbus created; the catalog is read
    // of every served table (a foreign key is read with the table it references).
    let wanted: BTreeSet<String> = served
        .table_names()
        .into_iter()
        .filter(|t| created.contains(t))
        .filter(|t| roots.get(t).is_some_and(|root| synced.contains(root)))
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let _converging = db.converging().await?;
    let mut present = db.read_schema(&roots_of(served)).await?;
    count_lifted_as_present(&mut present, served, &db.lifted().await?);
    let present = crate::reconcile::compared_from(&present, served, &BTreeSet::new());
    let changes: Vec<(String, Change)> = diff(&present, served)
        .into_iter()
        .filter(|c| crate::reconcile::phase(c, false) == crate::reconcile::Phase::AfterRows)
        .filter_map(|c| {
            let table = c.table()?.to_string();
            if !wanted.contains(table.as_str()) {
                return None;
            }
            let root = roots.get(&table).cloned().unwrap_or(table);
            Some((root, c))
        })
        .collect();
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    apply_after_rows(db, served, changes).await
}
