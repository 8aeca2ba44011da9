//! Subsets on the live source: planned against its catalog, conditions checked by the
//! server's planner, counted for `maskbus subset plan`, and turned into the filter of a page.

use super::{plan, Outside, Planned, SubsetFile};
use crate::source::{Refusal, Source};
use maskbus_pg::closure::{check_condition, ClosureTable};
use maskbus_pg::{Database, ForeignKey, KeyDef, TableRef};
use maskbus_protocol::{ErrorCode, KeyCursor};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
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
    source: &Database,
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
        // A keyless table (synced whole, as a multiset) is in the closure as a child only:
        // its rows are kept by the parents they reference (`Closure::member`).
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
    source: &Database,
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

/// The most keys a producer holds for the subsets being synced (a key of one short column
/// takes about 70 bytes): past it, a subset's pages filter the table by the closure instead,
/// the closure computed again for every request.
pub const KEPT_KEYS_BUDGET: usize = 250_000;

/// How many windows' keys are held at once, the least recently used let go first (the passes
/// of three consumers, or of three subsets; a fourth at once makes each window's first page
/// compute its closure again).
const KEPT_WINDOWS: usize = 3;

/// A window of one subset: its name and the snapshot that closes the window.
type Window = (String, String);

/// The keys a subset keeps of one table in one window, in the order the table's pages read it
/// (as the pages' own `ORDER BY` sorts them: `KeyDef::sort_keys`, or the server), and where
/// each one stands.
pub(crate) struct KeptTable {
    keys: Vec<KeyCursor>,
    /// A key's hash and its index in `keys`; a hash met twice keeps its first index (the
    /// other key then falls back to the closure's filter: slower, never wrong).
    positions: HashMap<u64, u32>,
}

/// `keys` of `table` in its pages' order, one entry a key, as the server sorts them.
async fn keys_in_key_order(
    client: &tokio_postgres::Client,
    table: &ClosureTable,
    keys: Vec<KeyCursor>,
) -> Result<Vec<KeyCursor>, tokio_postgres::Error> {
    let mut arrays: Vec<Vec<String>> =
        vec![Vec::with_capacity(keys.len()); table.key.columns.len()];
    for key in keys {
        for (array, value) in arrays.iter_mut().zip(key) {
            array.push(value);
        }
    }
    let sql = maskbus_pg::statements::keys_in_key_order(&table.table, &table.key);
    let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = arrays
        .iter()
        .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let mut keys: Vec<KeyCursor> = client
        .query(&sql, &params)
        .await?
        .iter()
        .filter_map(|row| {
            (0..table.key.columns.len())
                .map(|i| row.get::<_, Option<String>>(i))
                .collect::<Option<KeyCursor>>()
        })
        .collect();
    // A key the policy names need not be unique: one entry a key, in order.
    keys.dedup();
    Ok(keys)
}

fn key_hash(key: &KeyCursor) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

impl KeptTable {
    fn new(keys: Vec<KeyCursor>) -> Self {
        let mut positions = HashMap::with_capacity(keys.len());
        for (at, key) in keys.iter().enumerate() {
            positions.entry(key_hash(key)).or_insert(at as u32);
        }
        Self { keys, positions }
    }

    /// Where the keys after `after` start: 0 without a cursor. `None` when `after` is not a
    /// kept key (a cursor from another window, or a hash shared by two keys).
    pub(crate) fn start_after(&self, after: Option<&KeyCursor>) -> Option<usize> {
        let Some(after) = after else {
            return Some(0);
        };
        let at = *self.positions.get(&key_hash(after))? as usize;
        (self.keys.get(at) == Some(after)).then_some(at + 1)
    }

