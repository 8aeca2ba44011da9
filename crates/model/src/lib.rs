//! The table-and-key model every other part of maskbus speaks: a schema-qualified table, its
//! columns, the key the sync pages by, the foreign keys between tables, a WAL position, and the
//! rules of a name (what a policy, a request or an error may call a table or a column).
//!
//! [`schema`] holds the schema objects the producer serves and the consumer creates; [`plan`]
//! the order tables are filled in over their foreign keys (cycles, deferrable links).
//!
//! Pure data and pure functions (std and serde's derives; `tests/integration/architecture.rs`
//! holds it so):
//! read from the catalog by `maskbus_pg::catalog` and turned into SQL in one place,
//! `maskbus_pg::statements`. A name here is always a real name from the catalog or from a policy
//! checked against it; it is quoted where SQL is written ([`quote_ident`]), never spliced raw.
//! Both the masker and the consumer speak it, so neither reaches the other through it.

pub mod plan;
pub mod schema;

use std::fmt;

/// A plain SQL identifier as a policy may write it: a letter or `_`, then letters, digits, `_`
/// or `$`, at most 63 bytes.
pub fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

/// `table` or `schema.table`, each part an [`is_identifier`].
pub fn is_entity_name(name: &str) -> bool {
    match name.split_once('.') {
        Some((schema, table)) => is_identifier(schema) && is_identifier(table),
        None => is_identifier(name),
    }
}

/// `orders` → `public.orders`; `sales.orders` stays.
pub fn qualify(entity: &str) -> String {
    if entity.contains('.') {
        entity.to_string()
    } else {
        format!("{DEFAULT_SCHEMA}.{entity}")
    }
}

/// Names from outside (a request's entity) are echoed in errors; keep them short, control
/// characters replaced by `?` (a served name cannot write escape codes or lines into a report).
pub fn shorten(text: &str) -> String {
    const MAX: usize = 64;
    excerpt(text, MAX)
}

/// At most `max` characters of `text`, control characters replaced by `?`, with `…` when cut:
/// what an error may echo of input it complains about.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// Quotes an SQL identifier. Only names that come from our own config or the catalog pass through
/// here, never request text, but quoting keeps even those safe.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A write-ahead log position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl fmt::Display for Lsn {
    /// As Postgres prints a `pg_lsn`: `16/B374D848`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}

/// Text that is not a WAL position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAnLsn(pub String);

impl fmt::Display for NotAnLsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a WAL position", self.0)
    }
}

impl std::error::Error for NotAnLsn {}

impl std::str::FromStr for Lsn {
    type Err = NotAnLsn;
    fn from_str(text: &str) -> Result<Self, NotAnLsn> {
        let bad = || NotAnLsn(format!("{:?}", excerpt(text, 40)));
        let (high, low) = text.split_once('/').ok_or_else(bad)?;
        let high = u32::from_str_radix(high, 16).map_err(|_| bad())?;
        let low = u32::from_str_radix(low, 16).map_err(|_| bad())?;
        Ok(Lsn((u64::from(high) << 32) | u64::from(low)))
    }
}

/// The schema a table name without one belongs to.
pub const DEFAULT_SCHEMA: &str = "public";

/// A schema-qualified table: `sales.orders`. Displayed as `schema.table`, written into SQL
/// quoted (`"sales"."orders"`).
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct TableRef {
    pub schema: String,
    pub name: String,
}

impl TableRef {
    pub fn new(schema: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            schema: schema.into(),
            name: name.into(),
        }
    }

    /// `orders` (in [`DEFAULT_SCHEMA`]) or `sales.orders`. Splits at the first dot only; whether
    /// the parts are acceptable names is for the caller to check.
    pub fn parse(qualified: &str) -> Self {
        match qualified.split_once('.') {
            Some((schema, name)) => Self::new(schema, name),
            None => Self::new(DEFAULT_SCHEMA, qualified),
        }
    }

    /// The quoted SQL name: `"sales"."orders"`.
    pub fn sql(&self) -> String {
        format!("{}.{}", quote_ident(&self.schema), quote_ident(&self.name))
    }
}

impl fmt::Display for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.name)
    }
}

