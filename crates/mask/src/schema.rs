//! The masking boundary for schema objects. The producer reads the policy's tables from the
//! source catalog into a [`Schema`]; only [`serve`] turns it into a [`ServedSchema`], the one
//! form a schema reply can carry (its fields are private to this module).
//!
//! Deny by default:
//! - a table the policy does not name is not described; a table with a column the policy has
//!   no rule for is left out whole (named, with the fix), so nothing of that column crosses
//!   (a generated column needs none: the target computes it from the masked columns);
//! - comments are left out unless the policy keeps them (`[maskbus.schema] comments = "keep"`),
//!   and a kept comment is read by the audit's detectors like any value;
//! - every expression (a default, a generated column, a check, an exclusion, a partition bound,
//!   an index's predicate) and every enum label and domain rule is read by the audit's
//!   detectors: one that looks like personal data leaves out the table that holds or uses it,
//!   named, with the detector that fired (never the value). A literal is judged by its role
//!   ([`Guard::sql`]): a value compared with a column whole; a pattern (`~`, `LIKE`, `SIMILAR
//!   TO`, a `regexp_*` pattern) or a format mask by its fixed characters only, so
//!   `CHECK (au_id ~ '^[0-9]{3}-[0-9]{2}-[0-9]{4}$')` is served and `'^219-09-9999$'` is not; a
//!   number bounding a range is not read. The exact matcher of real values reads every text
//!   whole. `maskbus policy check` runs this same judgement (`maskbus_policy::constraints`).
//!
//! What was left out is listed ([`LeftOut`]), so the consumer can fail those tables closed by
//! name.

use crate::egress::Guard;
use crate::policy::Policy;
use maskbus_model::schema::{Schema, TypeDef, TypeKind};
use maskbus_model::TableRef;
use std::collections::BTreeSet;

/// What of the schema may cross: `[maskbus.schema]` of the policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaRules {
    keep_comments: bool,
}

impl SchemaRules {
    /// `[maskbus.schema]`: `comments = "keep" | "drop"` (default `drop`).
    pub(crate) fn parse(value: toml::Value) -> Result<Self, String> {
        let toml::Value::Table(table) = value else {
            return Err("[maskbus.schema] must be a table: comments = \"keep\" or \"drop\"".into());
        };
        let mut rules = Self::default();
        for (key, value) in table {
            match (key.as_str(), value.as_str()) {
                ("comments", Some("keep")) => rules.keep_comments = true,
                ("comments", Some("drop")) => rules.keep_comments = false,
                ("comments", _) => {
                    return Err("[maskbus.schema] comments is \"keep\" or \"drop\"".into())
                }
                _ => {
                    return Err(format!(
                    "[maskbus.schema] has no setting {}; it takes comments = \"keep\" or \"drop\"",
                    crate::escape::one_line(&key)
                ))
                }
            }
        }
        Ok(rules)
    }

    pub fn keeps_comments(&self) -> bool {
        self.keep_comments
    }
}

/// A table (or comment) the boundary kept from crossing, and why. Names only, never a value.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeftOut {
    /// `schema.table`.
    pub entity: String,
    pub reason: String,
}

/// A schema that passed the boundary: only [`serve`] makes one.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ServedSchema {
    schema: Schema,
    left_out: Vec<LeftOut>,
}

impl ServedSchema {
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn left_out(&self) -> &[LeftOut] {
        &self.left_out
    }

    /// A fingerprint of what is served: it changes when a migration on the source (or the
    /// policy) changes what crosses.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        fingerprint_text(blake3::hash(text.as_bytes()).as_bytes())
    }
}

/// A fingerprint as it travels: 16 letters (`a` to `p`, one per half byte of the hash's first
/// 8 bytes). No digits, so that no detector reads a number into it on the bus (a hex digest
/// under a key named like `public.accounts` once looked like an account number).
pub fn fingerprint_text(hash: &[u8]) -> String {
    hash.iter()
        .take(8)
        .flat_map(|b| [b >> 4, b & 0x0f])
        .map(|n| char::from(b'a' + n))
        .collect()
}

/// The detector that fires on a plain text of the schema (an enum label, a kept comment, a
/// sequence's number) read under `field`: the egress guard's detectors and exact matcher.
fn looks_like_pii(guard: &Guard, field: &str, text: &str) -> Option<&'static str> {
    guard.text(field, text)
}

