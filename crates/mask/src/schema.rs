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
//!   named, with the detector that fired (never the value).
//!
//! What was left out is listed ([`LeftOut`]), so the consumer can fail those tables closed by
//! name.

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
        blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
    }
}

/// The detector that fires on `text` under a field called `field`, if any.
fn looks_like_pii(field: &str, text: &str) -> Option<&'static str> {
    let body = serde_json::json!({ field: text });
    maskbus_audit::scan(&body, maskbus_audit::Context::default())
        .first()
        .map(|f| f.hit.detector.name())
}

fn type_name(t: &TypeDef) -> String {
    format!("{}.{}", t.schema, t.name)
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
    let mut left_out: Vec<LeftOut> = Vec::new();
    let refuse = |entity: &TableRef, reason: String, out: &mut Vec<(TableRef, String)>| {
        out.push((entity.clone(), reason));
    };
    let mut refused = refused;
    // Tables and columns without rules.
    // A partition is synced through its root, by the root's rules.
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
                if let Some(detector) = expression.and_then(|e| looks_like_pii(&column.name, e)) {
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
            if let Some(detector) = looks_like_pii("bound", bound) {
                refuse(
                    &table.table,
                    format!("its partition bound looks like {detector}"),
                    &mut refused,
                );
            }
        }
    }
    for constraint in &source.constraints {
        if let Some(detector) = looks_like_pii(&constraint.name, &constraint.definition) {
            refuse(
                &constraint.table,
                format!(
                    "constraint {} looks like {detector}",
                    crate::shorten(&constraint.name)
                ),
                &mut refused,
            );
        }
    }
    for index in &source.indexes {
        if let Some(detector) = looks_like_pii(&index.name, &index.definition) {
            refuse(
                &index.table,
                format!(
                    "index {} looks like {detector}",
                    crate::shorten(&index.name)
                ),
                &mut refused,
            );
        }
    }
    // Types whose labels or rules look like personal data: every table using them stays out.
    let mut bad_types: Vec<(TypeDef, String)> = Vec::new();
    for t in &source.types {
        let detector = match &t.kind {
            TypeKind::Enum { labels } => labels.iter().find_map(|l| looks_like_pii(&t.name, l)),
            TypeKind::Domain {
                default, checks, ..
            } => default
                .iter()
                .chain(checks.iter().map(|(_, c)| c))
                .find_map(|e| looks_like_pii(&t.name, e)),
            TypeKind::Composite { .. } | TypeKind::Range { .. } => None,
        };
        if let Some(detector) = detector {
            bad_types.push((
                t.clone(),
                format!(
                    "type {} (which it uses) has a label or rule that looks like {detector}",
                    crate::shorten(&type_name(t))
                ),
            ));
        }
    }
    for table in &source.tables {
        for (t, reason) in &bad_types {
            if table.columns.iter().any(|c| uses_type(&c.sql_type, t)) {
                refuse(&table.table, reason.clone(), &mut refused);
            }
        }
    }
    let bad: BTreeSet<String> = bad_types.iter().map(|(t, _)| type_name(t)).collect();
    source.types.retain(|t| !bad.contains(&type_name(t)));
    // Comments: left out unless kept; a kept one is read like a value.
    if policy.schema_rules().keeps_comments() {
        source.comments.retain(|c| {
            let field = c.column.as_deref().unwrap_or("comment");
            match looks_like_pii(field, &c.text) {
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
}
