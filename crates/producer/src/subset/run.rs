//! Subsets on the live source: planned against its catalog, conditions checked by the
//! server's planner, counted for `maskbus subset plan`, and turned into the filter of a page.

use super::{plan, Outside, Planned, SubsetFile};
use crate::source::{Refusal, Source};
use maskbus_pg::closure::check_condition;
use maskbus_pg::{ForeignKey, KeyDef, TableRef, Target};
use maskbus_protocol::ErrorCode;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;

/// One table of a subset plan: how many rows the subset holds, of how many.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SubsetCount {
    pub table: String,
    pub subset_rows: i64,
    pub source_rows: i64,
    /// "root", "closure", "outside (empty)" or "outside (whole)".
    pub role: &'static str,
}

/// The policy's tables with their keys, and the source's foreign keys plus the file's virtual
/// ones; a virtual foreign key naming a table or column the source lacks is refused.
async fn schema(
    source: &Target,
    client: &tokio_postgres::Client,
    policy: &maskbus_mask::Policy,
    file: &SubsetFile,
) -> Result<(Vec<(TableRef, KeyDef)>, Vec<ForeignKey>), Refusal> {
    let schemas = policy.schemas();
    let infos = maskbus_pg::catalog::tables(source, client, &schemas).await?;
    let mut tables = Vec::new();
    for info in &infos {
        let entity = info.table.to_string();
        if policy.entity(&entity).is_none() {
            continue;
        }
        if let Ok(key) = info.key(policy.key_columns(&entity)) {
            tables.push((info.table.clone(), key));
        }
    }
    let mut fks = maskbus_pg::catalog::foreign_keys(source, client, &schemas).await?;
    for fk in file.foreign_keys() {
        let has = |table: &TableRef, columns: &[String]| {
            infos
                .iter()
                .find(|i| i.table == *table)
                .is_some_and(|i| columns.iter().all(|c| i.column(c).is_some()))
        };
        if !has(&fk.table, &fk.columns) || !has(&fk.parent, &fk.parent_columns) {
            return Err(Refusal::new(ErrorCode::PolicyRefused,
                format!(
                    "virtual foreign key {}: {} ({}) -> {} ({}) names a table or column the source lacks",
                    fk.name,
                    fk.table,
                    fk.columns.join(", "),
                    fk.parent,
                    fk.parent_columns.join(", ")
                ),
            ));
        }
        fks.push(fk);
    }
    Ok((tables, fks))
}

/// Plans every subset of `file` against the source and has the server plan each root condition
/// (`EXPLAIN`, nothing runs): one line per problem, empty when all is well.
pub async fn check(
    source: &Target,
    policy: &maskbus_mask::Policy,
    file: &SubsetFile,
) -> Result<Vec<String>, maskbus_pg::PgError> {
    let client = source.connect().await?;
    let (tables, fks) = match schema(source, &client, policy, file).await {
        Ok(found) => found,
        Err(Refusal(_, message)) => return Ok(vec![message]),
    };
    let mut problems = Vec::new();
    for name in file.names() {
        match plan(file, &name, &tables, &fks) {
            Err(e) => problems.push(e.to_string()),
            Ok(planned) => {
                for (table, condition) in &file.subsets[&name].condition {
                    let table = TableRef::parse(&maskbus_mask::qualify(table));
                    if let Err(e) = client.query(&check_condition(&table, condition), &[]).await {
                        problems.push(format!(
                            "subset {name}: the condition on {table} does not plan: {}",
                            maskbus_pg::error_text(&e)
                        ));
                    }
                }
                if planned.closure.roots.is_empty() {
                    problems.push(format!("subset {name} has no root"));
                }
            }
        }
    }
    Ok(problems)
}

/// The subsets a producer defines, each planned against the source at first use and kept so
/// (a subset's closure does not change under a running producer).
pub struct Subsets {
    file: SubsetFile,
    planned: Mutex<HashMap<String, Arc<Planned>>>,
}

impl Subsets {
    pub fn new(file: SubsetFile) -> Self {
        Self {
            file,
            planned: Mutex::new(HashMap::new()),
        }
    }

    /// Subset `name` planned against `source`, fixed at first use.
    pub(crate) async fn planned(
        &self,
        source: &Source,
        name: &str,
    ) -> Result<Arc<Planned>, Refusal> {
        let file = &self.file;
        if let Some(planned) = self.planned.lock().await.get(name) {
            return Ok(Arc::clone(planned));
        }
        let client = source.client().await?;
        let (tables, fks) = schema(source.target(), &client, source.policy(), file).await?;
        let planned = Arc::new(plan(file, name, &tables, &fks).map_err(|e| match e {
            super::SubsetError::Unknown { .. } => {
                Refusal::new(ErrorCode::UnknownSubset, e.to_string()).subset(name)
            }
            _ => Refusal::new(ErrorCode::PolicyRefused, e.to_string()).subset(name),
        })?);
        self.planned
            .lock()
            .await
            .insert(name.to_string(), Arc::clone(&planned));
        Ok(planned)
    }

