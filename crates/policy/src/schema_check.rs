//! Will the sync work on this schema? The table-level half of `maskbus policy check`, pure.
//!
//! `maskbus_mask::fit` judges each column against its rule; this module judges what a column
//! check cannot see: every table of the policy has a key the sync can page by, key columns pass
//! unchanged, every foreign key points at a table the policy serves (with the same rule on both
//! ends, or the link breaks), and the foreign-key cycles can be broken ([`maskbus_model::plan`]).
//! Exit 0 of `policy check` is the promise that the sync works; each problem names the table,
//! column or constraint and the fix.

use maskbus_mask::fit::{self, ColumnInfo, Line, Verdict};
use maskbus_mask::Policy;
use maskbus_model::plan;
use maskbus_pg::{ForeignKey, KeyDef, TableInfo, TableRef};
use std::collections::BTreeMap;

/// Key columns must be `keep` or carry a rule the key undoes (a bijective pseudonym: `ssn`,
/// `digits`): the consumer pages, upserts and deletes by the masked key, the producer turns it
/// back into the source's ([`maskbus_mask::Masker::reveal`]), and other tables' foreign keys
/// match it when both ends have the same rule (checked with the foreign keys). A lossy or merely
/// unique rule would merge rows or leave the producer unable to find the row a key names.
pub fn key_rules_fit(policy: &Policy, entity: &str, key: &KeyDef) -> Result<(), MaskedKey> {
    let rules = policy.entity(entity);
    for column in &key.columns {
        match rules.and_then(|r| r.rule(&column.name)) {
            Some(rule) if !rule.fits_a_key() => {
                return Err(MaskedKey {
                    entity: entity.to_string(),
                    column: column.name.clone(),
                    rule: rule.name(),
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// A key column whose rule cannot be undone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{entity}: key column {column} has rule {rule}, which does not keep keys distinct and cannot be undone; the sync pages, upserts and deletes by the key, so a key column is \"keep\" or a bijective pseudonym ({{ pseudonym = \"digits\" }}, {{ pseudonym = \"ssn\" }}), or name other key columns in [maskbus.keys]")]
pub struct MaskedKey {
    entity: String,
    column: String,
    rule: String,
}

fn line(entity: &TableRef, column: &str, rule: &str, verdict: Verdict) -> Line {
    Line {
        entity: entity.to_string(),
        column: column.to_string(),
        column_type: "-".into(),
        rule: rule.to_string(),
        verdict,
    }
}

/// The columns of `tables` as [`fit::check`] judges them.
pub fn column_infos(tables: &[TableInfo]) -> Vec<ColumnInfo> {
    tables
        .iter()
        .flat_map(|t| {
            t.columns.iter().map(|c| ColumnInfo {
                entity: t.table.to_string(),
                column: c.name.clone(),
                data_type: c.data_type.clone(),
                max_length: c.max_length,
                nullable: c.nullable,
                unique: c.unique,
                generated: c.generated,
                element_type: ColumnInfo::element_of(&c.data_type, &c.sql_type),
            })
        })
        .collect()
}

/// Every column verdict of [`fit::check`] plus the table-level checks, for the tables of the
/// policy's schemas (`tables`) and their foreign keys (`fks`).
pub fn check(policy: &Policy, tables: &[TableInfo], fks: &[ForeignKey]) -> Vec<Line> {
    let mut lines = fit::check(policy, &column_infos(tables));
    let by_name: BTreeMap<String, &TableInfo> =
        tables.iter().map(|t| (t.table.to_string(), t)).collect();
    let mut served = Vec::new();
    for (entity, _) in policy.entities() {
        let Some(info) = by_name.get(entity) else {
            continue; // fit already said the table is missing
        };
        served.push(info.table.clone());
        match info.key(policy.key_columns(entity)) {
            Err(e) => lines.push(line(
                &info.table,
                "(key)",
                "-",
                Verdict::Error(e.to_string()),
            )),
            Ok(key) => {
                if let Err(reason) = key_rules_fit(policy, entity, &key).map_err(|e| e.to_string())
                {
                    lines.push(line(&info.table, "(key)", "-", Verdict::Error(reason)));
                }
            }
        }
    }
    for fk in fks {
        let child = fk.table.to_string();
        if policy.entity(&child).is_none() {
            continue;
        }
        let parent = fk.parent.to_string();
        let Some(parent_rules) = policy.entity(&parent) else {
            lines.push(line(
                &fk.table,
                &fk.columns.join(", "),
                "-",
                Verdict::Error(format!(
                    "foreign key {} references {parent}, which the policy does not serve: the target's {parent} would be empty and every row of {child} with a link would fail; add [{parent}] to the policy",
                    fk.name
                )),
            ));
            continue;
        };
        let child_rules = policy.entity(&child);
        for (column, parent_column) in fk.columns.iter().zip(&fk.parent_columns) {
            let theirs = parent_rules.rule(parent_column);
            let ours = child_rules.and_then(|r| r.rule(column));
            if let (Some(ours), Some(theirs)) = (ours, theirs) {
                if ours != theirs {
                    lines.push(line(
                        &fk.table,
                        column,
                        &ours.name(),
                        Verdict::Error(format!(
                            "foreign key {} links {child}.{column} to {parent}.{parent_column}, whose rule is {}; both ends need the same rule or the link breaks in the target",
                            fk.name,
                            theirs.name()
                        )),
                    ));
                }
            }
        }
    }
    if let Err(e) = plan::fill_plan(&served, fks) {
        let first = served
            .first()
            .cloned()
            .unwrap_or_else(|| TableRef::parse("-"));
        lines.push(line(
            &first,
            "(foreign keys)",
            "-",
            Verdict::Error(e.to_string()),
        ));
    }
    lines
}

/// Column types whose values are text a person wrote or a system printed: the ones sampled.
/// That is every type but numbers, booleans, times, identifiers and bytes: text and JSON, arrays
/// (`{224-30-8280,dave@yahoo.com}` reads as text), enums (a label can be an SSN), composite and
/// range types, domains and extension types (`citext`) by their printed form.
pub fn is_sampled_type(data_type: &str) -> bool {
    const NOT_TEXT: &[&str] = &[
        "smallint",
        "integer",
        "bigint",
        "numeric",
        "real",
        "double precision",
        "money",
        "boolean",
        "date",
        "time without time zone",
        "time with time zone",
        "timestamp without time zone",
        "timestamp with time zone",
        "interval",
        "uuid",
        "bytea",
        "bit",
        "bit varying",
        "oid",
        "pg_lsn",
        "tsvector",
        "tsquery",
        "point",
        "line",
        "lseg",
        "box",
        "path",
        "polygon",
        "circle",
        "inet",
        "cidr",
        "macaddr",
        "macaddr8",
    ];
    !NOT_TEXT.contains(&data_type)
}

/// `keep` on a column whose sampled values look like PII is an error: `values` are up to a few
/// hundred values of `entity.column` (read on the production side, never printed). The line
/// names the column and the kinds of PII with their counts, never a value.
pub fn judge_kept_sample(entity: &str, column: &str, values: &[String]) -> Option<Line> {
    let evidence = sample_evidence(column, values)?;
    Some(Line {
        entity: entity.to_string(),
        column: column.to_string(),
        column_type: "-".into(),
        rule: "keep".into(),
        verdict: Verdict::Error(format!(
            "keep on a column whose values look like PII ({evidence}); choose a rule (scrub for free text, or ssn, card, email, last_four, a pseudonym)"
        )),
    })
}

/// A pseudonym of digits (`rule`) on a column some of whose values have no digit, which it
/// passes as they are: an error when those values (`digitless`, sampled) look like PII.
pub fn judge_digitless_sample(
    entity: &str,
    column: &str,
    rule: &str,
    digitless: &[String],
) -> Option<Line> {
    let evidence = sample_evidence(column, digitless)?;
    Some(Line {
        entity: entity.to_string(),
        column: column.to_string(),
        column_type: "-".into(),
        rule: rule.to_string(),
        verdict: Verdict::Error(format!(
            "{rule} changes digits only, and sampled values without a digit look like PII ({evidence}): they would cross as they are; choose a rule for what the column holds"
        )),
    })
}

/// What a sample of `column`'s values looks like to the audit's detectors, as counts
/// ("17 of 200 sampled values look like email"), when enough of it does to be a pattern (3
/// values, or 5%); `None` for a clean sample. Never a value.
pub fn sample_evidence(column: &str, values: &[String]) -> Option<String> {
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut flagged = 0;
    for value in values {
        let body = serde_json::json!({ column: value });
        let findings = maskbus_audit::scan(&body, maskbus_audit::Context::default());
        if !findings.is_empty() {
            flagged += 1;
        }
        let mut seen: Vec<&'static str> = findings.iter().map(|f| f.hit.detector.name()).collect();
        seen.sort();
        seen.dedup();
        for kind in seen {
            *kinds.entry(kind).or_default() += 1;
        }
    }
    // A stray match in a large sample is noise; a pattern is not.
    if flagged == 0 || flagged < 3.max(values.len() / 20) {
        return None;
    }
    Some(
        kinds
            .iter()
            .map(|(kind, n)| format!("{n} of {} sampled values look like {kind}", values.len()))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_pg::Column;

    fn column(name: &str) -> Column {
        Column {
            name: name.into(),
            sql_type: "integer".into(),
            data_type: "integer".into(),
            max_length: None,
            nullable: true,
            generated: false,
            identity: false,
            orderable: true,
            unique: false,
        }
    }

    fn table(name: &str, columns: &[&str], pk: Option<&[&str]>) -> TableInfo {
        TableInfo {
            table: TableRef::parse(name),
            columns: columns.iter().map(|c| column(c)).collect(),
            primary_key: pk.map(|k| k.iter().map(|c| c.to_string()).collect()),
            unique_keys: vec![],
            partitioned: false,
        }
    }

    fn fk(name: &str, child: &str, column: &str, parent: &str, nullable: bool) -> ForeignKey {
        ForeignKey {
            name: name.into(),
            table: TableRef::parse(child),
            columns: vec![column.into()],
            parent: TableRef::parse(parent),
            parent_columns: vec!["id".into()],
            nullable,
            deferrable: false,
        }
    }

    fn errors(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| match &l.verdict {
                Verdict::Error(e) => Some(format!("{}.{}: {e}", l.entity, l.column)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn keep_on_values_that_look_like_pii_is_named_with_counts_not_values() {
        let leaky: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "note {i}: reach me at person{i}@gmail.com or 224-30-{:04}",
                    1000 + i
                )
            })
            .collect();
        let line = judge_kept_sample("public.notes", "body", &leaky).expect("flagged");
        let Verdict::Error(text) = &line.verdict else {
            panic!()
        };
        assert!(
            text.contains("40 of 40 sampled values look like email"),
            "{text}"
        );
        assert!(text.contains("look like ssn"), "{text}");
        assert!(
            !text.contains("gmail") && !text.contains("224-30"),
            "no value shown: {text}"
        );
        let clean: Vec<String> = (0..40).map(|i| format!("order {i} shipped")).collect();
        assert!(judge_kept_sample("public.orders", "status", &clean).is_none());
        // One stray hit in a large sample is not a pattern.
        let mut mostly = clean.clone();
        mostly[0] = "224-30-8280".into();
        assert!(judge_kept_sample("public.orders", "status", &mostly).is_none());
    }

    #[test]
    fn the_policy_and_the_catalog_default_to_the_same_schema() {
        // Spelled in two crates (the pure mask crate cannot depend on pg): this keeps them one.
        assert_eq!(
            maskbus_mask::DEFAULT_SCHEMA,
            maskbus_pg::model::DEFAULT_SCHEMA
        );
        assert_eq!(
            maskbus_mask::qualify("orders"),
            TableRef::parse("orders").to_string()
        );
    }

    #[test]
    fn a_schema_the_sync_can_handle_is_green() {
        let policy = Policy::from_toml(
            "p",
            "[a]\nid = \"keep\"\nb_id = \"keep\"\n[b]\nid = \"keep\"\na_id = \"keep\"",
        )
        .unwrap();
        let tables = [
            table("a", &["id", "b_id"], Some(&["id"])),
            table("b", &["id", "a_id"], Some(&["id"])),
        ];
        let fks = [
            fk("a_b", "a", "b_id", "b", true),
            fk("b_a", "b", "a_id", "a", false),
        ];
        assert!(errors(&check(&policy, &tables, &fks)).is_empty());
        // Keys masked by a bijective pseudonym, the same at both ends of each link.
        let masked = |child_rule: &str| {
            Policy::from_toml(
                "p",
                &format!(
                    "[a]\nid = {{ pseudonym = \"digits\" }}\nb_id = \"keep\"\n[b]\nid = \"keep\"\na_id = {child_rule}"
                ),
            )
            .unwrap()
        };
        let green = masked("{ pseudonym = \"digits\" }");
        assert!(errors(&check(&green, &tables, &fks)).is_empty());
        // One end masked, the other kept: the link would break.
        let broken = errors(&check(&masked("\"keep\""), &tables, &fks));
        assert!(broken.iter().any(|e| e.contains("same rule")), "{broken:?}");
        // A unique but not bijective rule on a key: refused.
        let token = Policy::from_toml(
            "p",
            "[a]\nid = { pseudonym = \"token\" }\nb_id = \"keep\"\n[b]\nid = \"keep\"\na_id = \"keep\"",
        )
        .unwrap();
        let refused = errors(&check(&token, &tables, &fks));
        assert!(
            refused
                .iter()
                .any(|e| e.contains("(key)") && e.contains("cannot be undone")),
            "{refused:?}"
        );
    }

    #[test]
    fn each_unsupported_shape_is_named() {
        let policy = Policy::from_toml(
            "p",
            r#"
            [nokey]
            x = "keep"
            [masked_key]
            id = "redact"
            [child]
            id = "keep"
            outside_id = "keep"
            parent_id = "redact"
            [parent]
            id = "keep"
            [c1]
            id = "keep"
            c2_id = "keep"
            [c2]
            id = "keep"
            c1_id = "keep"
            "#,
        )
        .unwrap();
        let tables = [
            table("nokey", &["x"], None),
            table("masked_key", &["id"], Some(&["id"])),
            table("child", &["id", "outside_id", "parent_id"], Some(&["id"])),
            table("parent", &["id"], Some(&["id"])),
            table("outside", &["id"], Some(&["id"])),
            table("c1", &["id", "c2_id"], Some(&["id"])),
            table("c2", &["id", "c1_id"], Some(&["id"])),
        ];
        let fks = [
            fk("child_outside", "child", "outside_id", "outside", true),
            fk("child_parent", "child", "parent_id", "parent", true),
            fk("c1_c2", "c1", "c2_id", "c2", false),
            fk("c2_c1", "c2", "c1_id", "c1", false),
        ];
        let errors = errors(&check(&policy, &tables, &fks));
        let find = |needle: &str| {
            errors
                .iter()
                .find(|e| e.contains(needle))
                .unwrap_or_else(|| panic!("no error with {needle:?} in {errors:#?}"))
        };
        // A table without a key syncs whole, as a multiset: no error of its own.
        assert!(
            !errors.iter().any(|e| e.contains("public.nokey")),
            "{errors:#?}"
        );
        assert!(find("public.masked_key.(key)").contains("cannot be undone"));
        assert!(find("child_outside").contains("add [public.outside] to the policy"));
        assert!(find("child_parent").contains("same rule"));
        assert!(find("cannot be broken").contains("among public.c1, public.c2"));
        assert!(find("cannot be broken").contains("c1_c2 on public.c1, c2_c1 on public.c2"));
    }
}
