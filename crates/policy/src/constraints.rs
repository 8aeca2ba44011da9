//! Constraints are checked, not guessed: `policy check` runs each masked column's rule over the
//! sample and evaluates what the target will hold it to (the column's type and length, NOT NULL,
//! the unique keys, the table's CHECK constraints), and names every conflict with a rule that
//! fits, tried on the same sample. It also says what the served schema leaves out: tables the
//! schema boundary refuses ([`maskbus_mask::schema::serve`], the producer's own judgement), and
//! the triggers, rules, row security policies and storage options no served schema carries.
//!
//! The CHECKs are evaluated by the source itself, over the masked values as bind parameters, in
//! a READ ONLY transaction: the only SQL text run is the source's own catalog expression
//! (`pg_get_expr`), never served or request text; nothing it runs can write.

use maskbus_mask::fit::{Line, Verdict};
use maskbus_mask::{CellShape, Policy, Rule};
use maskbus_pg::tokio_postgres::Client;
use maskbus_pg::{Database, PgError, TableInfo, TableRef};
use std::collections::HashSet;

/// The rows of one table `policy check` read, as [`crate::sample`] read them.
pub(crate) struct Sampled<'a> {
    pub info: &'a TableInfo,
    pub columns: &'a [String],
    pub rows: &'a [Vec<Option<String>>],
}

/// One CHECK constraint of a table, from the source's catalog.
struct Check {
    name: String,
    expression: String,
    columns: Vec<String>,
}

/// The rules tried, in order, when a rule breaks a constraint: the first whose output on the
/// sample passes every check (and changes every value) is named. None keeps part of the value
/// (`first_letter`, `last_four`): `policy init` takes what is named here.
const CANDIDATES: &[&str] = &[
    "{ pseudonym = \"digits\" }",
    "{ pseudonym = \"ssn\" }",
    "{ pseudonym = \"token\" }",
    "{ pseudonym = \"email\" }",
    "{ pseudonym = \"last_name\" }",
    "\"redact\"",
    "\"null\"",
];

/// The most masked rows of a table whose CHECKs and types the source evaluates (uniqueness,
/// lengths and NOT NULL are judged over all the rows read).
const EVALUATED_ROWS: usize = 10_000;

/// The tables the producer's schema boundary refuses ([`maskbus_mask::schema::serve`], with
/// `policy`'s guard: the check's exact matcher of real values when it read a sample): a table it
/// refuses is not synced, so `policy check` says so as an error.
pub(crate) async fn boundary(source: &Database, policy: &Policy) -> Result<Vec<Line>, PgError> {
    let tables: Vec<TableRef> = policy
        .entities()
        .map(|(entity, _)| TableRef::parse(entity))
        .collect();
    let client = source.connect().await?;
    let (schema, unreadable) = maskbus_pg::schema_read::read(source, &client, &tables).await?;
    let refused = unreadable
        .into_iter()
        .map(|u| (u.table, u.reason))
        .collect();
    let served = maskbus_mask::schema::serve(schema, refused, policy);
    let mut lines = Vec::new();
    for left in served.left_out() {
        // What the catalog check says already (a column without a rule) is not said twice.
        if !left.reason.contains("looks like") {
            continue;
        }
        lines.push(Line {
            entity: left.entity.clone(),
            column: "(schema)".into(),
            column_type: "-".into(),
            rule: "-".into(),
            verdict: Verdict::Error(format!(
                "the producer's schema boundary leaves this table out: {}; it is not synced",
                left.reason
            )),
        });
    }
    Ok(lines)
}