    /// A statement over `table` within subset `name`: `build(filter)` is the statement with an
    /// extra row filter, and the closure's `WITH` stands before it. `None` when the table is
    /// outside the closure and copied whole (the plain statement serves it).
    pub(crate) async fn in_subset(
        &self,
        source: &Source,
        name: &str,
        table: &TableRef,
        build: impl Fn(&str) -> String,
    ) -> Result<Option<String>, Refusal> {
        let planned = self.planned(source, name).await?;
        Ok(match planned.index(table) {
            Some(at) if !planned.outside.contains(table) => {
                let closure = planned.closure.relevant_to(at);
                Some(format!(
                    "{} {}",
                    closure.with_clause(),
                    build(&closure.member(at, "t"))
                ))
            }
            _ if planned.outside_rule == Outside::Whole => None,
            _ => Some(build("false")),
        })
    }

    /// Per table of the policy: rows in subset `name` and in the source, without a value.
    pub async fn counts(&self, source: &Source, name: &str) -> Result<Vec<SubsetCount>, Refusal> {
        let planned = self.planned(source, name).await?;
        let client = source.client().await?;
        let kept = client
            .query(&planned.closure.counts(), &[])
            .await
            .map_err(|e| {
                Refusal::from(
                    source
                        .target()
                        .query_error(format!("computing subset {name}"), &e),
                )
            })?;
        let mut counts = Vec::new();
        for (at, table) in planned.closure.tables.iter().enumerate() {
            let source_rows =
                maskbus_pg::catalog::count_rows(source.target(), &client, &table.table).await?;
            let outside = planned.outside.contains(&table.table);
            let in_subset = kept
                .iter()
                .find(|r| r.get::<_, i32>(0) as usize == at)
                .map_or(0, |r| r.get::<_, i64>(1));
            counts.push(SubsetCount {
                table: table.table.to_string(),
                subset_rows: match (outside, planned.outside_rule) {
                    (true, Outside::Whole) => source_rows,
                    _ => in_subset,
                },
                source_rows,
                role: match (outside, planned.outside_rule) {
                    (true, Outside::Whole) => "outside (whole)",
                    (true, Outside::Empty) => "outside (empty)",
                    _ if planned.closure.roots.iter().any(|r| r.table == at) => "root",
                    _ => "closure",
                },
            });
        }
        Ok(counts)
    }
}

/// What `maskbus subset plan` shows: problems with the file, or per subset its counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlanReport {
    pub problems: Vec<String>,
    pub subsets: Vec<(String, Vec<SubsetCount>)>,
}

/// Why `maskbus subset plan` could not plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanReportError {
    #[error(
        "the producer's config names no subsets file (its `subsets` key); define subsets there"
    )]
    NoSubsets,
    #[error(transparent)]
    File(#[from] super::SubsetFileError),
    #[error(transparent)]
    Policy(#[from] maskbus_policy::PolicyLoadError),
    #[error(transparent)]
    Subset(#[from] super::SubsetError),
    #[error(transparent)]
    Pg(#[from] maskbus_pg::PgError),
    #[error(transparent)]
    Refused(#[from] Refusal),
}

/// Plans and counts the producer's subsets (or only `only`) on its source, moving nothing.
pub async fn plan_report(
    config: &maskbus_config::ProducerConfig,
    only: Option<&str>,
) -> Result<PlanReport, PlanReportError> {
    let path = config
        .subsets
        .as_deref()
        .ok_or(PlanReportError::NoSubsets)?;
    let file = SubsetFile::load(path)?;
    let policy = maskbus_policy::load(
        &config.policy,
        config.pseudonym_key.as_ref().map(|k| k.0.as_str()),
    )?;
    let target = Target::parse("source", &config.source_url.0)?;
    let mut report = PlanReport {
        problems: check(&target, &policy, &file).await?,
        subsets: Vec::new(),
    };
    if !report.problems.is_empty() {
        return Ok(report);
    }
    let names = match only {
        Some(name) if !file.subsets.contains_key(name) => {
            return Err(super::SubsetError::Unknown {
                name: name.to_string(),
                known: file.names().join(", "),
            }
            .into())
        }
        Some(name) => vec![name.to_string()],
        None => file.names(),
    };
    let subsets = Subsets::new(file);
    let source = Source::new(target, Arc::new(policy), 2)?;
    for name in names {
        let counts = subsets.counts(&source, &name).await?;
        report.subsets.push((name, counts));
    }
    Ok(report)
}