    /// At most `n` keys from `start` on, as one text array per key column (as
    /// `statements::key_in_list` reads them).
    pub(crate) fn columns(&self, start: usize, n: usize) -> Vec<Vec<&str>> {
        let slice = &self.keys[start.min(self.keys.len())..];
        let slice = &slice[..n.min(slice.len())];
        let width = slice.first().map_or(0, Vec::len);
        (0..width)
            .map(|i| slice.iter().map(|k| k[i].as_str()).collect())
            .collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

/// What a page request asks of a subset's members: the subset, the window's closing
/// snapshot, the table, the key its pages go by and how many rows it wants.
pub(crate) struct MembersAsk<'a> {
    pub name: &'a str,
    pub until: &'a str,
    pub table: &'a TableRef,
    pub key: &'a KeyDef,
    pub wanted: usize,
}

/// How a subset's page reads one table.
pub(crate) enum Members {
    /// Outside the closure and copied whole: the plain page.
    Whole,
    /// The kept keys of this window, read by key; `otherwise` is the page statement filtering
    /// by the closure, for a cursor that is not one of them.
    Kept {
        keys: Arc<KeptTable>,
        otherwise: String,
    },
    /// The page statement, filtering the table by the closure (or by `false`: an outside
    /// table that stays empty).
    Filtered(String),
}

/// `build(filter)` with the closure's membership of table `at` as its filter, the closure's
/// `WITH` before it (cut down to what can reach the table).
fn closure_filtered(planned: &Planned, at: usize, build: impl Fn(&str) -> String) -> String {
    let closure = planned.closure.relevant_to(at);
    format!(
        "{} {}",
        closure.with_clause(),
        build(&closure.member(at, "t"))
    )
}

/// The closure's index of `table`, unless the table is outside the closure.
fn closure_index(planned: &Planned, table: &TableRef) -> Option<usize> {
    planned
        .index(table)
        .filter(|_| !planned.outside.contains(table))
}

/// How the pages of `table` read it without held keys: filtered by the closure; outside it,
/// whole or by `false`, as the subset says.
fn by_filter(planned: &Planned, table: &TableRef, build: impl Fn(&str) -> String) -> Members {
    match closure_index(planned, table) {
        Some(at) => Members::Filtered(closure_filtered(planned, at, build)),
        None if planned.outside_rule == Outside::Whole => Members::Whole,
        None => Members::Filtered(build("false")),
    }
}

/// Per window: the kept keys of each table of the closure, or `None` over the budget.
type KeptWindow = Option<HashMap<usize, Arc<KeptTable>>>;

/// The subsets a producer defines, each planned against the source at first use and kept so
/// (a subset's closure does not change under a running producer).
pub struct Subsets {
    file: SubsetFile,
    planned: Mutex<HashMap<String, Arc<Planned>>>,
    /// The kept keys of the latest windows.
    kept: Mutex<Vec<(Window, Arc<KeptWindow>)>>,
}

impl Subsets {
    pub fn new(file: SubsetFile) -> Self {
        Self {
            file,
            planned: Mutex::new(HashMap::new()),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// How the pages of `table` in subset `name` are read in the window closed by `until`, for
    /// a request of `wanted` rows whose pages go by `key`. The closure is computed once per
    /// window (a pass), at the first page of any of its tables, and its keys held; a page then
    /// reads its rows by key. The pages filter the table by the closure instead
    /// (`build(filter)` is the page statement with an extra row filter) over
    /// [`KEPT_KEYS_BUDGET`], for a one-row request (`maskbus status` asking whether anything
    /// is there: holding a pass's keys for it does not pay), and when the table's key is no
    /// longer the one the subset was planned with (a migration under a running producer).
    /// Takes its own connection and holds none when it returns: a caller must not hold one
    /// while it waits here, and takes its page's connection after it.
    pub(crate) async fn members(
        &self,
        source: &Source,
        ask: MembersAsk<'_>,
        build: impl Fn(&str) -> String,
    ) -> Result<Members, Refusal> {
        let MembersAsk {
            name,
            until,
            table,
            key,
            wanted,
        } = ask;
        let planned = self.planned(source, name).await?;
        let Some(at) = closure_index(&planned, table) else {
            return Ok(by_filter(&planned, table, &build));
        };
        let planned_key = planned.closure.tables.get(at).map(|t| &t.key);
        // A keyless table has no keys to hold: its pages filter it by the closure.
        if wanted <= 1 || planned_key != Some(key) || key.is_keyless() {
            return Ok(by_filter(&planned, table, &build));
        }
        let window = (name.to_string(), until.to_string());
        let held = {
            let mut kept = self.kept.lock().await;
            match kept.iter().position(|(w, _)| *w == window) {
                Some(found) => {
                    // The most recently used last.
                    let entry = kept.remove(found);
                    let held = Arc::clone(&entry.1);
                    kept.push(entry);
                    held
                }
                None => {
                    let held = Arc::new(self.compute_kept(source, name, &planned).await?);
                    if kept.len() >= KEPT_WINDOWS {
                        kept.remove(0);
                    }
                    kept.push((window, Arc::clone(&held)));
                    held
                }
            }
        };
        Ok(match held.as_ref().as_ref().and_then(|t| t.get(&at)) {
            Some(keys) => Members::Kept {
                keys: Arc::clone(keys),
                otherwise: closure_filtered(&planned, at, build),
            },
            None => by_filter(&planned, table, &build),
        })
    }

    /// The whole closure of subset `name`, once (its roots first, then the rest from them),
    /// then each table's kept keys in its pages' order; `None` over [`KEPT_KEYS_BUDGET`].
    async fn compute_kept(
        &self,
        source: &Source,
        name: &str,
        planned: &Planned,
    ) -> Result<KeptWindow, Refusal> {
        let mut client = source.client().await?;
        let started = std::time::Instant::now();
        let failed = |e: tokio_postgres::Error| {
            Refusal::from(
                source
                    .database()
                    .query_error(format!("computing subset {name}"), &e),
            )
            .subset(name)
        };
        let over_budget = || {
            tracing::info!(
                subset = name,
                budget = KEPT_KEYS_BUDGET,
                "the subset keeps more keys than the producer holds; its pages filter by the closure"
            );
            Ok(None)
        };
        let budget = KEPT_KEYS_BUDGET as i64 + 1;
        // The roots first, in a statement of their own: the server may scan a root table in
        // parallel there (never inside the recursive one). The planner prices md5 like an
        // addition, so a fraction's scan is told that workers are worth starting.
        let tx = client.transaction().await.map_err(failed)?;
        tx.batch_execute("SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0")
            .await
            .map_err(failed)?;
        let roots = tx
            .query(&planned.closure.root_rows(), &[&budget])
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        if roots.len() > KEPT_KEYS_BUDGET {
            return over_budget();
        }
        let (root_tables, root_keys): (Vec<i32>, Vec<String>) = roots
            .iter()
            .filter_map(|r| Some((r.get::<_, i32>(0), r.get::<_, Option<String>>(1)?)))
            .unzip();
        drop(roots);
        let rows = client
            .query(
                &planned.closure.kept_rows_from(),
                &[&budget, &root_tables, &root_keys],
            )
            .await
            .map_err(failed)?;
        if rows.len() > KEPT_KEYS_BUDGET {
            return over_budget();
        }
        let mut found: HashMap<usize, Vec<KeyCursor>> = HashMap::new();
        for row in &rows {
            let at: i32 = row.get(0);
            let key: Vec<Option<String>> = row.get(1);
            // A key with a NULL names no row (keys are NOT NULL): nothing to read by it.
            if let Some(key) = key.into_iter().collect::<Option<KeyCursor>>() {
                found.entry(at as usize).or_default().push(key);
            }
        }
        drop(rows);
        let mut tables = HashMap::new();
        let mut held = 0;
        for (at, table) in planned.closure.tables.iter().enumerate() {
            if table.key.is_keyless() {
                // No keys to hold: its pages filter it by the closure.
                continue;
            }
            let mut keys = found.remove(&at).unwrap_or_default();
            if keys.iter().any(|k| k.len() != table.key.columns.len()) {
                // Not the table's key as planned: its pages filter by the closure.
                continue;
            }
            // Keys of integers or uuids are put in the pages' order here; others by the
            // server, which knows their collations and operator classes.
            if !keys.is_empty() && !table.key.sort_keys(&mut keys) {
                keys = keys_in_key_order(&client, table, keys)
                    .await
                    .map_err(failed)?;
            }
            held += keys.len();
            if held > KEPT_KEYS_BUDGET {
                tracing::info!(
                    subset = name,
                    budget = KEPT_KEYS_BUDGET,
                    "the subset keeps more keys than the producer holds; its pages filter by the closure"
                );
                return Ok(None);
            }
            tables.insert(at, Arc::new(KeptTable::new(keys)));
        }
        tracing::info!(
            subset = name,
            keys = held,
            ms = started.elapsed().as_millis() as u64,
            "subset closure computed for this pass"
        );
        Ok(Some(tables))
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
        let (tables, fks) = schema(source.database(), &client, source.policy(), file).await?;
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
        Ok(match by_filter(&planned, table, build) {
            Members::Filtered(sql) => Some(sql),
            _ => None,
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
                        .database()
                        .query_error(format!("computing subset {name}"), &e),
                )
            })?;
        let mut counts = Vec::new();
        for (at, table) in planned.closure.tables.iter().enumerate() {
            let source_rows =
                maskbus_pg::catalog::count_rows(source.database(), &client, &table.table).await?;
            let outside = planned.outside.contains(&table.table);
            let in_subset = if table.key.is_keyless() && !outside {
                // Never in `kept`: counted by its membership.
                client
                    .query_one(&planned.closure.keyless_count(at), &[])
                    .await
                    .map_err(|e| {
                        Refusal::from(
                            source
                                .database()
                                .query_error(format!("computing subset {name}"), &e),
                        )
                    })?
                    .get::<_, i64>(0)
            } else {
                kept.iter()
                    .find(|r| r.get::<_, i32>(0) as usize == at)
                    .map_or(0, |r| r.get::<_, i64>(1))
            };
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
    let target = Database::parse("source", &config.source_url.0)?;
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

#[cfg(test)]
mod tests {
    use super::KeptTable;

    fn key(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn kept_keys_are_sliced_after_a_cursor_found_among_them_and_only_then() {
        // Composite keys, in the order the server sorted them (not bytewise: 10 after 9).
        let kept = KeptTable::new(vec![key(&["9", "a"]), key(&["10", "a"]), key(&["10", "b"])]);
        assert_eq!(kept.start_after(None), Some(0));
        assert_eq!(kept.start_after(Some(&key(&["9", "a"]))), Some(1));
        assert_eq!(kept.start_after(Some(&key(&["10", "b"]))), Some(3));
        // A cursor that is not a kept key: the caller falls back to the closure's filter.
        assert_eq!(kept.start_after(Some(&key(&["9", "b"]))), None);
        assert_eq!(kept.start_after(Some(&key(&["9"]))), None);
        assert_eq!(kept.columns(1, 5), vec![vec!["10", "10"], vec!["a", "b"]]);
        assert_eq!(kept.columns(0, 1), vec![vec!["9"], vec!["a"]]);
        assert!(kept.columns(3, 5).is_empty());
        assert!(kept.columns(9, 5).is_empty());
        assert_eq!(kept.len(), 3);
    }
}
