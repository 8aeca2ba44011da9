//! What `maskbus policy check` reads of the rows: a sample spread over each whole table (or every
//! row), masked as the producer masks them, its egress guard included, so "exit 0" means the
//! rows it read would cross, and a column whose rule lets personal data through is named with
//! the detector that fired and how many rows did, never a value.
//!
//! The guard here is the producer's ([`maskbus_mask::egress::Guard`]): the audit's detectors,
//! the reviewed columns the caller gives, and an exact matcher of the real values of the masked
//! columns, loaded from the rows read (with [`Sample::Full`], from every row, as a producer loads
//! them). One judgement, in one place: the check says what the producer would refuse.

use maskbus_mask::fit::{Line, Verdict};
use maskbus_mask::{MaskError, Policy, PseudonymKey, Rule};
use maskbus_pg::{Database, PgError, TableInfo};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// How many rows the check reads of each table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// None: the catalog alone.
    Off,
    /// Up to this many rows of each table, spread over all of it.
    Rows(u32),
    /// Every row.
    Full,
}

impl Sample {
    /// The rows of each table `policy check` reads unless told otherwise.
    pub const DEFAULT_ROWS: u32 = 1000;
}

impl Default for Sample {
    fn default() -> Self {
        Sample::Rows(Self::DEFAULT_ROWS)
    }
}

/// What the check read: how many tables and rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleRead {
    pub tables: usize,
    pub rows: u64,
}

