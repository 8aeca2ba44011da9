//! `maskbus policy init`: a complete policy proposed from a live schema, for a reviewer to edit
//! rather than write. Pure: the shell (`crate::init`) reads the catalog and samples
//! values on the production side; this module decides a rule for each column from its name, its
//! type, its constraints and the sample's evidence counts, and writes the TOML.
//!
//! Deny by default still holds: every column gets a line. Keys and foreign keys stay `keep` (the
//! sync pages and links by them), but for a key made of a person's number (an SSN, a card, a
//! phone), which gets a bijective pseudonym, and the foreign keys to it the same. A column the
//! heuristics cannot judge gets the safe rule (`null` where NULL is allowed) and a comment saying
//! why. The heuristics are a table, in `rules`, read top down: the first that matches decides.

use maskbus_pg::{TableInfo, TableRef};
use std::collections::BTreeSet;

mod rules;

pub use rules::propose;

#[cfg(test)]
mod characterization;

/// One column's proposal: the rule as written in TOML, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub column: String,
    pub rule: String,
    pub why: String,
    /// A foreign key column whose values are a person's number (an account, an SSN): the key
    /// it points at should get a bijective fake, and then this column the same (`crate::init`).
    pub number: bool,
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
    /// The table holds people: its name says so (`customers`, `employees`, `users`), or it has
    /// a first or last name column.
    pub people: bool,
    /// Sampled values hold the same row's name (`sina.corkery`, `.../davolio.bmp`), as counts.
    pub spells_the_person: Option<String>,
    /// Sampled values look like secrets: long, without spaces, of letters and digits mixed,
    /// random to the eye (not UUIDs, not dates).
    pub secret_shape: bool,
}

/// The words of a name in any case style, lowercased: `LastName`, `last_name`, `lastName` and
/// `LAST-NAME` are `last`, `name`; `SSNNumber` is `ssn`, `number`.
pub fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let hump = c.is_uppercase()
                && (prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                    || (prev.is_some_and(char::is_uppercase)
                        && next.is_some_and(|n| n.is_lowercase())));
            if hump && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// A name read for its vocabulary: its words, and the words run together (`lastname`).
struct Name {
    words: Vec<String>,
    joined: String,
}

impl Name {
    fn of(name: &str) -> Self {
        let words = words(name);
        let joined = words.concat();
        Name { words, joined }
    }

    /// Any of `terms` is one of the words, or (for terms of five letters and more) inside the
    /// words run together, so `lastname` and `customer_email_address` are read too.
    fn has(&self, terms: &[&str]) -> bool {
        terms.iter().any(|t| {
            self.words
                .iter()
                .any(|w| w == t || (w.len() > t.len() && w.strip_suffix('s') == Some(t)))
                || (t.len() >= 5 && self.joined.contains(t))
        })
    }
}

/// Tables of people, by a word of their name (singular or plural).
const PEOPLE_TABLES: &[&str] = &[
    "customer",
    "client",
    "employee",
    "user",
    "person",
    "people",
    "member",
    "contact",
    "patient",
    "student",
    "staff",
    "subscriber",
    "applicant",
    "candidate",
    "guest",
    "passenger",
    "driver",
    "owner",
    "tenant",
    "volunteer",
    "donor",
    "teacher",
    "doctor",
    "holder",
    "beneficiary",
    "recipient",
    "worker",
    "personnel",
    "resident",
    "citizen",
    "buyer",
    "traveler",
    "traveller",
    "attendee",
    "participant",
    "learner",
    "visitor",
    "keeper",
    "caretaker",
    "nurse",
    "officer",
    "player",
    "athlete",
    "coach",
    "therapist",
    "physician",
    "clinician",
    "pilot",
    "crew",
];

/// Whether a table's name says it holds people.
pub fn is_people_table(name: &str) -> bool {
    let name = Name::of(name);
    name.has(PEOPLE_TABLES)
}

