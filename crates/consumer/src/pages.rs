//! The consumer's decisions about pages, pure: how each entity lands in the target (from the
//! target's catalog), whether a reply fits it, how the replies of one request merge, what the
//! next request and the next watermark are, and which links a page stages for later.

use super::ConsumerError;
use maskbus_model::plan::FillPlan;
use maskbus_pg::{ForeignKey, KeyDef, TableInfo, TableRef};
use maskbus_protocol::{KeyCursor, ReceivedPage, ReceivedReply, Request};
use std::collections::{BTreeMap, HashMap, HashSet};

/// How one entity lands in the target.
#[derive(Clone, Debug)]
pub struct EntityPlan {
    pub table: TableRef,
    /// `schema.table`, as the producer names it and the watermark is keyed.
    pub entity: String,
    pub key: KeyDef,
    /// Column → type (`format_type`), for every column the sync writes (generated ones are not).
    pub types: HashMap<String, String>,
    /// Identity columns: inserts say `OVERRIDING SYSTEM VALUE`.
    pub identity: HashSet<String>,
    /// Foreign keys to other synced tables that are checked as rows land.
    pub parents: Vec<ForeignKey>,
    /// Foreign keys to tables the producer does not serve: their rows must already be there.
    pub outside: Vec<ForeignKey>,
    /// Columns written NULL first and set once the entity's cycle is in (see [`maskbus_model::plan`]).
    pub deferred: Vec<String>,
    /// The group of tables this one is filled together with, in one transaction (a cycle of
    /// deferrable NOT NULL links), by index.
    pub together: Option<usize>,
}

impl EntityPlan {
    /// (column, type) of the deferred columns, in order.
    pub fn deferred_types(&self) -> Vec<(String, String)> {
        self.deferred
            .iter()
            .map(|c| (c.clone(), self.types.get(c).cloned().unwrap_or_default()))
            .collect()
    }
}

/// An entity the target cannot take, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub entity: String,
    pub reason: String,
}