/// The detector that fires on a SQL text of the schema (a default, a generated expression, a
/// check, a partition bound or key, an index's definition): its identifiers judged as names,
/// its literals as values, alone and joined (`'219-09-' || '9999'`) ([`Guard::sql`]).
fn sql_looks_like_pii(guard: &Guard, field: &str, sql: &str) -> Option<&'static str> {
    guard.sql(field, sql)
}

/// The detector that fires on the name of a schema object (a table, a constraint, an index, a
/// label), judged as a name ([`Guard::name`]): `account_emailaddress_user_id_2c513194` is an
/// identifier with a hash suffix, not an account number.
fn name_looks_like_pii(guard: &Guard, name: &str) -> Option<&'static str> {
    guard.name(name)
}

fn type_name(t: &TypeDef) -> String {
    format!("{}.{}", t.schema, t.name)
}

/// The types `t` is built on (a domain's base, a composite's attributes, a range's subtype),
/// as `format_type` text.
fn inner_types(t: &TypeDef) -> Vec<&str> {
    match &t.kind {
        TypeKind::Domain { base, .. } => vec![base.as_str()],
        TypeKind::Composite { attributes } => {
            attributes.iter().map(|(_, ty)| ty.as_str()).collect()
        }
        TypeKind::Range { subtype } => vec![subtype.as_str()],
        TypeKind::Enum { .. } => Vec::new(),
    }
}

/// Whether a column type (`format_type` text) is `type_` or an array of it.
fn uses_type(sql_type: &str, t: &TypeDef) -> bool {
    let bare = sql_type.trim_end_matches("[]").trim_matches('"');
    let qualified = type_name(t);
    bare == qualified
        || bare.replace('"', "") == qualified
        || (t.schema == maskbus_model::DEFAULT_SCHEMA && bare == t.name)
}