/// Whether sampled values look like secrets: most of them long (16 characters and more), without
/// spaces, of letters and digits mixed, with many distinct characters (not UUIDs, not dates, not
/// words).
pub fn secret_shaped(values: &[String]) -> bool {
    let shaped = |v: &String| {
        let v = v.trim();
        let distinct: BTreeSet<char> = v.chars().collect();
        v.len() >= 16
            && v.len() <= 512
            && !v.contains(char::is_whitespace)
            && v.chars().any(|c| c.is_ascii_alphabetic())
            && v.chars().any(|c| c.is_ascii_digit())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-+/=.:$".contains(c))
            && !v.contains("://")
            && distinct.len() >= 12
            && !is_uuid(v)
            && !v.chars().take(4).all(|c| c.is_ascii_digit())
    };
    values.len() >= 3 && values.iter().filter(|v| shaped(v)).count() * 10 >= values.len() * 8
}

fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// How many sampled rows hold, in a column, one of the same row's names (`names` beside each
/// value, lowercased, three letters and more), as evidence when it is a pattern (a quarter of
/// the rows, and three at the least). Never a value.
pub fn spells_the_person(rows: &[(Vec<String>, String)]) -> Option<String> {
    let holds = rows
        .iter()
        .filter(|(names, value)| {
            let value = value.to_lowercase();
            names
                .iter()
                .map(|n| n.trim().to_lowercase())
                .any(|n| n.chars().count() >= 3 && value.contains(&n))
        })
        .count();
    (holds >= 3 && holds * 4 >= rows.len())
        .then(|| format!("{holds} of {} sampled rows", rows.len()))
}

/// Whether a column's name is a first or last name's (what makes its table one of people).
pub fn is_person_name_column(name: &str) -> bool {
    let name = Name::of(name);
    first_name(&name) || last_name(&name)
}

/// A first name by its name (a test of the heuristics, too).
fn first_name(n: &Name) -> bool {
    n.has(&[
        "firstname",
        "givenname",
        "forename",
        "fname",
        "prenom",
        "vorname",
    ]) || (n.has(&["first", "given"]) && n.has(&["name"]))
}

/// A last name by its name (a test of the heuristics, too).
fn last_name(n: &Name) -> bool {
    n.has(&[
        "lastname",
        "surname",
        "familyname",
        "lname",
        "maidenname",
        "nachname",
    ]) || (n.has(&["last", "family", "maiden"]) && n.has(&["name"]))
}