/// One column as the catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// `format_type` spelling, usable in a cast: `character varying(60)`, `zoo.mood[]`.
    pub sql_type: String,
    /// `information_schema` spelling: `character varying`, `date`, `ARRAY`, `USER-DEFINED`.
    pub data_type: String,
    pub max_length: Option<usize>,
    pub nullable: bool,
    /// `GENERATED ALWAYS AS (...) STORED`: computed by the server, never written.
    pub generated: bool,
    /// `GENERATED ... AS IDENTITY`: written with `OVERRIDING SYSTEM VALUE`.
    pub identity: bool,
    /// The type has a default btree ordering, so it can be part of a key the sync pages by.
    pub orderable: bool,
    /// A one-column primary key or unique index covers it.
    pub unique: bool,
}

/// Where a table's key comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    PrimaryKey,
    /// A unique index over NOT NULL columns, by index name.
    UniqueIndex(String),
    /// Named in the policy: no constraint backs it, so writes match rows instead of upserting.
    Policy,
    /// No usable key (no primary key, no unique index over NOT NULL columns, none in the
    /// policy): the table is synced whole each pass as a multiset of rows (duplicates stay
    /// duplicates); its key columns are the row's location ([`ROW_LOCATION`]), which only
    /// orders the producer's pages within one read and never names a row in the target.
    RowLocation,
}

/// The system columns (with their types) a keyless table's pages are ordered by
/// ([`KeySource::RowLocation`]): the partition a row lives in and its place there.
pub const ROW_LOCATION: [(&str, &str); 2] = [("tableoid", "oid"), ("ctid", "tid")];

impl KeyDef {
    /// A table without a usable key, synced whole as a multiset ([`KeySource::RowLocation`]).
    pub fn is_keyless(&self) -> bool {
        self.source == KeySource::RowLocation
    }
}

/// The columns a table is paged and upserted by, in key order, with their types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDef {
    pub columns: Vec<KeyColumn>,
    pub source: KeySource,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyColumn {
    pub name: String,
    pub sql_type: String,
}

impl KeyColumn {
    /// `smallint`, `integer` or `bigint`: the server prints its values as plain decimal numbers.
    pub fn is_integer(&self) -> bool {
        matches!(self.sql_type.as_str(), "smallint" | "integer" | "bigint")
    }
}

impl KeyDef {
    pub fn names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// A constraint backs the key, so `ON CONFLICT (key)` works.
    pub fn is_constraint(&self) -> bool {
        !matches!(self.source, KeySource::Policy | KeySource::RowLocation)
    }