/// Lets `source` through the boundary of `policy`: see the module's rules. `refused` are
/// tables the reader could not describe, left out with their reasons.
pub fn serve(
    mut source: Schema,
    refused: Vec<(TableRef, String)>,
    policy: &Policy,
) -> ServedSchema {
    let guard = policy.guard();
    let mut left_out: Vec<LeftOut> = Vec::new();
    let refuse = |entity: &TableRef, reason: String, out: &mut Vec<(TableRef, String)>| {
        out.push((entity.clone(), reason));
    };
    let mut refused = refused;
    // A partition is synced through its root, by the root's rules, and fails with it.
    let root_of = |table: &TableRef| -> TableRef {
        let mut at = table.clone();
        for _ in 0..source.tables.len() {
            match source
                .tables
                .iter()
                .find(|t| t.table == at)
                .and_then(|t| t.partition_of.as_ref())
            {
                Some((parent, _)) => at = parent.clone(),
                None => break,
            }
        }
        at
    };
    // A table the policy names and the source lacks (dropped, or renamed): the policy does not
    // agree with the source yet.
    for (entity, _) in policy.entities() {
        let table = TableRef::parse(entity);
        if !source.tables.iter().any(|t| t.table == table) {
            refused.push((
                table,
                "the policy names this table; the source has no such table: remove it from the policy (a dropped table) or rename it".into(),
            ));
        }
    }
    for table in &source.tables {
        let entity = root_of(&table.table).to_string();
        let Some(rules) = policy.entity(&entity) else {
            refuse(
                &table.table,
                "the policy has no rules for it".into(),
                &mut refused,
            );
            continue;
        };
        if table.partition_of.is_none() {
            for (ruled, _) in rules.columns() {
                if !table.columns.iter().any(|c| c.name == ruled) {
                    refuse(
                        &table.table,
                        format!(
                            "the policy has a rule for column {}, which the source table does not have: remove the rule (a dropped column) or rename it (a renamed column)",
                            crate::shorten(ruled)
                        ),
                        &mut refused,
                    );
                }
            }
        }
        for column in &table.columns {
            // A generated column is computed in the target from the masked columns: it needs
            // no rule (and no row carries it).
            if rules.rule(&column.name).is_none() && column.generated.is_none() {
                refuse(
                    &table.table,
                    format!(
                        "column {} has no rule in the policy: add one (maskbus policy init --update proposes it); until then the table is not synced",
                        crate::shorten(&column.name)
                    ),
                    &mut refused,
                );
            }
            for (what, expression) in [
                ("default", column.default.as_deref()),
                ("generated expression", column.generated.as_deref()),
            ] {
                if let Some(detector) =
                    expression.and_then(|e| sql_looks_like_pii(guard, &column.name, e))
                {
                    refuse(
                        &table.table,
                        format!(
                            "the {what} of column {} looks like {detector}: the schema would carry it to the test side",
                            crate::shorten(&column.name)
                        ),
                        &mut refused,
                    );
                }
            }
        }
        if let Some((_, bound)) = &table.partition_of {
            if let Some(detector) = sql_looks_like_pii(guard, "bound", bound) {
                refuse(
                    &table.table,
                    format!("its partition bound looks like {detector}"),
                    &mut refused,
                );
            }
        }
        if let Some(detector) = table
            .partition_key
            .as_deref()
            .and_then(|k| sql_looks_like_pii(guard, "partition key", k))
        {
            refuse(
                &table.table,
                format!("its partition key looks like {detector}"),
                &mut refused,
            );
        }
        // Names are text too: a partition's, or any object's, is in no policy a reviewer reads.
        if let Some(detector) = name_looks_like_pii(guard, &table.table.name)
            .or_else(|| name_looks_like_pii(guard, &table.table.schema))
        {
            refuse(
                &table.table,
                format!("its name or its schema's looks like {detector}"),
                &mut refused,
            );
        }
    }
    // An object whose name itself looks like personal data is never named in a reason.
    for constraint in &source.constraints {
        let reason = match name_looks_like_pii(guard, &constraint.name) {
            Some(detector) => Some(format!("a constraint's name looks like {detector}")),
            None => sql_looks_like_pii(guard, &constraint.name, &constraint.definition).map(
                |detector| {
                    format!(
                        "constraint {} looks like {detector}",
                        crate::shorten(&constraint.name)
                    )
                },
            ),
        };
        if let Some(reason) = reason {
            refuse(&constraint.table, reason, &mut refused);
        }
    }
    for index in &source.indexes {
        let reason = match name_looks_like_pii(guard, &index.name) {
            Some(detector) => Some(format!("an index's name looks like {detector}")),
            None => sql_looks_like_pii(guard, &index.name, &index.definition).map(|detector| {
                format!(
                    "index {} looks like {detector}",
                    crate::shorten(&index.name)
                )
            }),
        };
        if let Some(reason) = reason {
            refuse(&index.table, reason, &mut refused);
        }
    }
    // Types whose labels or rules look like personal data: every table using them stays out.
    let mut bad_types: Vec<(TypeDef, String)> = Vec::new();
    for t in &source.types {
        let detector = match &t.kind {
            TypeKind::Enum { labels } => labels
                .iter()
                .find_map(|l| looks_like_pii(guard, &t.name, l)),
            TypeKind::Domain {
                default, checks, ..
            } => default
                .iter()
                .chain(checks.iter().map(|(_, c)| c))
                .find_map(|e| sql_looks_like_pii(guard, &t.name, e))
                .or_else(|| {
                    checks
                        .iter()
                        .find_map(|(n, _)| name_looks_like_pii(guard, n))
                }),
            TypeKind::Composite { attributes } => attributes
                .iter()
                .find_map(|(a, _)| name_looks_like_pii(guard, a)),
            TypeKind::Range { .. } => None,
        }
        .or_else(|| name_looks_like_pii(guard, &t.name));
        if let Some(detector) = detector {
            let reason = if name_looks_like_pii(guard, &t.name).is_some() {
                format!("a type it uses has a name that looks like {detector}")
            } else {
                format!(
                    "type {} (which it uses) has a label or rule that looks like {detector}",
                    crate::shorten(&type_name(t))
                )
            };
            bad_types.push((t.clone(), reason));
        }
    }
    // A type is bad too when it is built on a bad one (a domain over it, a composite with it).
    loop {
        let before = bad_types.len();
        for t in &source.types {
            if bad_types.iter().any(|(b, _)| type_name(b) == type_name(t)) {
                continue;
            }
            let inner = inner_types(t);
            if let Some((_, reason)) = bad_types
                .iter()
                .find(|(b, _)| inner.iter().any(|ty| uses_type(ty, b)))
                .cloned()
            {
                bad_types.push((t.clone(), reason));
            }
        }
        if bad_types.len() == before {
            break;
        }
    }
    for table in &source.tables {
        for (t, reason) in &bad_types {
            if table.columns.iter().any(|c| uses_type(&c.sql_type, t)) {
                refuse(&table.table, reason.clone(), &mut refused);
            }
        }
    }
    // A sequence's name and the numbers it was made with (START, MINVALUE, MAXVALUE other than
    // the defaults) are text of production too. One that looks like personal data leaves out
    // the table that owns it, or, owned by none, the sequence itself.
    let mut bad_sequences = BTreeSet::new();
    for q in &source.sequences {
        // The defaults (1, and the type's bounds) say nothing; any other number is judged as
        // a value under no field's name (a sequence named `hotel_...` is no phone's).
        let bounds = [
            0,
            1,
            -1,
            i16::MAX.into(),
            i16::MIN.into(),
            i32::MAX.into(),
            i32::MIN.into(),
            i64::MAX,
            i64::MIN,
        ];
        let options = [q.start, q.min, q.max, q.increment]
            .into_iter()
            .filter(|value| !bounds.contains(value))
            .find_map(|value| looks_like_pii(guard, "sequence", &value.unsigned_abs().to_string()));
        let Some(detector) = name_looks_like_pii(guard, &q.name).or(options) else {
            continue;
        };
        let what = if options.is_some() {
            format!("a sequence it uses was made with a number (START, MINVALUE or MAXVALUE) that looks like {detector}")
        } else {
            format!("the name of a sequence it uses looks like {detector}")
        };
        match &q.owned_by {
            Some((table, _)) => refuse(table, what, &mut refused),
            None => {
                bad_sequences.insert((q.schema.clone(), q.name.clone()));
                left_out.push(LeftOut {
                    // Never its name: it may be what fired. Numbered within the schema.
                    entity: format!("dropped sequence {} #{}", q.schema, bad_sequences.len()),
                    reason: format!(
                        "a sequence of schema {}: {}",
                        crate::shorten(&q.schema),
                        what.replacen("it uses ", "", 1)
                    ),
                });
            }
        }
    }
    source
        .sequences
        .retain(|q| !bad_sequences.contains(&(q.schema.clone(), q.name.clone())));
    // Comments: left out unless kept; a kept one is read like a value.
    if policy.schema_rules().keeps_comments() {
        source.comments.retain(|c| {
            let field = c.column.as_deref().unwrap_or("comment");
            match looks_like_pii(guard, field, &c.text) {
                None => true,
                Some(detector) => {
                    left_out.push(LeftOut {
                        entity: c.table.to_string(),
                        reason: format!(
                            "a comment {}looks like {detector}; it was left out",
                            c.column
                                .as_deref()
                                .map(|c| format!("on column {} ", crate::shorten(c)))
                                .unwrap_or_default()
                        ),
                    });
                    false
                }
            }
        });
    } else {
        source.comments.clear();
    }
    // What is not served is only named: a name the guard judges personal is said by its kind.
    for item in &mut source.not_served {
        item.name = match guard.name(&item.name) {
            None => crate::shorten(&item.name),
            Some(detector) => format!("(its name looks like {detector})"),
        };
    }
    // A partition fails with its root (its rows are synced through it).
    let refused: Vec<(TableRef, String)> = refused
        .into_iter()
        .map(|(table, reason)| (root_of(&table), reason))
        .collect();
    let mut seen = BTreeSet::new();
    for (table, reason) in refused {
        if seen.insert((table.clone(), reason.clone())) {
            source.without_table(&table);
            left_out.push(LeftOut {
                entity: table.to_string(),
                reason,
            });
        }
    }
    // Nothing of a table left out crosses: the types and sequences only it used stay behind
    // too (a bad type is in use by no table served now).
    let mut used: Vec<TypeDef> = Vec::new();
    loop {
        let before = used.len();
        for t in &source.types {
            if used.iter().any(|u| type_name(u) == type_name(t)) {
                continue;
            }
            let by_table = source
                .tables
                .iter()
                .any(|table| table.columns.iter().any(|c| uses_type(&c.sql_type, t)));
            let by_type = used
                .iter()
                .any(|u| inner_types(u).iter().any(|ty| uses_type(ty, t)));
            if by_table || by_type {
                used.push(t.clone());
            }
        }
        if used.len() == before {
            break;
        }
    }
    source
        .types
        .retain(|t| used.iter().any(|u| type_name(u) == type_name(t)));
    let tables = &source.tables;
    source.sequences.retain(|q| match &q.owned_by {
        Some((table, _)) => tables.iter().any(|t| t.table == *table),
        None => tables.iter().any(|t| {
            t.columns.iter().any(|c| {
                c.default.as_deref().is_some_and(|d| {
                    d.contains(&format!("{}.{}", q.schema, q.name)) || d.contains(&q.name)
                })
            })
        }),
    });
    ServedSchema {
        schema: source,
        left_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_model::schema::{ColumnDef, CommentDef, ConstraintDef, ConstraintKind, TableDef};

    fn column(name: &str, default: Option<&str>) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            sql_type: "text".into(),
            not_null: false,
            default: default.map(String::from),
            identity: None,
            generated: None,
            collation: None,
        }
    }

    fn table(name: &str, columns: Vec<ColumnDef>) -> TableDef {
        TableDef {
            table: TableRef::parse(name),
            columns,
            partition_key: None,
            partition_of: None,
        }
    }

    fn policy(extra: &str) -> Policy {
        Policy::from_toml(
            "p",
            &format!("{extra}\n[people]\nid = \"keep\"\nnote = \"keep\"\n[pets]\nid = \"keep\"\n"),
        )
        .unwrap()
    }

    #[test]
    fn what_has_no_rule_or_looks_like_pii_stays_on_the_producer_named() {
        let source = Schema {
            tables: vec![
                table(
                    "people",
                    vec![
                        column("id", None),
                        column("note", Some("'219-09-9999'::text")),
                    ],
                ),
                table("pets", vec![column("id", None), column("chip", None)]),
                table("secrets", vec![column("id", None)]),
            ],
            comments: vec![CommentDef {
                table: TableRef::parse("people"),
                column: None,
                text: "manager SSN 219-09-9999".into(),
            }],
            ..Schema::default()
        };
        let served = serve(source, Vec::new(), &policy(""));
        assert!(
            served.schema().tables.is_empty(),
            "{:?}",
            served.schema().tables
        );
        assert!(served.schema().comments.is_empty());
        let reasons: Vec<String> = served
            .left_out()
            .iter()
            .map(|l| format!("{}: {}", l.entity, l.reason))
            .collect();
        let all = reasons.join("\n");
        assert!(
            all.contains("public.people: the default of column note looks like ssn"),
            "{all}"
        );
        assert!(
            all.contains("public.pets: column chip has no rule"),
            "{all}"
        );
        assert!(
            all.contains("public.secrets: the policy has no rules for it"),
            "{all}"
        );
        assert!(!all.contains("9999"), "{all}");
    }

    #[test]
    fn comments_cross_only_when_kept_and_clean_and_enum_labels_are_values() {
        let source = Schema {
            tables: vec![table(
                "people",
                vec![column("id", None), column("note", None)],
            )],
            types: vec![TypeDef {
                schema: "public".into(),
                name: "tier".into(),
                kind: TypeKind::Enum {
                    labels: vec!["gold".into(), "dave.smith@yahoo.com".into()],
                },
            }],
            constraints: vec![ConstraintDef {
                table: TableRef::parse("people"),
                name: "people_pkey".into(),
                kind: ConstraintKind::Primary,
                definition: "PRIMARY KEY (id)".into(),
            }],
            comments: vec![
                CommentDef {
                    table: TableRef::parse("people"),
                    column: None,
                    text: "who we serve".into(),
                },
                CommentDef {
                    table: TableRef::parse("people"),
                    column: Some("note".into()),
                    text: "call 212-555-0143 first".into(),
                },
            ],
            ..Schema::default()
        };
        let dropped = serve(source.clone(), Vec::new(), &policy(""));
        assert!(dropped.schema().comments.is_empty());
        assert_eq!(dropped.schema().table_names(), vec!["public.people"]);
        assert!(dropped.schema().types.is_empty(), "the enum is refused");
        let kept = serve(
            source,
            Vec::new(),
            &policy("[maskbus.schema]\ncomments = \"keep\""),
        );
        assert_eq!(kept.schema().comments.len(), 1);
        assert_eq!(kept.schema().comments[0].text, "who we serve");
        assert_eq!(kept.schema().constraints.len(), 1);
    }

    #[test]
    fn split_literals_keys_names_and_the_types_of_a_table_left_out_stay_behind() {
        let typed = |name: &str, ty: &str| ColumnDef {
            sql_type: ty.into(),
            ..column(name, None)
        };
        let source = Schema {
            tables: vec![
                table(
                    "people",
                    vec![
                        column("id", None),
                        column("note", Some("('219-09-'::text || '9999'::text)")),
                    ],
                ),
                TableDef {
                    partition_key: Some("LIST (((note = '078-05-1120'::text)))".into()),
                    ..table("pets", vec![typed("id", "public.diagnosis")])
                },
            ],
            types: vec![
                TypeDef {
                    schema: "public".into(),
                    name: "diagnosis".into(),
                    kind: TypeKind::Enum {
                        labels: vec!["flu".into()],
                    },
                },
                TypeDef {
                    schema: "public".into(),
                    name: "tier".into(),
                    kind: TypeKind::Enum {
                        labels: vec!["dave.smith@yahoo.com".into()],
                    },
                },
                TypeDef {
                    schema: "public".into(),
                    name: "level".into(),
                    kind: TypeKind::Domain {
                        base: "public.tier".into(),
                        not_null: false,
                        default: None,
                        checks: Vec::new(),
                    },
                },
            ],
            indexes: vec![maskbus_model::schema::IndexDef {
                table: TableRef::parse("people"),
                name: "219-09-9999".into(),
                definition: "CREATE INDEX x ON public.people USING btree (id)".into(),
            }],
            ..Schema::default()
        };
        let served = serve(source, Vec::new(), &policy(""));
        let all: String = served
            .left_out()
            .iter()
            .map(|l| format!("{}: {}\n", l.entity, l.reason))
            .collect();
        assert!(
            all.contains("public.people: the default of column note looks like ssn"),
            "{all}"
        );
        assert!(
            all.contains("public.pets: its partition key looks like ssn"),
            "{all}"
        );
        assert!(all.contains("index"), "{all}");
        assert!(served.schema().tables.is_empty());
        assert!(served.schema().indexes.is_empty());
        // Neither the left-out table's enum, nor the bad enum, nor the domain over it.
        assert!(
            served.schema().types.is_empty(),
            "{:?}",
            served.schema().types
        );
        assert!(!all.contains("9999") && !all.contains("1120"), "{all}");
    }

    #[test]
    fn a_fingerprint_carries_no_digit_a_detector_could_read() {
        let text = fingerprint_text(&[0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0xff]);
        assert_eq!(text, "bcdefghijklmnopa");
        assert!(looks_like_pii(&Guard::default(), "public.accounts", &text).is_none());
    }

    #[test]
    fn a_format_check_is_served_and_a_value_written_as_a_pattern_is_not() {
        let with_check = |name: &str, definition: &str| Schema {
            tables: vec![
                table("people", vec![column("id", None), column("note", None)]),
                table("pets", vec![column("id", None)]),
            ],
            constraints: vec![ConstraintDef {
                table: TableRef::parse("people"),
                name: name.into(),
                kind: ConstraintKind::Check,
                definition: definition.into(),
            }],
            ..Schema::default()
        };
        let served = serve(
            with_check(
                "people_id_format",
                "CHECK ((id ~ '^[0-9]{3}-[0-9]{2}-[0-9]{4}$'::text))",
            ),
            Vec::new(),
            &policy(""),
        );
        assert!(served.left_out().is_empty(), "{:?}", served.left_out());
        assert_eq!(served.schema().constraints.len(), 1);
        let refused = serve(
            with_check("people_id_format", "CHECK ((id ~ '^219-09-9999$'::text))"),
            Vec::new(),
            &policy(""),
        );
        assert_eq!(refused.schema().table_names(), vec!["public.pets"]);
        assert!(
            refused.left_out()[0].reason.contains("looks like ssn"),
            "{:?}",
            refused.left_out()
        );
    }
}