/// The policy file for `tables` with their proposals, in table order, and the key columns
/// proposed for tables that have no key of their own, written by `toml_edit` (keys and values
/// quoted by the serializer; every comment made one line by [`maskbus_mask::escape::one_line`]),
/// so no name of production can add a line, a key or a section. `left_out` are tables the
/// policy does not name, each said in a comment with why.
pub fn render(
    source_name: &str,
    tables: &[(TableRef, Vec<Proposal>)],
    keys: &[(TableRef, Vec<String>)],
    left_out: &[(TableRef, String)],
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
    for (table, why) in left_out {
        trailing.push_str(&format!(
            "\n# left out: {}, {}\n",
            one_line(&table.to_string()),
            one_line(why)
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
            "{ pseudonym = \"last_name\" }"
        );
        assert_eq!(
            rule(&column("password_hash", "text"), none()),
            "{ pseudonym = \"token\" }"
        );
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
            "\"last_four\"",
            "too narrow for a masked SSN: its last four digits"
        );
        let mut narrow_ip = column("ip", "character");
        narrow_ip.max_length = Some(4);
        narrow_ip.nullable = false;
        assert_eq!(
            rule(&narrow_ip, none()),
            "\"keep\"",
            "no rule fits: kept, to review"
        );
        assert!(propose(&narrow_ip, &none()).why.contains("review by hand"));
    }

    #[test]
    fn names_in_any_case_style_and_the_vocabulary_beyond_snake_case() {
        assert_eq!(words("LastName"), ["last", "name"]);
        assert_eq!(words("lastName"), ["last", "name"]);
        assert_eq!(words("LAST_NAME"), ["last", "name"]);
        assert_eq!(words("SSNNumber"), ["ssn", "number"]);
        assert_eq!(words("photo_path"), ["photo", "path"]);
        let none = ColumnFacts::default;
        let people = || ColumnFacts {
            people: true,
            ..ColumnFacts::default()
        };
        for name in [
            "LastName",
            "lastname",
            "last_name",
            "surname",
            "family_name",
        ] {
            assert_eq!(
                rule(&column(name, "character varying"), none()),
                "{ pseudonym = \"last_name\" }",
                "{name}"
            );
        }
        assert_eq!(
            rule(&column("FirstName", "text"), none()),
            "{ pseudonym = \"first_name\" }"
        );
        for (name, data_type) in [
            ("fax", "text"),
            ("mobile", "text"),
            ("tel", "text"),
            ("zip", "text"),
            ("postcode", "text"),
            ("PostalCode", "character varying"),
            ("dob", "date"),
            ("BirthDate", "timestamp without time zone"),
            ("tax_id", "text"),
            ("vat", "text"),
            ("iban", "text"),
            ("passport", "text"),
            ("license", "text"),
            ("ip", "inet"),
            ("ip_address", "text"),
            ("mac", "macaddr"),
            ("lat", "double precision"),
            ("lon", "numeric"),
            ("api_key", "text"),
            ("hmac_key", "text"),
            ("token", "text"),
            ("salt", "text"),
            ("device_fingerprint", "text"),
            ("contact_name", "text"),
            ("ShipName", "text"),
            ("Address", "text"),
        ] {
            assert_ne!(rule(&column(name, data_type), none()), "\"keep\"", "{name}");
        }
        // A UNIQUE secret gets a unique fake, never keep.
        let mut token = column("token", "text");
        token.unique = true;
        token.nullable = false;
        assert_eq!(rule(&token, none()), "{ pseudonym = \"token\" }");
        let mut username = column("username", "text");
        username.unique = true;
        assert_eq!(rule(&username, none()), "{ pseudonym = \"token\" }");
        // People's things: a photo, the path of one, a biography, the company.
        assert_eq!(rule(&column("Photo", "bytea"), people()), "\"null\"");
        assert_ne!(rule(&column("photo_path", "text"), people()), "\"keep\"");
        assert_eq!(rule(&column("notes", "text"), people()), "\"redact\"");
        assert_eq!(
            rule(&column("Company", "text"), people()),
            "\"first_letter\""
        );
        // Names of things stay: genres, products, categories, and what they describe.
        for (name, facts) in [
            ("Name", none()),
            ("product_name", none()),
            ("category_name", none()),
            ("description", none()),
            ("picture", none()),
            ("company_name", none()),
            ("title", people()),
            ("city", people()),
            ("country", people()),
        ] {
            let data_type = if name == "picture" { "bytea" } else { "text" };
            assert_eq!(rule(&column(name, data_type), facts), "\"keep\"", "{name}");
        }
        // A person's `name` in a table of people.
        assert_eq!(rule(&column("name", "text"), people()), "\"first_letter\"");
        // Values that spell the person, by evidence.
        assert_eq!(
            rule(
                &column("alias", "text"),
                ColumnFacts {
                    spells_the_person: Some("9 of 10 sampled rows".into()),
                    ..none()
                }
            ),
            "\"redact\""
        );
        assert!(secret_shaped(&vec![
            "sk_live_51H8xYzAbCdEf0123456789"
                .to_string();
            5
        ]));
        assert!(!secret_shaped(&vec![
            "0b5c3e3e-5f0e-4c1b-9a53-2b1a9d6c1e77"
                .to_string();
            5
        ]));
        assert!(!secret_shaped(&vec![
            "20240101120000_create_users"
                .to_string();
            5
        ]));
        assert_eq!(
            spells_the_person(&[
                (vec!["Sina".into(), "Corkery".into()], "sina.corkery".into()),
                (vec!["Ann".into(), "Lee".into()], "ann_lee".into()),
                (
                    vec!["Bo".into(), "Davolio".into()],
                    "http://x/davolio.bmp".into()
                ),
            ]),
            Some("3 of 3 sampled rows".into())
        );
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