/// What no served schema carries of the policy's tables (triggers, rules, row security
/// policies, storage options), by name, as warnings: the target will not have them.
pub(crate) async fn not_served(source: &Database, policy: &Policy) -> Result<Vec<Line>, PgError> {
    let names: Vec<String> = policy
        .entities()
        .map(|(entity, _)| {
            let table = TableRef::parse(entity);
            format!("{}\u{1}{}", table.schema, table.name)
        })
        .collect();
    let client = source.connect().await?;
    let rows = client
        .query(maskbus_pg::statements::NOT_SERVED_OF_TABLES, &[&names])
        .await
        .map_err(|e| source.query_error("reading the triggers of the policy's tables", &e))?;
    let mut lines = Vec::new();
    for row in rows {
        let Some(kind) = maskbus_model::schema::NotServedKind::from_catalog(row.get(2)) else {
            continue;
        };
        let table = TableRef::new(row.get::<_, String>(0), row.get::<_, String>(1));
        let name: String = row.get(3);
        let named = match policy.guard().name(&name) {
            None => maskbus_mask::shorten(&name),
            Some(detector) => format!("(its name looks like {detector})"),
        };
        lines.push(Line {
            entity: table.to_string(),
            column: "(not served)".into(),
            column_type: "-".into(),
            rule: "-".into(),
            verdict: Verdict::Warning(format!(
                "{} {named} is left out of the served schema: {}; the target does not have it (create it there by hand if the tests need it)",
                kind.label(),
                kind.why()
            )),
        });
    }
    Ok(lines)
}

/// A column whose rule's output on the sample the target's constraints refuse: the line
/// `policy check` prints, and the rule that fits the same sample, if one does.
pub(crate) struct Conflict {
    pub line: Line,
    pub fits: Option<String>,
}