    /// Sorts `keys` (each in the server's text form, one value per key column) into the order
    /// the server's `ORDER BY` of the key gives, and drops repeats, when every key column is of
    /// a type whose order the text form carries without the server: `smallint`, `integer` and
    /// `bigint` by value, `uuid` by its canonical lowercase text (the server compares a uuid's
    /// bytes, which that text spells in order). Returns `false` and leaves `keys` as they came
    /// for any other type (a collation, a domain, `numeric`'s scales: the server's to order),
    /// or when a value does not read as its type.
    pub fn sort_keys(&self, keys: &mut Vec<KeyCursor>) -> bool {
        let mut sortable: Vec<(Vec<KeyCell<'_>>, usize)> = Vec::with_capacity(keys.len());
        for (at, key) in keys.iter().enumerate() {
            if key.len() != self.columns.len() {
                return false;
            }
            let cells: Option<Vec<KeyCell<'_>>> = self
                .columns
                .iter()
                .zip(key)
                .map(|(column, value)| KeyCell::read(column, value))
                .collect();
            match cells {
                Some(cells) => sortable.push((cells, at)),
                None => return false,
            }
        }
        sortable.sort_unstable();
        sortable.dedup_by(|a, b| a.0 == b.0);
        let order: Vec<usize> = sortable.into_iter().map(|(_, at)| at).collect();
        let mut taken: Vec<Option<KeyCursor>> =
            std::mem::take(keys).into_iter().map(Some).collect();
        *keys = order
            .into_iter()
            .filter_map(|at| taken[at].take())
            .collect();
        true
    }
}

/// One key value in a form that orders as the server orders its type (see
/// [`KeyDef::sort_keys`]).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum KeyCell<'a> {
    Int(i64),
    Uuid(&'a str),
}

impl<'a> KeyCell<'a> {
    fn read(column: &KeyColumn, value: &'a str) -> Option<Self> {
        if column.is_integer() {
            return value.parse().ok().map(KeyCell::Int);
        }
        (column.sql_type == "uuid" && is_canonical_uuid(value)).then_some(KeyCell::Uuid(value))
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex: how the server prints a uuid.
fn is_canonical_uuid(value: &str) -> bool {
    value.len() == 36
        && value.bytes().enumerate().all(|(at, b)| match at {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

/// A position in a table's key order: the key values of the last row seen, as text, in key
/// column order. Rows after it are those whose key compares greater, column by column.
pub type KeyCursor = Vec<String>;

/// `table.columns` references `parent.parent_columns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKey {
    /// The constraint's name.
    pub name: String,
    pub table: TableRef,
    pub columns: Vec<String>,
    pub parent: TableRef,
    pub parent_columns: Vec<String>,
    /// Every column of the key may be NULL, so a row can be written without it and linked later.
    pub nullable: bool,
    /// `DEFERRABLE`: checked at commit when deferred.
    pub deferrable: bool,
}

/// A table as the sync sees it: its columns, and the candidates for its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    pub table: TableRef,
    pub columns: Vec<Column>,
    pub primary_key: Option<Vec<String>>,
    /// Unique, non-partial indexes on plain NOT NULL columns, by index name, shortest first.
    pub unique_keys: Vec<(String, Vec<String>)>,
    /// A partitioned table: synced through its parent, the partitions are not entities.
    pub partitioned: bool,
}

/// Why a table has no key the sync can page by.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("{table}: the policy names key column {column}, which the table does not have")]
    UnknownColumn { table: TableRef, column: String },
    #[error("{table}: key column {column} is of type {sql_type}, which has no btree ordering; the sync pages by key order, so choose other key columns in the policy ([maskbus.keys])")]
    Unordered {
        table: TableRef,
        column: String,
        sql_type: String,
    },
    #[error("{table}: key column {column} is nullable; a key the sync pages by must be NOT NULL")]
    Nullable { table: TableRef, column: String },
    #[error("{table}: key column {column} is generated; choose other key columns")]
    Generated { table: TableRef, column: String },
}

impl TableInfo {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The columns the sync reads and writes: all but generated ones, in table order.
    pub fn synced_columns(&self) -> impl Iterator<Item = &Column> {
        self.columns.iter().filter(|c| !c.generated)
    }

    /// The key to page by: the one the policy names, else the primary key, else the shortest
    /// unique index over NOT NULL columns, else none ([`KeySource::RowLocation`]: the table is
    /// synced whole, as a multiset). Every key column must be orderable and not generated.
    pub fn key(&self, from_policy: Option<&[String]>) -> Result<KeyDef, KeyError> {
        let (names, source) = match (from_policy, &self.primary_key, self.unique_keys.first()) {
            (Some(names), _, _) => {
                // A policy key that is also the primary key or a unique index keeps ON CONFLICT.
                let source = if self.primary_key.as_deref() == Some(names) {
                    KeySource::PrimaryKey
                } else if let Some((index, _)) =
                    self.unique_keys.iter().find(|(_, cols)| cols == names)
                {
                    KeySource::UniqueIndex(index.clone())
                } else {
                    KeySource::Policy
                };
                (names.to_vec(), source)
            }
            (None, Some(pk), _) => (pk.clone(), KeySource::PrimaryKey),
            (None, None, Some((index, cols))) => {
                (cols.clone(), KeySource::UniqueIndex(index.clone()))
            }
            (None, None, None) => {
                // No usable key: synced whole, as a multiset, paged by row location.
                return Ok(KeyDef {
                    columns: ROW_LOCATION
                        .iter()
                        .map(|(name, sql_type)| KeyColumn {
                            name: name.to_string(),
                            sql_type: sql_type.to_string(),
                        })
                        .collect(),
                    source: KeySource::RowLocation,
                });
            }
        };
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let column = self.column(&name).ok_or_else(|| KeyError::UnknownColumn {
                table: self.table.clone(),
                column: name.clone(),
            })?;
            if column.generated {
                return Err(KeyError::Generated {
                    table: self.table.clone(),
                    column: name,
                });
            }
            if !column.orderable {
                return Err(KeyError::Unordered {
                    table: self.table.clone(),
                    column: name,
                    sql_type: column.sql_type.clone(),
                });
            }
            if column.nullable && source != KeySource::PrimaryKey {
                return Err(KeyError::Nullable {
                    table: self.table.clone(),
                    column: name,
                });
            }
            columns.push(KeyColumn {
                name,
                sql_type: column.sql_type.clone(),
            });
        }
        Ok(KeyDef { columns, source })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn column(name: &str, sql_type: &str) -> Column {
        Column {
            name: name.into(),
            sql_type: sql_type.into(),
            data_type: sql_type.into(),
            max_length: None,
            nullable: false,
            generated: false,
            identity: false,
            orderable: true,
            unique: false,
        }
    }

    pub fn table(name: &str, columns: Vec<Column>) -> TableInfo {
        TableInfo {
            table: TableRef::parse(name),
            columns,
            primary_key: None,
            unique_keys: vec![],
            partitioned: false,
        }
    }

    #[test]
    fn names_parse_and_quote() {
        assert_eq!(TableRef::parse("orders"), TableRef::new("public", "orders"));
        let t = TableRef::parse("Sales.Order Lines");
        assert_eq!(t.to_string(), "Sales.Order Lines");
        assert_eq!(t.sql(), "\"Sales\".\"Order Lines\"");
        assert_eq!(TableRef::new("a", "x\"y").sql(), "\"a\".\"x\"\"y\"");
    }

    #[test]
    fn the_key_is_the_policys_then_the_primary_key_then_a_unique_index() {
        let mut t = table(
            "t",
            vec![
                column("a", "integer"),
                column("b", "text"),
                column("c", "uuid"),
            ],
        );
        let keyless = t.key(None).unwrap();
        assert!(keyless.is_keyless());
        assert_eq!(keyless.names(), vec!["tableoid".to_string(), "ctid".into()]);
        t.unique_keys = vec![("t_c_key".into(), vec!["c".into()])];
        let key = t.key(None).unwrap();
        assert_eq!(
            (key.names(), key.source),
            (
                vec!["c".to_string()],
                KeySource::UniqueIndex("t_c_key".into())
            )
        );
        t.primary_key = Some(vec!["a".into(), "b".into()]);
        let key = t.key(None).unwrap();
        assert_eq!(key.names(), ["a", "b"]);
        assert_eq!(key.columns[1].sql_type, "text");
        let key = t.key(Some(&["b".to_string()])).unwrap();
        assert_eq!(key.source, KeySource::Policy);
        assert!(!key.is_constraint());
        assert!(matches!(
            t.key(Some(&["zz".to_string()])),
            Err(KeyError::UnknownColumn { .. })
        ));
    }

    #[test]
    fn unordered_nullable_and_generated_key_columns_are_refused() {
        let mut json = column("j", "json");
        json.orderable = false;
        let mut maybe = column("m", "text");
        maybe.nullable = true;
        let mut computed = column("g", "integer");
        computed.generated = true;
        let t = table("t", vec![json, maybe, computed]);
        let err = t.key(Some(&["j".to_string()])).unwrap_err();
        assert!(err.to_string().contains("no btree ordering"), "{err}");
        assert!(matches!(
            t.key(Some(&["m".to_string()])),
            Err(KeyError::Nullable { .. })
        ));
        assert!(matches!(
            t.key(Some(&["g".to_string()])),
            Err(KeyError::Generated { .. })
        ));
    }
}

/// Where in `text` an error of a file lies, for people: `line L, column C: MESSAGE`, then the
/// line itself and a caret under the place (control characters shown as `?`, the line cut to
/// 120 characters). `span` is a byte range of `text` (as the toml crate reports it).
pub fn locate_in_text(text: &str, span: Option<std::ops::Range<usize>>, message: &str) -> String {
    let message = message.trim_end();
    let Some(span) = span else {
        return message.to_string();
    };
    let at = span.start.min(text.len());
    let at = (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line_no = text[..line_start].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    let shown = excerpt(text[line_start..line_end].trim_end_matches('\r'), 120);
    let caret = " ".repeat(column.saturating_sub(1).min(120));
    format!(
        "line {line_no}, column {column}: {message}\n  {line_no:>4} | {shown}\n       | {caret}^"
    )
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo (at
/// most a third of the name's length, and 3): what "did you mean" suggests.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut last = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let keep = row[j + 1];
                row[j + 1] = (last + usize::from(ca != *cb))
                    .min(row[j] + 1)
                    .min(row[j + 1] + 1);
                last = keep;
            }
        }
        row[b.len()]
    }
    let limit = (name.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A duration in a person's units: `0.2 s`, `1.7 s`, `30 s`, `3 min 20 s`, `2 h 5 min`.
pub fn human_duration(d: std::time::Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 10.0 {
        let tenths = (secs * 10.0).round() / 10.0;
        return if tenths.fract() == 0.0 {
            format!("{tenths:.0} s")
        } else {
            format!("{tenths:.1} s")
        };
    }
    let whole = secs.round() as u64;
    match whole {
        0..=59 => format!("{whole} s"),
        60..=3599 => match whole % 60 {
            0 => format!("{} min", whole / 60),
            s => format!("{} min {s} s", whole / 60),
        },
        _ => match (whole % 3600) / 60 {
            0 => format!("{} h", whole / 3600),
            m => format!("{} h {m} min", whole / 3600),
        },
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn durations_read_in_a_persons_units() {
        use std::time::Duration;
        assert_eq!(human_duration(Duration::from_nanos(1_666_666_666)), "1.7 s");
        assert_eq!(human_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(human_duration(Duration::from_secs(2)), "2 s");
        assert_eq!(human_duration(Duration::from_millis(200)), "0.2 s");
        assert_eq!(human_duration(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(human_duration(Duration::from_secs(120)), "2 min");
        assert_eq!(human_duration(Duration::from_secs(7500)), "2 h 5 min");
    }

    #[test]
    fn an_error_points_at_its_line_and_column() {
        let text = "role = \"producer\"\nbus_url = \"postgres://x\n";
        let shown = locate_in_text(text, Some(28..29), "invalid basic string");
        assert!(
            shown.starts_with("line 2, column 11: invalid basic string"),
            "{shown}"
        );
        assert!(shown.contains("   2 | bus_url = \"postgres://x"), "{shown}");
        assert!(shown.ends_with("          ^"), "{shown:?}");
    }

    #[test]
    fn a_typo_gets_its_key() {
        let keys = ["bus_url", "source_url", "page_size", "policy"];
        assert_eq!(closest("sorce_url", keys), Some("source_url"));
        assert_eq!(closest("pagesize", keys), Some("page_size"));
        assert_eq!(closest("nothing_like_it", keys), None);
    }
}

/// The two roles of maskbus: a process is one or the other, by configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Holds production's credentials and the policy; masks and serves.
    Producer,
    /// Holds the test database's credentials; asks and writes.
    Consumer,
}

impl Role {
    pub const ALL: [Role; 2] = [Role::Producer, Role::Consumer];

    /// `producer` or `consumer`, as a config writes it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == text)
    }

    /// The role on the other side of the bus.
    pub fn other(self) -> Role {
        match self {
            Role::Producer => Role::Consumer,
            Role::Consumer => Role::Producer,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod sort_keys_tests {
    use super::*;

    fn key(types: &[&str]) -> KeyDef {
        KeyDef {
            columns: types
                .iter()
                .enumerate()
                .map(|(i, t)| KeyColumn {
                    name: format!("c{i}"),
                    sql_type: t.to_string(),
                })
                .collect(),
            source: KeySource::PrimaryKey,
        }
    }

    fn cursors(keys: &[&[&str]]) -> Vec<KeyCursor> {
        keys.iter()
            .map(|k| k.iter().map(|v| v.to_string()).collect())
            .collect()
    }

    #[test]
    fn integers_sort_by_value_not_by_text_and_repeats_go() {
        let mut keys = cursors(&[&["10"], &["-3"], &["9"], &["10"], &["9223372036854775807"]]);
        assert!(key(&["bigint"]).sort_keys(&mut keys));
        assert_eq!(
            keys,
            cursors(&[&["-3"], &["9"], &["10"], &["9223372036854775807"]])
        );
    }

    #[test]
    fn composite_keys_sort_column_by_column() {
        let mut keys = cursors(&[
            &["2", "00000000-0000-0000-0000-00000000000a"],
            &["1", "ffffffff-0000-0000-0000-000000000000"],
            &["2", "00000000-0000-0000-0000-000000000009"],
        ]);
        assert!(key(&["integer", "uuid"]).sort_keys(&mut keys));
        assert_eq!(
            keys,
            cursors(&[
                &["1", "ffffffff-0000-0000-0000-000000000000"],
                &["2", "00000000-0000-0000-0000-000000000009"],
                &["2", "00000000-0000-0000-0000-00000000000a"],
            ])
        );
    }

    #[test]
    fn other_types_and_unreadable_values_are_left_to_the_server() {
        for (types, value) in [
            (["text"], "b"),
            (["numeric"], "1.50"),
            (["money_domain"], "1"),
            (["bigint"], "1e3"),
            (["uuid"], "0000000A-0000-0000-0000-000000000000"),
        ] {
            let mut keys = cursors(&[&[value], &["a"]]);
            let before = keys.clone();
            assert!(!key(&types).sort_keys(&mut keys), "{types:?} {value}");
            assert_eq!(keys, before);
        }
        let mut short = cursors(&[&["1"]]);
        assert!(!key(&["bigint", "bigint"]).sort_keys(&mut short));
    }
}
