//! `maskbus policy init`: a complete policy proposed from a live schema, for a reviewer to edit
//! rather than write. Pure: the shell (`crate::init`) reads the catalog and samples
//! values on the production side; this module decides a rule for each column from its name, its
//! type, its constraints and the sample's evidence counts, and writes the TOML.
//!
//! Deny by default still holds: every column gets a line. Keys and foreign keys stay `keep` (the
//! sync pages and links by them). A column the rules below cannot judge gets the safe rule
//! (`null` where NULL is allowed) and a comment saying why.

use maskbus_mask::PseudonymKind;
use maskbus_pg::{TableInfo, TableRef};
use std::collections::BTreeSet;

/// One column's proposal: the rule as written in TOML, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub column: String,
    pub rule: String,
    pub why: String,
}

/// What the shell knows of one column beyond the catalog.
#[derive(Clone, Debug, Default)]
pub struct ColumnFacts {
    /// Part of the key the sync pages by.
    pub key: bool,
    /// Part of a foreign key.
    pub foreign_key: bool,
    /// The detectors' evidence on a sample of its values, when they found a pattern.
    pub evidence: Option<String>,
}

fn words(name: &str) -> Vec<String> {
    name.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn named(name: &str, any_of: &[&str]) -> bool {
    let lower = name.to_lowercase();
    let words = words(name);
    any_of
        .iter()
        .any(|w| words.iter().any(|x| x == w) || (w.len() > 4 && lower.contains(w)))
}

const TEXT: &[&str] = &["character varying", "character", "text", "citext"];

/// The rule for one column, from its facts. `nullable`, `unique`, `data_type` and `max_length`
/// come from the catalog.
pub fn propose(column: &maskbus_pg::Column, facts: &ColumnFacts) -> Proposal {
    let text = TEXT.contains(&column.data_type.as_str());
    let json = matches!(column.data_type.as_str(), "json" | "jsonb");
    let date = column.data_type == "date";
    let fits = |width: usize| column.max_length.is_none_or(|max| max >= width);
    let name = column.name.as_str();
    let p = |rule: &str, why: &str| Proposal {
        column: column.name.clone(),
        rule: rule.to_string(),
        why: why.to_string(),
    };
    let safe = |why: &str| {
        if column.nullable {
            p("\"null\"", why)
        } else if text && fits(10) {
            p("\"redact\"", why)
        } else {
            p(
                "\"keep\"",
                &format!("{why}; NOT NULL and no rule fits its type: review by hand"),
            )
        }
    };
    if facts.key {
        return p("\"keep\"", "key: the sync pages and upserts by it");
    }
    if facts.foreign_key {
        return p(
            "\"keep\"",
            "foreign key: links must match the keys they point at",
        );
    }
    if column.generated {
        // No rule: a generated column is not synced, and the target computes it.
        return p(
            "",
            "generated: the target computes it from the masked columns; no rule needed",
        );
    }
    if named(
        name,
        &["password", "passwd", "secret", "token", "salt", "hash"],
    ) {
        return safe("a secret by its name");
    }
    if text && named(name, &["email", "mail"]) {
        return if column.unique {
            p(
                "{ pseudonym = \"email\" }",
                "an email by its name; UNIQUE, so a unique fake",
            )
        } else {
            p("\"email\"", "an email by its name")
        };
    }
    if text && named(name, &["ssn", "social", "taxid", "tin", "national"]) {
        if column.unique {
            return safe("an SSN by its name, in a UNIQUE column no masked SSN fits");
        }
        return if fits(11) {
            p("\"ssn\"", "an SSN by its name")
        } else {
            safe("an SSN by its name, in a column narrower than a masked SSN")
        };
    }
    if text && named(name, &["card", "pan", "ccnum", "creditcard"]) && !column.unique {
        if fits(19) {
            return p("\"card\"", "a card number by its name");
        }
        return p(
            "\"last_four\"",
            "a card number by its name, too narrow for the card rule",
        );
    }
    let account_number = named(name, &["iban", "routing", "aba", "accountnumber", "acctno"])
        || (named(name, &["account", "acct"]) && named(name, &["number", "no", "num", "nr"]));
    if text
        && !column.unique
        && (account_number || named(name, &["phone", "mobile", "fax", "tel", "cell"]))
    {
        return p("\"last_four\"", "a phone or account number by its name");
    }
    if named(name, &["birth", "dob", "born", "birthday", "bday"]) {
        if date {
            return p("\"year_only\"", "a birth date: the year is kept");
        }
        return safe("a birth date by its name, not of type date");
    }
    if text && !column.unique && named(name, &["first", "given", "fname", "forename"]) && fits(12) {
        return p("{ pseudonym = \"first_name\" }", "a first name by its name");
    }
    if text
        && !column.unique
        && named(
            name,
            &[
                "last", "surname", "family", "lname", "name", "fullname", "contact",
            ],
        )
        && fits(4)
    {
        return p("\"first_letter\"", "a name by its name");
    }
    if text
        && !column.unique
        && named(name, &["street", "address", "addr", "line1", "line2"])
        && fits(10)
    {
        return p("\"redact\"", "a street address by its name");
    }
    if named(name, &["ip", "ipaddr"]) || column.data_type == "inet" {
        return safe("a network address identifies a device");
    }
    if let Some(evidence) = &facts.evidence {
        if json {
            return p(
                "{ json = {} }",
                &format!("JSON whose values look like PII ({evidence}): every string leaf scrubbed; name paths to mask them precisely"),
            );
        }
        if text && !column.unique {
            return p("\"scrub\"", &format!("free text: {evidence}"));
        }
        if text && evidence.contains("look like email") && fits(PseudonymKind::Email.min_width()) {
            return p(
                "{ pseudonym = \"email\" }",
                &format!("UNIQUE, values look like emails ({evidence}): a unique fake that fits"),
            );
        }
        return safe(&format!("looks like PII ({evidence})"));
    }
    p("\"keep\"", "")
}

/// The policy file for `tables` with their proposals, in table order, and the key columns
/// proposed for tables that have no key of their own, written by `toml_edit` (keys and values
/// quoted by the serializer; every comment made one line by [`maskbus_mask::escape::one_line`]),
/// so no name of production can add a line, a key or a section. `left_out` are tables no
/// policy can name, each said in a comment.
pub fn render(
    source_name: &str,
    tables: &[(TableRef, Vec<Proposal>)],
    keys: &[(TableRef, Vec<String>)],
    left_out: &[TableRef],
) -> String {
    use maskbus_mask::escape::one_line;
    use toml_edit::{DocumentMut, Item, Table, Value};
    let mut header = format!(
        "# A masking policy proposed by `maskbus policy init` from the schema of {}.\n\
         # Review every line: deny by default means each column is named; `keep` passes it as is.\n\
         # The comments say why each rule was chosen (sample evidence is counts, never values).\n",
        one_line(source_name)
    );
    let schemas: BTreeSet<&str> = tables.iter().map(|(t, _)| t.schema.as_str()).collect();
    if schemas
        .iter()
        .any(|s| *s != maskbus_pg::model::DEFAULT_SCHEMA)
    {
        header.push_str("# Tables outside schema public are written [\"schema.table\"].\n");
    }
    let mut doc = DocumentMut::new();
    let mut first = true;
    for (table, proposals) in tables {
        let mut section = Table::new();
        let mut prefix = if first {
            format!("{header}\n")
        } else {
            "\n".to_string()
        };
        first = false;
        let width = proposals.iter().map(|p| p.column.len()).max().unwrap_or(0);
        // Comments for columns without a rule go before the next line (or the next section).
        let mut pending = String::new();
        for p in proposals {
            if p.rule.is_empty() {
                pending.push_str(&format!(
                    "# {}: {}\n",
                    one_line(&p.column),
                    one_line(&p.why)
                ));
                continue;
            }
            // A rule is TOML text made by `propose`; anything else is written as a string.
            let mut value: Value = p
                .rule
                .parse()
                .unwrap_or_else(|_| Value::from(p.rule.as_str()));
            let pad = width.saturating_sub(p.column.len()) + 1;
            if p.why.is_empty() {
                value.decor_mut().set_suffix("");
            } else {
                let shown = value.to_string().trim().len();
                let gap = (width + 30).saturating_sub(width + 3 + shown) + 2;
                value
                    .decor_mut()
                    .set_suffix(format!("{}# {}", " ".repeat(gap), one_line(&p.why)));
            }
            value.decor_mut().set_prefix(" ");
            section.insert(&p.column, Item::Value(value));
            if let Some(mut key) = section.key_mut(&p.column) {
                key.leaf_decor_mut()
                    .set_prefix(std::mem::take(&mut pending));
                key.leaf_decor_mut().set_suffix(" ".repeat(pad));
            }
        }
        section.decor_mut().set_prefix(prefix.split_off(0));
        if !pending.is_empty() {
            // No line follows in this section: the comments go right under its header.
            section
                .decor_mut()
                .set_suffix(format!("\n{}", pending.trim_end_matches('\n')));
        }
        // `[orders]` for schema public, `["sales.orders"]` for the others: one top-level key per
        // table, so no schema's name can meet a table's.
        let name = if table.schema == maskbus_pg::model::DEFAULT_SCHEMA {
            table.name.clone()
        } else {
            format!("{}.{}", table.schema, table.name)
        };
        doc.insert(&name, Item::Table(section));
    }
    if !keys.is_empty() {
        let mut section = Table::new();
        section.decor_mut().set_prefix(
            "\n# Tables without a primary key or unique index: their NOT NULL columns are unique\n\
             # today, so the sync pages by them. Add a unique constraint to keep it so.\n",
        );
        for (table, columns) in keys {
            let list: toml_edit::Array = columns.iter().map(String::as_str).collect();
            section.insert(&table.to_string(), toml_edit::value(list));
        }
        let mut maskbus = Table::new();
        maskbus.set_implicit(true);
        maskbus.insert("keys", Item::Table(section));
        doc.insert(maskbus_mask::policy::SETTINGS_SECTION, Item::Table(maskbus));
    }
    let mut trailing = String::new();
    for table in left_out {
        trailing.push_str(&format!(
            "\n# left out: {}, whose name (or a column's) is not a plain identifier a policy can hold\n",
            one_line(&table.to_string())
        ));
    }
    doc.set_trailing(trailing);
    doc.to_string()
}

/// Whether every table's name can be written in a policy: plain identifiers only, and not the
/// policy's own settings section (`[maskbus]`, `[maskbus.keys]`).
pub fn writable(table: &TableInfo) -> bool {
    let settings = maskbus_mask::policy::SETTINGS_SECTION;
    let is_default = table.table.schema == maskbus_pg::model::DEFAULT_SCHEMA;
    table.table.schema != settings
        && !(is_default && table.table.name == settings)
        && maskbus_mask::is_identifier(&table.table.schema)
        && maskbus_mask::is_identifier(&table.table.name)
        && table
            .columns
            .iter()
            .all(|c| maskbus_mask::is_identifier(&c.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_pg::Column;

    fn column(name: &str, data_type: &str) -> Column {
        Column {
            name: name.into(),
            sql_type: data_type.into(),
            data_type: data_type.into(),
            max_length: None,
            nullable: true,
            generated: false,
            identity: false,
            orderable: true,
            unique: false,
        }
    }

    fn rule(c: &Column, facts: ColumnFacts) -> String {
        propose(c, &facts).rule
    }

    #[test]
    fn rules_come_from_names_types_constraints_and_evidence() {
        let none = ColumnFacts::default;
        assert_eq!(
            rule(
                &column("id", "bigint"),
                ColumnFacts {
                    key: true,
                    ..none()
                }
            ),
            "\"keep\""
        );
        assert_eq!(
            rule(
                &column("customer_id", "bigint"),
                ColumnFacts {
                    foreign_key: true,
                    ..none()
                }
            ),
            "\"keep\""
        );
        assert_eq!(rule(&column("email", "text"), none()), "\"email\"");
        let mut unique_email = column("email", "character varying");
        unique_email.unique = true;
        assert_eq!(rule(&unique_email, none()), "{ pseudonym = \"email\" }");
        assert_eq!(rule(&column("ssn", "text"), none()), "\"ssn\"");
        assert_eq!(
            rule(&column("date_of_birth", "date"), none()),
            "\"year_only\""
        );
        assert_eq!(
            rule(&column("phone_number", "text"), none()),
            "\"last_four\""
        );
        assert_eq!(
            rule(&column("account_number", "text"), none()),
            "\"last_four\""
        );
        assert_eq!(rule(&column("account_type", "text"), none()), "\"keep\"");
        assert_eq!(
            rule(&column("first_name", "text"), none()),
            "{ pseudonym = \"first_name\" }"
        );
        assert_eq!(
            rule(&column("last_name", "text"), none()),
            "\"first_letter\""
        );
        assert_eq!(rule(&column("password_hash", "text"), none()), "\"null\"");
        assert_eq!(rule(&column("amount", "numeric"), none()), "\"keep\"");
        let evidence = Some("12 of 200 sampled values look like ssn".to_string());
        assert_eq!(
            rule(
                &column("notes", "text"),
                ColumnFacts {
                    evidence: evidence.clone(),
                    ..none()
                }
            ),
            "\"scrub\""
        );
        assert_eq!(
            rule(
                &column("payload", "jsonb"),
                ColumnFacts { evidence, ..none() }
            ),
            "{ json = {} }"
        );
        let mut narrow = column("ssn", "character");
        narrow.max_length = Some(9);
        narrow.nullable = false;
        assert_eq!(
            rule(&narrow, none()),
            "\"keep\"",
            "no rule fits: kept, with a comment to review"
        );
        assert!(propose(&narrow, &none()).why.contains("review by hand"));
    }

    #[test]
    fn the_policy_written_parses_and_names_every_column() {
        let tables = vec![
            (
                TableRef::parse("customers"),
                vec![
                    propose(
                        &column("id", "bigint"),
                        &ColumnFacts {
                            key: true,
                            ..Default::default()
                        },
                    ),
                    propose(&column("email", "text"), &ColumnFacts::default()),
                ],
            ),
            (
                TableRef::parse("sales.orders"),
                vec![propose(
                    &column("id", "uuid"),
                    &ColumnFacts {
                        key: true,
                        ..Default::default()
                    },
                )],
            ),
        ];
        let text = render(
            "shop",
            &tables,
            &[(TableRef::parse("sales.orders"), vec!["id".to_string()])],
            &[],
        );
        let policy = maskbus_mask::Policy::from_toml("init", &text).unwrap();
        assert_eq!(
            policy
                .entity("customers")
                .unwrap()
                .rule("email")
                .unwrap()
                .name(),
            "email"
        );
        assert!(policy.entity("sales.orders").is_some());
        assert!(text.contains("# an email by its name"), "{text}");
        assert_eq!(
            policy.key_columns("sales.orders"),
            Some(&["id".to_string()][..])
        );
    }
}