/// The conflicts between each masked column's output on the sample and the target's
/// constraints, each with a rule that fits. `policy` masks as the producer does (its key and
/// guard set by the caller).
pub(crate) async fn judge(
    source: &Database,
    policy: &Policy,
    tables: &[Sampled<'_>],
) -> Result<Vec<Conflict>, PgError> {
    let client = source.connect().await?;
    client
        .batch_execute(maskbus_pg::statements::READ_ONLY_CHECKS)
        .await
        .map_err(|e| source.query_error("starting a read-only transaction", &e))?;
    let mut conflicts = Vec::new();
    for table in tables {
        conflicts.extend(judge_table(source, &client, policy, table).await?);
    }
    let _ = client.batch_execute("ROLLBACK").await;
    Ok(conflicts)
}

fn shapes(info: &TableInfo) -> Vec<CellShape> {
    info.synced_columns()
        .map(|c| CellShape::of(&c.data_type, c.max_length))
        .collect()
}

async fn judge_table(
    source: &Database,
    client: &Client,
    policy: &Policy,
    table: &Sampled<'_>,
) -> Result<Vec<Conflict>, PgError> {
    let info = table.info;
    let entity = info.table.to_string();
    let Some(rules) = policy.entity(&entity) else {
        return Ok(Vec::new());
    };
    let Ok(masker) = policy.masker(&entity, table.columns) else {
        return Ok(Vec::new()); // the catalog check says why
    };
    let masker = masker.with_shapes(shapes(info));
    // The rows the guard lets through (it names the others), masked, with their originals.
    let mut originals = Vec::new();
    let mut masked = Vec::new();
    for row in table.rows {
        if let Ok(m) = masker.mask(row.clone()) {
            originals.push(row.clone());
            masked.push(m.values().to_vec());
        }
    }
    if masked.is_empty() {
        return Ok(Vec::new());
    }
    let checks: Vec<Check> = client
        .query(
            maskbus_pg::statements::CHECKS_OF_TABLE,
            &[&info.table.schema, &info.table.name],
        )
        .await
        .map_err(|e| source.query_error(format!("reading the checks of {entity}"), &e))?
        .iter()
        .map(|r| Check {
            name: r.get(0),
            expression: r.get(1),
            columns: r.get(2),
        })
        .collect();
    let mut lines = Vec::new();
    for (at, column) in table.columns.iter().enumerate() {
        let Some(rule) = rules.rule(column) else {
            continue;
        };
        if *rule == Rule::Keep {
            continue;
        }
        let conflicts = conflicts(client, policy, table, &checks, at, &masked).await?;
        if conflicts.is_empty() {
            continue;
        }
        let fitting = fitting_rule(client, policy, table, &checks, at, &originals, &masked).await?;
        let fits = match &fitting {
            Some(rule) => format!("a rule that fits the sample: {column} = {rule}"),
            None => "no rule maskbus tried fits the sample: choose one whose output the \
                     constraint accepts"
                .to_string(),
        };
        let sql_type = info
            .column(column)
            .map(|c| c.sql_type.clone())
            .unwrap_or_else(|| "-".into());
        for why in conflicts {
            lines.push(Conflict {
                line: Line {
                    entity: entity.clone(),
                    column: column.clone(),
                    column_type: sql_type.clone(),
                    rule: rule.name(),
                    verdict: Verdict::Error(format!(
                        "rule {} {why}: the target refuses such a row and the table's sync fails; {fits}",
                        rule.name()
                    )),
                },
                fits: fitting.clone(),
            });
        }
    }
    Ok(lines)
}

/// Runs `sql` in a savepoint: an error (a value that does not cast) is `None`, and the
/// transaction goes on.
async fn in_savepoint(
    client: &Client,
    sql: &str,
    params: &[&(dyn maskbus_pg::tokio_postgres::types::ToSql + Sync)],
) -> Option<i64> {
    client.batch_execute("SAVEPOINT maskbus_check").await.ok()?;
    match client.query_one(sql, params).await {
        Ok(row) => {
            let _ = client
                .batch_execute("RELEASE SAVEPOINT maskbus_check")
                .await;
            row.try_get::<_, i64>(0).ok()
        }
        Err(_) => {
            let _ = client
                .batch_execute("ROLLBACK TO SAVEPOINT maskbus_check")
                .await;
            None
        }
    }
}

/// Why the masked values of column `at` (in `masked`, every column's output row by row) would
/// be refused by the target: a reason per constraint broken, never a value.
async fn conflicts(
    client: &Client,
    policy: &Policy,
    table: &Sampled<'_>,
    checks: &[Check],
    at: usize,
    masked: &[Vec<Option<String>>],
) -> Result<Vec<String>, PgError> {
    let info = table.info;
    let name = &table.columns[at];
    let Some(column) = info.column(name) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let outputs: Vec<Option<String>> = masked.iter().map(|r| r[at].clone()).collect();
    let n = outputs.len();
    if !column.nullable && outputs.iter().any(Option::is_none) {
        out.push(format!(
            "writes NULL into NOT NULL column {}",
            maskbus_mask::shorten(name)
        ));
    }
    let array = column.data_type == "ARRAY";
    if let (Some(limit), false) = (column.max_length, array) {
        let longest = outputs
            .iter()
            .flatten()
            .map(|v| v.chars().count())
            .max()
            .unwrap_or(0);
        if longest > limit {
            out.push(format!(
                "writes values of up to {longest} characters into {} (at most {limit})",
                column.sql_type
            ));
        }
    }
    // The source evaluates at most this many rows (the sample is bounded; `--full` is not).
    let present: Vec<String> = outputs
        .iter()
        .flatten()
        .take(EVALUATED_ROWS)
        .cloned()
        .collect();
    let typed = in_savepoint(
        client,
        &maskbus_pg::statements::casts_to(&column.sql_type),
        &[&present],
    )
    .await
    .is_some();
    if !typed {
        out.push(format!(
            "writes values that are not a valid {}",
            column.sql_type
        ));
    }
    // Unique keys: two rows of the sample with the same masked key collide in the target.
    let mut keys: Vec<(String, Vec<String>)> = info
        .primary_key
        .iter()
        .map(|k| ("the primary key".to_string(), k.clone()))
        .collect();
    keys.extend(info.unique_keys.iter().map(|(index, k)| {
        (
            format!("unique index {}", maskbus_mask::shorten(index)),
            k.clone(),
        )
    }));
    for (what, key) in keys {
        if !key.contains(name) {
            continue;
        }
        let positions: Option<Vec<usize>> = key
            .iter()
            .map(|k| table.columns.iter().position(|c| c == k))
            .collect();
        let Some(positions) = positions else { continue };
        let mut seen = HashSet::new();
        let collide = masked.iter().any(|row| {
            let tuple: Option<Vec<&str>> = positions.iter().map(|p| row[*p].as_deref()).collect();
            tuple.is_some_and(|t| !seen.insert(t))
        });
        if collide {
            out.push(format!(
                "gives two rows of the sample the same value of {what} ({})",
                key.join(", ")
            ));
        }
    }
    // The CHECKs that mention the column, over the masked rows, by the source itself.
    for check in checks.iter().filter(|c| c.columns.contains(name)) {
        let mut typed_columns = Vec::new();
        let mut arrays: Vec<Vec<Option<String>>> = Vec::new();
        for c in &check.columns {
            let (Some(p), Some(def)) = (table.columns.iter().position(|x| x == c), info.column(c))
            else {
                break;
            };
            typed_columns.push((c.clone(), def.sql_type.clone()));
            arrays.push(
                masked
                    .iter()
                    .take(EVALUATED_ROWS)
                    .map(|r| r[p].clone())
                    .collect(),
            );
        }
        if typed_columns.len() != check.columns.len() || !typed {
            continue; // a generated column, or values that do not cast (said above)
        }
        let sql = maskbus_pg::statements::failing_check(&typed_columns, &check.expression);
        let params: Vec<&(dyn maskbus_pg::tokio_postgres::types::ToSql + Sync)> = arrays
            .iter()
            .map(|a| a as &(dyn maskbus_pg::tokio_postgres::types::ToSql + Sync))
            .collect();
        let Some(failing) = in_savepoint(client, &sql, &params).await else {
            continue;
        };
        if failing > 0 {
            let shown = match policy.guard().sql(&check.name, &check.expression) {
                None => format!(" CHECK {}", maskbus_pg::excerpt(&check.expression, 120)),
                Some(_) => String::new(),
            };
            out.push(format!(
                "breaks constraint {}{shown} on {failing} of {} masked rows of the sample",
                maskbus_mask::shorten(&check.name),
                n.min(EVALUATED_ROWS)
            ));
        }
    }
    Ok(out)
}

/// The first of [`CANDIDATES`] (other than the column's rule) whose output on the sample passes
/// every check of [`conflicts`], changes every value it is given and passes the guard.
#[allow(clippy::too_many_arguments)]
async fn fitting_rule(
    client: &Client,
    policy: &Policy,
    table: &Sampled<'_>,
    checks: &[Check],
    at: usize,
    originals: &[Vec<Option<String>>],
    masked: &[Vec<Option<String>>],
) -> Result<Option<String>, PgError> {
    let info = table.info;
    let entity = info.table.to_string();
    let column = &table.columns[at];
    let current = policy
        .entity(&entity)
        .and_then(|r| r.rule(column))
        .map(|r| r.name());
    let Some(key) = policy.key().cloned() else {
        return Ok(None);
    };
    let shape = info
        .column(column)
        .map(|c| CellShape::of(&c.data_type, c.max_length))
        .unwrap_or_default();
    let quoted = serde_json::to_string(column).unwrap_or_default();
    for candidate in CANDIDATES {
        let text = format!(
            "[\"{}\".\"{}\"]\n{quoted} = {candidate}\n",
            info.table.schema.replace(['"', '\\'], ""),
            info.table.name.replace(['"', '\\'], "")
        );
        let Ok(trial) = Policy::from_toml("candidate", &text) else {
            continue;
        };
        let trial = trial
            .with_key(key.clone())
            .with_guard(policy.guard().clone());
        let Some(rule) = trial.entity(&entity).and_then(|r| r.rule(column)) else {
            continue;
        };
        if Some(rule.name()) == current {
            continue;
        }
        let Ok(masker) = trial.masker(&entity, std::slice::from_ref(column)) else {
            continue;
        };
        let masker = masker.with_shapes(vec![shape]);
        let mut rows = masked.to_vec();
        let mut fits = true;
        for (row, original) in rows.iter_mut().zip(originals) {
            match masker.mask(vec![original[at].clone()]) {
                Ok(m) => {
                    let out = m.values()[0].clone();
                    // A rule that leaves a value as it was hides nothing.
                    if out.is_some() && out == original[at] {
                        fits = false;
                        break;
                    }
                    row[at] = out;
                }
                Err(_) => {
                    fits = false;
                    break;
                }
            }
        }
        if fits
            && conflicts(client, policy, table, checks, at, &rows)
                .await?
                .is_empty()
        {
            return Ok(Some(candidate.to_string()));
        }
    }
    Ok(None)
}