/// Plans the `offered` entities (with the keys the producer names for some) against the target's
/// catalog, in fill order. Entities the target lacks, or cannot key, are returned as skipped.
pub fn entity_plans(
    offered: &[String],
    keys: &BTreeMap<String, Vec<String>>,
    tables: &[TableInfo],
    fks: &[ForeignKey],
) -> Result<(Vec<EntityPlan>, Vec<Skipped>), maskbus_model::plan::PlanError> {
    let mut plans: BTreeMap<TableRef, EntityPlan> = BTreeMap::new();
    let mut skipped = Vec::new();
    // By name, so a long entity list costs its length (the first of a name, as a search would).
    let mut by_name: HashMap<&TableRef, &TableInfo> = HashMap::with_capacity(tables.len());
    for info in tables {
        by_name.entry(&info.table).or_insert(info);
    }
    for entity in offered {
        let table = TableRef::parse(entity);
        let Some(info) = by_name.get(&table) else {
            skipped.push(Skipped {
                entity: entity.clone(),
                reason: "the target has no such table; create the schema in the target first (pg_dump --schema-only)".into(),
            });
            continue;
        };
        let key = match info.key(keys.get(entity).map(Vec::as_slice)) {
            Ok(key) => key,
            Err(e) => {
                skipped.push(Skipped {
                    entity: entity.clone(),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        plans.insert(
            table.clone(),
            EntityPlan {
                entity: table.to_string(),
                table,
                key,
                types: info
                    .synced_columns()
                    .map(|c| (c.name.clone(), c.sql_type.clone()))
                    .collect(),
                identity: info
                    .columns
                    .iter()
                    .filter(|c| c.identity)
                    .map(|c| c.name.clone())
                    .collect(),
                parents: Vec::new(),
                outside: Vec::new(),
                deferred: Vec::new(),
                together: None,
            },
        );
    }
    let served: Vec<TableRef> = plans.keys().cloned().collect();
    let is_served: HashSet<&TableRef> = served.iter().collect();
    let FillPlan {
        order,
        deferred,
        together,
    } = maskbus_model::plan::fill_plan(&served, fks)?;
    for (index, group) in together.iter().enumerate() {
        for table in group {
            if let Some(plan) = plans.get_mut(table) {
                plan.together = Some(index);
            }
        }
    }
    for fk in fks {
        let deferred_here = deferred.get(&fk.table).is_some_and(|d| d.contains(fk));
        if let Some(plan) = plans.get_mut(&fk.table) {
            if !is_served.contains(&fk.parent) {
                plan.outside.push(fk.clone());
            } else if !deferred_here {
                plan.parents.push(fk.clone());
            }
        }
    }
    for (table, fks) in deferred {
        if let Some(plan) = plans.get_mut(&table) {
            let mut columns: Vec<String> = fks.iter().flat_map(|fk| fk.columns.clone()).collect();
            columns.sort();
            columns.dedup();
            plan.deferred = columns;
        }
    }
    Ok((
        order.into_iter().filter_map(|t| plans.remove(&t)).collect(),
        skipped,
    ))
}

/// The (column, type) of each of the page's columns, after checking that the page belongs to
/// this entity, is keyed like it, names only columns the target has, each once, and that every
/// row has a value per column.
pub fn page_columns(
    plan: &EntityPlan,
    page: &ReceivedPage,
) -> Result<Vec<(String, String)>, ConsumerError> {
    reply_columns(plan, &page.entity, &page.key, &page.columns, &page.rows)
}

/// [`page_columns`] for any reply that carries rows of an entity (a page, a set of changes).
pub fn reply_columns(
    plan: &EntityPlan,
    entity: &str,
    key: &[String],
    columns: &[String],
    rows: &maskbus_protocol::page_rows::Rows,
) -> Result<Vec<(String, String)>, ConsumerError> {
    let bad = |reason: String| ConsumerError::BadReply {
        entity: plan.entity.clone(),
        reason,
    };
    if entity != plan.entity {
        return Err(bad(format!(
            "a page of {} arrived for {}",
            maskbus_model::shorten(entity),
            plan.entity
        )));
    }
    // A keyless table's key is the row's location, which is never a column of the page.
    let key_sent = plan.key.is_keyless() || key.iter().all(|k| columns.contains(k));
    if key != plan.key.names() || !key_sent {
        return Err(bad(format!(
            "the page is keyed by ({}), the target by ({})",
            maskbus_model::shorten(&key.join(", ")),
            plan.key.names().join(", ")
        )));
    }
    let mut seen = HashSet::new();
    let mut typed = Vec::with_capacity(columns.len());
    for column in columns {
        let Some(ty) = plan.types.get(column) else {
            return Err(bad(format!(
                "column {:?} is not a written column of the target table",
                maskbus_model::shorten(column)
            )));
        };
        if !seen.insert(column) {
            return Err(bad(format!("column {column} appears twice")));
        }
        typed.push((column.clone(), ty.clone()));
    }
    if let Some(row) = rows.iter().find(|r| r.len() != columns.len()) {
        return Err(bad(format!(
            "a row has {} values for {} columns",
            row.len(),
            columns.len()
        )));
    }
    Ok(typed)
}

/// The links a page stages for later: per row with a non-NULL deferred value, its key (text, in
/// key order) and the deferred columns' values (in [`EntityPlan::deferred`] order).
pub fn staged_links(
    plan: &EntityPlan,
    page: &ReceivedPage,
) -> Vec<(Vec<String>, Vec<Option<String>>)> {
    if plan.deferred.is_empty() {
        return Vec::new();
    }
    let position = |c: &String| page.columns.iter().position(|p| p == c);
    let keys: Vec<Option<usize>> = plan.key.columns.iter().map(|k| position(&k.name)).collect();
    let values: Vec<Option<usize>> = plan.deferred.iter().map(position).collect();
    page.rows
        .iter()
        .filter_map(|row| {
            let vals: Vec<Option<String>> = values
                .iter()
                .map(|i| i.and_then(|i| row.get(i).map(String::from)))
                .collect();
            if vals.iter().all(Option::is_none) {
                return None;
            }
            let key = keys
                .iter()
                .map(|i| {
                    i.and_then(|i| row.get(i).map(String::from))
                        .unwrap_or_default()
                })
                .collect();
            Some((key, vals))
        })
        .collect()
}

/// Whether a reply's cursor `tag` fits its `cursor`: none, or a tag's shape with a cursor (the
/// producer's tag is sent back as it came, and only the producer can tell it is its own).
pub fn tag_fits(cursor: Option<&KeyCursor>, tag: Option<&str>) -> bool {
    tag.is_none_or(|t| cursor.is_some() && maskbus_protocol::is_cursor_tag(t))
}

/// The replies to one page request, in order, as one page: their rows concatenated, the cursor
/// (with its tag) and `more` of the last. They must agree on entity, key and columns, and each
/// cursor's tag must fit it.
pub fn merge_pages(
    entity: &str,
    replies: Vec<ReceivedReply>,
) -> Result<ReceivedPage, ConsumerError> {
    let bad = |reason: &str| ConsumerError::BadReply {
        entity: entity.to_string(),
        reason: reason.to_string(),
    };
    let mut pages = replies.into_iter().map(|reply| match reply {
        ReceivedReply::Page(page)
            if !tag_fits(page.next_after.as_ref(), page.next_after_tag.as_deref()) =>
        {
            Err(bad("a page's cursor tag is not a tag the producer issues"))
        }
        ReceivedReply::Page(page) => Ok(page),
        _ => Err(bad("expected a page")),
    });
    let mut merged = pages.next().ok_or_else(|| bad("no page arrived"))??;
    for page in pages {
        let page = page?;
        if page.entity != merged.entity || page.key != merged.key || page.columns != merged.columns
        {
            return Err(bad("the pages of one request disagree on their columns"));
        }
        merged.rows.extend(page.rows);
        merged.next_after = page.next_after;
        merged.next_after_tag = page.next_after_tag;
        merged.more = page.more;
        merged.part = page.part;
    }
    Ok(merged)
}

/// An entity's watermark: source snapshots, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncState {
    /// Every row written by a transaction committed in this snapshot is synced.
    pub synced_until: Option<String>,
    /// The snapshot closing a pass in progress.
    pub pass_until: Option<String>,
    /// The key of the last row inserted from the pass in progress.
    pub after_key: Option<KeyCursor>,
    /// The producer's tag on `after_key` (over a masked key), sent back with it.
    pub after_tag: Option<String>,
    pub rows_synced: i64,
}

/// The watermark after `page` (closing snapshot `until`) is in.
pub fn next_state(state: SyncState, page: &ReceivedPage, until: &str) -> SyncState {
    let rows_synced = state.rows_synced + page.rows.len() as i64;
    if page.more {
        SyncState {
            pass_until: Some(until.to_string()),
            after_key: page.next_after.clone(),
            after_tag: page.next_after_tag.clone(),
            rows_synced,
            ..state
        }
    } else {
        SyncState {
            synced_until: Some(until.to_string()),
            pass_until: None,
            after_key: None,
            after_tag: None,
            rows_synced,
        }
    }
}

/// Where one key range of an entity's pass stands (`maskbus.sync_ranges`): the rows after
/// `after_key` up to `through` (either end open when absent) remain, unless it is `done`. Each
/// cursor over a masked key goes with the producer's tag on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeState {
    pub entity: String,
    pub range_no: i32,
    /// The snapshot closing the pass, the same for every range of it.
    pub until: String,
    pub after_key: Option<KeyCursor>,
    pub after_tag: Option<String>,
    pub through: Option<KeyCursor>,
    pub through_tag: Option<String>,
    pub done: bool,
    pub rows_synced: i64,
}

impl RangeState {
    /// The ranges `bounds` cut an entity's key order into, none read yet: the first from the
    /// start up to the first bound, each next after one bound up to the next, the last to the end.
    /// `tags` are the producer's on the bounds, in their order (none over a kept key).
    pub fn split(
        entity: &str,
        until: &str,
        bounds: &[KeyCursor],
        tags: &[String],
    ) -> Vec<RangeState> {
        let bounds: Vec<(KeyCursor, Option<String>)> = bounds
            .iter()
            .enumerate()
            .map(|(i, bound)| (bound.clone(), tags.get(i).cloned()))
            .collect();
        let lower = std::iter::once(None).chain(bounds.iter().cloned().map(Some));
        let upper = bounds
            .iter()
            .cloned()
            .map(Some)
            .chain(std::iter::once(None));
        lower
            .zip(upper)
            .enumerate()
            .map(|(i, (after, through))| {
                let (after_key, after_tag) = after.unzip();
                let (through, through_tag) = through.unzip();
                RangeState {
                    entity: entity.to_string(),
                    range_no: i as i32,
                    until: until.to_string(),
                    after_key,
                    after_tag: after_tag.flatten(),
                    through,
                    through_tag: through_tag.flatten(),
                    done: false,
                    rows_synced: 0,
                }
            })
            .collect()
    }
}

/// What a page's transaction records beside its rows: the entity's watermark, or where one
/// of its ranges stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    Entity(SyncState),
    Range(RangeState),
}

impl Progress {
    /// The progress once `page` (of a window closed by `until`) is in.
    pub fn after(self, page: &ReceivedPage, until: &str) -> Progress {
        match self {
            Progress::Entity(state) => Progress::Entity(next_state(state, page, until)),
            Progress::Range(range) => {
                // The page's cursor with its tag, or where the range stood (an empty page).
                let (after_key, after_tag) = match &page.next_after {
                    Some(key) => (Some(key.clone()), page.next_after_tag.clone()),
                    None => (range.after_key.clone(), range.after_tag.clone()),
                };
                Progress::Range(RangeState {
                    after_key,
                    after_tag,
                    done: !page.more,
                    rows_synced: range.rows_synced + page.rows.len() as i64,
                    ..range
                })
            }
        }
    }
}

/// The request for the pages after `page`, if more remain: after its cursor, with its tag.
pub fn next_request(request: &Request, page: &ReceivedPage) -> Option<Request> {
    request.continuation(
        page.more,
        page.until.clone(),
        page.next_after.clone(),
        page.next_after_tag.clone(),
    )
}

#[cfg(test)]
mod range_tests {
    use super::*;

    fn k(v: &str) -> KeyCursor {
        vec![v.to_string()]
    }

    #[test]
    fn bounds_cut_the_key_order_into_ranges_that_meet_and_cover_it() {
        let ranges = RangeState::split("s.t", "5:9:", &[k("10"), k("20")], &[]);
        let ends: Vec<_> = ranges
            .iter()
            .map(|r| (r.range_no, r.after_key.clone(), r.through.clone()))
            .collect();
        assert_eq!(
            ends,
            vec![
                (0, None, Some(k("10"))),
                (1, Some(k("10")), Some(k("20"))),
                (2, Some(k("20")), None)
            ]
        );
        assert!(ranges.iter().all(|r| !r.done && r.until == "5:9:"));
        assert!(ranges
            .iter()
            .all(|r| r.after_tag.is_none() && r.through_tag.is_none()));
        assert_eq!(RangeState::split("s.t", "5:9:", &[], &[]).len(), 1);
    }

    #[test]
    fn each_bound_keeps_its_tag_at_both_ranges_it_ends() {
        let tags = ["a".repeat(32), "b".repeat(32)];
        let ranges = RangeState::split("s.t", "5:9:", &[k("10"), k("20")], &tags);
        let ends: Vec<_> = ranges
            .iter()
            .map(|r| (r.after_tag.clone(), r.through_tag.clone()))
            .collect();
        assert_eq!(
            ends,
            vec![
                (None, Some(tags[0].clone())),
                (Some(tags[0].clone()), Some(tags[1].clone())),
                (Some(tags[1].clone()), None)
            ]
        );
        // A page moves the range's cursor with its tag; an empty one leaves both.
        let mut page = ReceivedPage {
            v: maskbus_protocol::VERSION,
            entity: "s.t".into(),
            key: vec!["id".into()],
            columns: vec!["id".into()],
            rows: vec![vec![Some("15")]].into_iter().collect(),
            next_after: Some(k("15")),
            next_after_tag: Some("c".repeat(32)),
            more: true,
            since: None,
            until: None,
            part: 0,
            parts: 1,
        };
        let Progress::Range(moved) = Progress::Range(ranges[1].clone()).after(&page, "5:9:") else {
            panic!("a range's progress")
        };
        assert_eq!(
            (moved.after_key.clone(), moved.after_tag.clone()),
            (Some(k("15")), Some("c".repeat(32)))
        );
        assert_eq!(moved.through_tag, Some(tags[1].clone()));
        page.rows = Vec::<Vec<Option<&str>>>::new().into_iter().collect();
        page.next_after = None;
        page.next_after_tag = None;
        let Progress::Range(still) = Progress::Range(moved.clone()).after(&page, "5:9:") else {
            panic!("a range's progress")
        };
        assert_eq!(
            (still.after_key, still.after_tag),
            (moved.after_key, moved.after_tag)
        );
    }

    #[test]
    fn a_page_whose_tag_is_no_tag_is_refused() {
        let page = |tag: Option<&str>, after: Option<KeyCursor>| {
            ReceivedReply::Page(ReceivedPage {
                v: maskbus_protocol::VERSION,
                entity: "s.t".into(),
                key: vec!["id".into()],
                columns: vec!["id".into()],
                rows: Vec::<Vec<Option<&str>>>::new().into_iter().collect(),
                next_after: after,
                next_after_tag: tag.map(String::from),
                more: false,
                since: None,
                until: None,
                part: 0,
                parts: 1,
            })
        };
        let good = "k".repeat(32);
        assert!(merge_pages("s.t", vec![page(Some(&good), Some(k("1")))]).is_ok());
        assert!(merge_pages("s.t", vec![page(None, Some(k("1")))]).is_ok());
        for (tag, after) in [
            (Some(good.as_str()), None),
            (Some("x"), Some(k("1"))),
            (Some("0123456789abcdef0123456789abcdef"), Some(k("1"))),
        ] {
            assert!(
                merge_pages("s.t", vec![page(tag, after.clone())]).is_err(),
                "{tag:?} {after:?}"
            );
        }
    }
}

/// A plan for unit tests: table `s.{name}` keyed by an integer `id`, with a nullable link
/// `{parent}_id` to each of `parents`.
#[cfg(test)]
pub(crate) fn test_plan(name: &str, parents: &[&str]) -> EntityPlan {
    let table = TableRef::new("s", name);
    EntityPlan {
        entity: table.to_string(),
        key: KeyDef {
            columns: vec![maskbus_pg::KeyColumn {
                name: "id".into(),
                sql_type: "integer".into(),
            }],
            source: maskbus_pg::KeySource::PrimaryKey,
        },
        types: Default::default(),
        identity: Default::default(),
        parents: parents
            .iter()
            .map(|parent| test_link(name, &format!("{parent}_id"), parent))
            .collect(),
        table,
        outside: vec![],
        deferred: vec![],
        together: None,
    }
}

/// A nullable link from `s.{child}.{column}` to `s.{parent}.id`, for unit tests.
#[cfg(test)]
pub(crate) fn test_link(child: &str, column: &str, parent: &str) -> ForeignKey {
    ForeignKey {
        name: format!("{child}_{column}_fkey"),
        table: TableRef::new("s", child),
        columns: vec![column.into()],
        parent: TableRef::new("s", parent),
        parent_columns: vec!["id".into()],
        nullable: true,
        deferrable: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_pg::{Column, KeyColumn, KeySource};
    use maskbus_protocol::{Snapshot, VERSION};

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn plan() -> EntityPlan {
        EntityPlan {
            table: TableRef::parse("zoo.staff"),
            entity: "zoo.staff".into(),
            key: KeyDef {
                columns: vec![
                    KeyColumn {
                        name: "region".into(),
                        sql_type: "text".into(),
                    },
                    KeyColumn {
                        name: "id".into(),
                        sql_type: "integer".into(),
                    },
                ],
                source: KeySource::PrimaryKey,
            },
            types: [
                ("region", "text"),
                ("id", "integer"),
                ("boss", "integer"),
                ("name", "text"),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
            identity: HashSet::new(),
            parents: vec![],
            outside: vec![],
            deferred: s(&["boss"]),
            together: None,
        }
    }

    fn page(rows: Vec<Vec<Option<&str>>>, more: bool) -> ReceivedPage {
        ReceivedPage {
            v: VERSION,
            entity: "zoo.staff".into(),
            key: s(&["region", "id"]),
            columns: s(&["region", "id", "boss", "name"]),
            rows: rows.into_iter().collect(),
            next_after: Some(s(&["eu", "7"])),
            next_after_tag: None,
            more,
            since: None,
            until: Some(Snapshot("5:9:".into())),
            part: 0,
            parts: 1,
        }
    }

    #[test]
    fn a_page_must_fit_the_target() {
        let p = page(vec![vec![Some("eu"), Some("1"), None, Some("a")]], false);
        assert_eq!(
            page_columns(&plan(), &p).unwrap()[1],
            ("id".to_string(), "integer".to_string())
        );
        let mut bad = p.clone();
        bad.columns[3] = "ssn\"; DROP TABLE x".into();
        assert!(page_columns(&plan(), &bad)
            .unwrap_err()
            .to_string()
            .contains("not a written column"));
        let mut bad = p.clone();
        bad.key = s(&["id"]);
        assert!(page_columns(&plan(), &bad)
            .unwrap_err()
            .to_string()
            .contains("keyed by"));
        let mut bad = p.clone();
        bad.rows.pop_cell();
        assert!(page_columns(&plan(), &bad)
            .unwrap_err()
            .to_string()
            .contains("3 values for 4"));
        let mut bad = p;
        bad.entity = "zoo.other".into();
        assert!(page_columns(&plan(), &bad).is_err());
    }

    #[test]
    fn links_are_staged_only_where_there_is_one() {
        let p = page(
            vec![
                vec![Some("eu"), Some("1"), None, Some("a")],
                vec![Some("eu"), Some("2"), Some("1"), Some("b")],
            ],
            false,
        );
        assert_eq!(
            staged_links(&plan(), &p),
            vec![(s(&["eu", "2"]), vec![Some("1".to_string())])]
        );
    }

    #[test]
    fn the_watermark_moves_by_cursor_then_by_snapshot() {
        let start = SyncState {
            synced_until: Some("1:2:".into()),
            ..Default::default()
        };
        let mid = next_state(start, &page(vec![vec![None; 4]; 3], true), "5:9:");
        assert_eq!(mid.pass_until.as_deref(), Some("5:9:"));
        assert_eq!(mid.after_key, Some(s(&["eu", "7"])));
        assert_eq!(mid.synced_until.as_deref(), Some("1:2:"));
        assert_eq!(mid.rows_synced, 3);
        let end = next_state(mid, &page(vec![vec![None; 4]], false), "5:9:");
        assert_eq!(
            end,
            SyncState {
                synced_until: Some("5:9:".into()),
                pass_until: None,
                after_key: None,
                after_tag: None,
                rows_synced: 4
            }
        );
    }

    #[test]
    fn pages_merge_and_the_next_request_continues_after_the_last() {
        let a = page(vec![vec![None; 4]], true);
        let mut b = page(vec![vec![None; 4]; 2], false);
        b.part = 1;
        b.next_after = Some(s(&["us", "3"]));
        b.next_after_tag = Some("d".repeat(32));
        let merged = merge_pages(
            "zoo.staff",
            vec![ReceivedReply::Page(a.clone()), ReceivedReply::Page(b)],
        )
        .unwrap();
        assert_eq!((merged.rows.len(), merged.more, merged.part), (3, false, 1));
        assert_eq!(merged.next_after, Some(s(&["us", "3"])));
        assert_eq!(merged.next_after_tag, Some("d".repeat(32)));
        let request = Request::Page {
            v: VERSION,
            entity: "zoo.staff".into(),
            since: None,
            until: None,
            after: None,
            after_tag: None,
            through: None,
            through_tag: None,
            limit: 200,
            pages: Some(8),
            subset: None,
        };
        assert_eq!(next_request(&request, &merged), None);
        let Some(Request::Page { after, until, .. }) = next_request(&request, &a) else {
            panic!("a page with more has a next request")
        };
        assert_eq!(
            (after, until),
            (Some(s(&["eu", "7"])), Some(Snapshot("5:9:".into())))
        );
    }

    #[test]
    fn plans_follow_the_target_catalog_and_skip_what_it_lacks() {
        let column = |name: &str| Column {
            name: name.into(),
            sql_type: "integer".into(),
            data_type: "integer".into(),
            max_length: None,
            nullable: true,
            generated: name == "total",
            identity: name == "id",
            orderable: true,
            unique: false,
        };
        let table = |name: &str, cols: &[&str]| TableInfo {
            table: TableRef::parse(name),
            columns: cols.iter().map(|c| column(c)).collect(),
            primary_key: Some(s(&["id"])),
            unique_keys: vec![],
            partitioned: false,
        };
        let tables = [table("a", &["id", "boss", "total"]), table("nokey", &["x"])];
        let mut tables = tables.to_vec();
        tables[1].primary_key = None;
        let fks = [ForeignKey {
            name: "a_boss".into(),
            table: TableRef::parse("a"),
            columns: s(&["boss"]),
            parent: TableRef::parse("a"),
            parent_columns: s(&["id"]),
            nullable: true,
            deferrable: false,
        }];
        let (plans, skipped) = entity_plans(
            &s(&["public.a", "public.nokey", "public.gone"]),
            &BTreeMap::new(),
            &tables,
            &fks,
        )
        .unwrap();
        // A table without a key is planned too: synced whole, as a multiset.
        assert_eq!(plans.len(), 2);
        let plan = plans.iter().find(|p| p.entity == "public.a").unwrap();
        assert_eq!(plan.deferred, ["boss"]);
        assert!(plan.parents.is_empty());
        assert!(!plan.types.contains_key("total"));
        assert!(plan.identity.contains("id"));
        let keyless = plans.iter().find(|p| p.entity == "public.nokey").unwrap();
        assert!(keyless.key.is_keyless());
        let reasons: Vec<&str> = skipped.iter().map(|s| s.entity.as_str()).collect();
        assert_eq!(reasons, ["public.gone"]);
    }
}