/// The rows of one table read for the check, in the order of `columns`.
struct Read {
    info: TableInfo,
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

/// Reads the sample of every table of `policy` and judges it: the guard's refusals, and the
/// sampled values of kept columns and of digit pseudonyms as before (counts only).
pub async fn judge(
    source: &Database,
    policy: &Policy,
    sample: Sample,
) -> Result<(Vec<Line>, SampleRead), PgError> {
    judge_reviewed(
        source,
        policy,
        sample,
        maskbus_mask::egress::Reviewed::default(),
    )
    .await
}

/// As [`judge`], the guard leaving the `reviewed` columns unread.
pub async fn judge_reviewed(
    source: &Database,
    policy: &Policy,
    sample: Sample,
    reviewed: maskbus_mask::egress::Reviewed,
) -> Result<(Vec<Line>, SampleRead), PgError> {
    let mut read = SampleRead::default();
    // What the served schema leaves out, and the boundary's refusals (`crate::constraints`).
    let mut lines = crate::constraints::not_served(source, policy).await?;
    if sample == Sample::Off {
        lines.extend(crate::constraints::boundary(source, policy).await?);
        return Ok((lines, read));
    }
    let client = source.connect().await?;
    let fks = maskbus_pg::catalog::foreign_keys(source, &client, &policy.schemas()).await?;
    let sampled = read_tables(source, &client, policy, sample).await?;
    read.tables = sampled.len();
    read.rows = sampled.iter().map(|t| t.rows.len() as u64).sum();
    // The matcher of real values: every masked column's values, from every row when the check
    // reads them all, else from the rows it read.
    let matcher = match sample {
        Sample::Full => {
            crate::real_values::load(
                source,
                policy,
                crate::real_values::Columns::Masked,
                reviewed.columns(),
                usize::MAX,
                crate::real_values::random_key(),
            )
            .await?
            .0
        }
        _ => sample_matcher(policy, &sampled),
    };
    // Pseudonyms need a key to mask: the check draws one of its own when it was given none.
    let policy = policy
        .clone()
        .with_key(
            policy
                .key()
                .cloned()
                .unwrap_or_else(|| PseudonymKey::new(&crate::real_values::random_key())),
        )
        .with_guard(
            maskbus_mask::egress::Guard::default()
                .with_exact(Arc::new(matcher))
                .with_reviewed(reviewed),
        );
    for table in &sampled {
        let entity = table.info.table.to_string();
        let reviewed = policy.guard().reviewed().columns();
        // One line per column: the counts across the sample say more (the pattern, and why a
        // digit pseudonym passes a value), the guard's refusal says a single row.
        let valued: Vec<Line> = value_lines(&policy, table, &fks)
            .into_iter()
            .filter(|l| !reviewed.contains(&(entity.clone(), l.column.to_lowercase())))
            .collect();
        let said: HashSet<String> = valued.iter().map(|l| l.column.clone()).collect();
        lines.extend(
            guard_lines(&policy, table)
                .into_iter()
                .filter(|l| !said.contains(&l.column)),
        );
        lines.extend(valued);
        // Rules whose output still holds the input (`crate::rule_fit`).
        lines.extend(crate::rule_fit::judge(
            &policy,
            &table.info,
            &table.columns,
            &table.rows,
        ));
    }
    // The boundary, with the guard as the producer's; the target's constraints on the rules'
    // output (`crate::constraints`).
    lines.extend(crate::constraints::boundary(source, &policy).await?);
    let views: Vec<crate::constraints::Sampled<'_>> = sampled
        .iter()
        .map(|t| crate::constraints::Sampled {
            info: &t.info,
            columns: &t.columns,
            rows: &t.rows,
        })
        .collect();
    lines.extend(
        crate::constraints::judge(source, &policy, &views)
            .await?
            .into_iter()
            .map(|c| c.line),
    );
    Ok((lines, read))
}

/// The sample of every table of `policy`.
async fn read_tables(
    source: &Database,
    client: &maskbus_pg::tokio_postgres::Client,
    policy: &Policy,
    sample: Sample,
) -> Result<Vec<Read>, PgError> {
    let tables = maskbus_pg::catalog::tables(source, client, &policy.schemas()).await?;
    let mut sampled = Vec::new();
    for info in tables {
        if policy.entity(&info.table.to_string()).is_none() {
            continue;
        }
        let columns: Vec<String> = info.synced_columns().map(|c| c.name.clone()).collect();
        let rows = rows_of(source, client, &info, &columns, sample).await?;
        sampled.push(Read {
            info,
            columns,
            rows,
        });
    }
    Ok(sampled)
}

/// For each column whose rule keeps what it claims to hide on the default sample
/// ([`crate::rule_fit`]), the rule that hides it (entity, column, rule as a policy writes it):
/// what `policy init` proposes instead, so its output passes `policy check`.
pub(crate) async fn rule_fits(
    source: &Database,
    policy: &Policy,
) -> Result<Vec<(String, String, String)>, PgError> {
    let client = source.connect().await?;
    let sampled = read_tables(source, &client, policy, Sample::default()).await?;
    let policy = policy
        .clone()
        .with_key(PseudonymKey::new(&crate::real_values::random_key()));
    Ok(sampled
        .iter()
        .flat_map(|t| {
            let entity = t.info.table.to_string();
            crate::rule_fit::fits(&policy, &t.info, &t.columns, &t.rows)
                .into_iter()
                .map(move |(column, rule)| (entity.clone(), column, rule))
        })
        .collect())
}

/// For each column whose rule's output on the default sample the target's constraints refuse,
/// the rule that fits the same sample (entity, column, rule as a policy writes it): what
/// `policy init` proposes instead, so its output passes `policy check`.
pub(crate) async fn constraint_fits(
    source: &Database,
    policy: &Policy,
) -> Result<Vec<(String, String, String)>, PgError> {
    let client = source.connect().await?;
    let sampled = read_tables(source, &client, policy, Sample::default()).await?;
    let policy = policy
        .clone()
        .with_key(PseudonymKey::new(&crate::real_values::random_key()));
    let views: Vec<crate::constraints::Sampled<'_>> = sampled
        .iter()
        .map(|t| crate::constraints::Sampled {
            info: &t.info,
            columns: &t.columns,
            rows: &t.rows,
        })
        .collect();
    Ok(crate::constraints::judge(source, &policy, &views)
        .await?
        .into_iter()
        .filter_map(|c| c.fits.map(|rule| (c.line.entity, c.line.column, rule)))
        .collect())
}

/// Up to the sample's rows of `info`, spread over the whole table, as text.
async fn rows_of(
    source: &Database,
    client: &maskbus_pg::tokio_postgres::Client,
    info: &TableInfo,
    columns: &[String],
    sample: Sample,
) -> Result<Vec<Vec<Option<String>>>, PgError> {
    if columns.is_empty() {
        return Ok(Vec::new());
    }
    let what = || format!("sampling rows of {}", info.table);
    let rows = match sample {
        Sample::Off => return Ok(Vec::new()),
        Sample::Full => client
            .query(
                &maskbus_pg::statements::column_texts(&info.table, columns),
                &[],
            )
            .await
            .map_err(|e| source.query_error(what(), &e))?,
        Sample::Rows(n) => {
            // Each row with a chance of half again the share the sample needs, so the limit is
            // reached by rows from all over the table; a table never analyzed is counted.
            // The planner's estimate (a partitioned table's leaves summed); counted when the
            // table was never analyzed.
            let estimate: Option<f64> = client
                .query_opt(
                    maskbus_pg::statements::ESTIMATED_SIZE,
                    &[&info.table.schema, &info.table.name],
                )
                .await
                .map_err(|e| source.query_error(what(), &e))?
                .and_then(|row| row.get(0));
            let total = match estimate {
                Some(rows) if rows > 0.0 => rows,
                _ => {
                    let count: i64 = client
                        .query_one(&maskbus_pg::statements::count_rows(&info.table), &[])
                        .await
                        .map_err(|e| source.query_error(what(), &e))?
                        .get(0);
                    count as f64
                }
            };
            let percent = (f64::from(n) * 150.0 / total.max(1.0)).min(100.0);
            client
                .query(
                    &maskbus_pg::statements::spread_sample_rows(&info.table, columns),
                    &[&percent, &i64::from(n)],
                )
                .await
                .map_err(|e| source.query_error(what(), &e))?
        }
    };
    Ok(rows
        .iter()
        .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
        .collect())
}

/// The exact matcher of the real values of the masked columns among the rows read, each judged
/// as a producer's load judges it ([`crate::real_values::real_value`]).
fn sample_matcher(policy: &Policy, sampled: &[Read]) -> maskbus_audit::ExactMatcher {
    let mut matcher = maskbus_audit::ExactMatcher::new(crate::real_values::random_key());
    let pseudonyms: Vec<_> = policy
        .entities()
        .flat_map(|(_, rules)| {
            rules.columns().filter_map(|(_, rule)| match rule {
                Rule::Pseudonym(kind) => Some(*kind),
                _ => None,
            })
        })
        .collect();
    let names = maskbus_audit::exact::Names::new(policy.entities().flat_map(|(entity, rules)| {
        std::iter::once(entity).chain(rules.columns().map(|(column, _)| column))
    }));
    for table in sampled {
        let Some(rules) = policy.entity(&table.info.table.to_string()) else {
            continue;
        };
        for (at, column) in table.columns.iter().enumerate() {
            let Some(rule) = rules.rule(column).filter(|r| **r != Rule::Keep) else {
                continue;
            };
            for value in table.rows.iter().filter_map(|row| row[at].as_deref()) {
                if let crate::real_values::RealValue::Load(normalized) =
                    crate::real_values::real_value(column, rule, value, &pseudonyms, &names)
                {
                    matcher.add(&normalized);
                }
            }
        }
    }
    matcher
}

/// The guard's refusals among the rows of `table`, a line per column and detector with the
/// count of rows.
fn guard_lines(policy: &Policy, table: &Read) -> Vec<Line> {
    let entity = table.info.table.to_string();
    let Ok(masker) = policy.masker(&entity, &table.columns) else {
        return Vec::new(); // the catalog check says why
    };
    let shapes = table
        .info
        .synced_columns()
        .map(|c| maskbus_mask::CellShape::of(&c.data_type, c.max_length))
        .collect();
    let masker = masker.with_shapes(shapes);
    let mut refused: BTreeMap<(String, String, &'static str), usize> = BTreeMap::new();
    for row in &table.rows {
        if let Err(MaskError::Egress {
            column,
            rule,
            detector,
            ..
        }) = masker.mask(row.clone())
        {
            *refused.entry((column, rule, detector)).or_default() += 1;
        }
    }
    refused
        .into_iter()
        .map(|((column, rule, detector), n)| Line {
            entity: entity.clone(),
            column,
            column_type: "-".into(),
            rule: rule.clone(),
            verdict: Verdict::Error(format!(
                "what {rule} leaves of {n} of {} rows read reads as {detector}: the producer's egress guard refuses such a row, and the table is not synced; give the column a rule that hides it, or list it with a reason in the reviewed-columns file (producer config reviewed_columns)",
                table.rows.len()
            )),
        })
        .collect()
}

/// The sampled values of kept columns and of digit pseudonyms, judged as counts (a pattern
/// across the sample, even when no row alone is refused): see
/// [`crate::schema_check::judge_kept_sample`].
fn value_lines(policy: &Policy, table: &Read, fks: &[maskbus_pg::model::ForeignKey]) -> Vec<Line> {
    let info = &table.info;
    let entity = info.table.to_string();
    let Some(rules) = policy.entity(&entity) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    // A key or a link is passed as it is (the sync pages and joins by it): a sample of it
    // that looks like PII is said, as a warning to review, not an error no policy can mend.
    let keyed: HashSet<String> = info
        .key(policy.key_columns(&entity))
        .map(|k| k.names().into_iter().collect())
        .unwrap_or_default();
    let linked: HashSet<&str> = fks
        .iter()
        .filter(|fk| fk.table == info.table)
        .flat_map(|fk| fk.columns.iter().map(String::as_str))
        .collect();
    for (at, column) in info.synced_columns().enumerate() {
        // A pseudonym of digits changes the digits only: its values without any pass as they
        // are, and are judged like kept ones.
        let digits_only = matches!(
            rules.rule(&column.name),
            Some(Rule::Pseudonym(
                maskbus_mask::PseudonymKind::Digits | maskbus_mask::PseudonymKind::Ssn
            ))
        );
        let kept = rules.rule(&column.name) == Some(&Rule::Keep);
        if !(kept || digits_only) || !crate::schema_check::is_sampled_type(&column.data_type) {
            continue;
        }
        let values: Vec<String> = table.rows.iter().filter_map(|r| r[at].clone()).collect();
        if digits_only {
            let digitless: Vec<String> = values
                .into_iter()
                .filter(|v| {
                    !v.chars()
                        .any(|c| maskbus_audit::normalize::decimal_value(c).is_some())
                })
                .collect();
            let rule = rules
                .rule(&column.name)
                .map(|r| r.name())
                .unwrap_or_default();
            lines.extend(crate::schema_check::judge_digitless_sample(
                &entity,
                &column.name,
                &rule,
                &digitless,
            ));
            continue;
        }
        if let Some(mut line) =
            crate::schema_check::judge_kept_sample(&entity, &column.name, &values)
        {
            if keyed.contains(&column.name) || linked.contains(column.name.as_str()) {
                if let Verdict::Error(reason) = &line.verdict {
                    line.verdict = Verdict::Warning(format!(
                        "{reason}; it is a key or a link, passed as it is: review whether it really holds PII"
                    ));
                }
            }
            lines.push(line);
        }
    }
    lines
}
