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
    /// A key whose values are secrets (a session or API key used as primary key) that no
    /// bijective rule hides (not all letters and digits): a key is passed as it is, so
    /// `crate::init` leaves its table out.
    pub secret_key: bool,
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
    /// Some sampled values look like secrets ([`some_secret_shaped`]): a log's reference to a
    /// row (`django_admin_log.object_id`) that is, for some rows, a token or session key.
    pub some_secrets: bool,
    /// Every sampled value is ASCII letters and digits only, long enough that
    /// `{ pseudonym = "alnum" }` (a keyed bijection of them) hides it ([`alnum_shaped`]).
    pub alnum_shape: bool,
    /// Every sampled value mixes letters and digits (`PTC11962M`) with room enough for
    /// `{ pseudonym = "alnum" }` ([`letters_and_digits`]).
    pub letters_and_digits: bool,
    /// The name of the column's table (without its schema): secrets are known by their table
    /// (`api_keys.value`), free text by a log's (`django_admin_log.object_repr`), a third party's
    /// account id by a social login's (`social_auth_usersocialauth.uid`).
    pub table: String,
    /// For a JSON column: a rule naming each sampled leaf that holds PII or a secret
    /// ([`json_leaf_rule`]), the others scrubbed.
    pub json_rule: Option<String>,
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
    values.len() >= 3 && values.iter().filter(|v| secret_value(v)).count() * 10 >= values.len() * 8
}

/// At least one sampled value in twenty (and two at the least) looks like a secret, as
/// [`secret_shaped`] judges one: the share a column of mixed references (a log's object ids,
/// some of them API token keys) shows.
pub fn some_secret_shaped(values: &[String]) -> bool {
    let secrets = values.iter().filter(|v| secret_value(v)).count();
    secrets >= 2 && secrets * 20 >= values.len()
}

/// One value that looks like a secret: long, without spaces, of letters and digits mixed, random
/// to the eye (not a UUID, not a date); or a TOTP seed; or a hex token.
fn secret_value(v: &str) -> bool {
    let shaped = |v: &str| {
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
    shaped(v) || totp_seed(v.trim()) || hex_token(v.trim())
}

/// The fewest characters of a value `{ pseudonym = "alnum" }` is proposed for: a keyed bijection
/// of sixteen letters and digits has at least 10^16 values, far above NIST SP 800-38G's least
/// domain, and a secret this long is not guessed from its shape.
const ALNUM_MIN_LEN: usize = 16;

/// Every sampled value is ASCII letters and digits only, at least [`ALNUM_MIN_LEN`] of them: a
/// key of such values (a session key, an API token) can take `{ pseudonym = "alnum" }`, a keyed
/// bijection that keeps the sync's paging and links and passes nothing of the secret.
pub fn alnum_shaped(values: &[String]) -> bool {
    !values.is_empty()
        && values
            .iter()
            .all(|v| v.len() >= ALNUM_MIN_LEN && v.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Every sampled value is ASCII letters and digits (and `-`), with at least one of each, and
/// enough of them that a keyed bijection per class has at least NIST SP 800-38G's least domain
/// (10^6 values): a code that may spell a person (initials, a gender) but can be hidden whole.
pub fn letters_and_digits(values: &[String]) -> bool {
    !values.is_empty()
        && values.iter().all(|v| {
            let letters = v.chars().filter(|c| c.is_ascii_alphabetic()).count() as u32;
            let digits = v.chars().filter(|c| c.is_ascii_digit()).count() as u32;
            v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && letters > 0
                && digits > 0
                && 26f64.powi(letters as i32) * 10f64.powi(digits as i32) >= 1e6
        })
}

/// A TOTP seed: base32 (`A`-`Z`, `2`-`7`) of 16 or 32 characters, padding aside, with digits
/// and letters both (a word in capitals is not one).
fn totp_seed(v: &str) -> bool {
    let v = v.trim_end_matches('=');
    matches!(v.len(), 16 | 26 | 32)
        && v.chars()
            .all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c))
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().filter(|c| c.is_ascii_uppercase()).count() >= v.len() / 2
}

/// A random hex token (32 hex digits and more, digits and letters both, many distinct).
fn hex_token(v: &str) -> bool {
    let distinct: BTreeSet<char> = v.chars().collect();
    v.len() >= 32
        && v.len() <= 128
        && v.chars().all(|c| c.is_ascii_hexdigit())
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
        && distinct.len() >= 10
}

/// Tables of secrets, by a word of their name (`api_keys`, `django_session`, `authtoken_token`,
/// `otp_totp_totpdevice`, `user_credentials`).
pub fn is_secret_table(name: &str) -> bool {
    let name = Name::of(name);
    name.has(&[
        "apikey",
        "apikeys",
        "token",
        "authtoken",
        "secret",
        "session",
        "credential",
        "otp",
        "totp",
        "totpdevice",
        "mfa",
        "twofactor",
        "recoverycode",
    ]) || (name.has(&["api", "access", "signing", "private"]) && name.has(&["key"]))
}

/// Tables of logs and versions, whose free text and representations of rows name people
/// (`django_admin_log`, `reversion_version`, `audit_events`, `user_history`).
pub fn is_log_table(name: &str) -> bool {
    Name::of(name).has(&[
        "log",
        "changelog",
        "history",
        "version",
        "revision",
        "reversion",
        "audit",
        "activity",
        "event",
        "journal",
        "trail",
    ])
}

/// Tables of logins through another service (`social_auth_usersocialauth`,
/// `socialaccount_socialaccount`, `oauth_identities`).
pub fn is_social_table(name: &str) -> bool {
    Name::of(name).has(&[
        "social",
        "socialaccount",
        "socialauth",
        "oauth",
        "identity",
        "identities",
        "sso",
    ])
}

/// The most leaves of a JSON column [`json_leaf_rule`] names.
const MAX_JSON_PATHS: usize = 64;

/// A rule for a JSON column from a sample of its documents, leaf by leaf: every member path whose
/// name or values [`propose`] would mask as a column of that name (a name, an email, a TOTP seed)
/// gets that rule, every other leaf the json rule's default (scrubbed). `None` when no leaf
/// needs more than that. The rule is TOML written by `toml_edit`, never by hand.
pub fn json_leaf_rule(people: bool, table: &str, values: &[String]) -> Option<String> {
    use std::collections::BTreeMap;
    let mut leaves: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    fn walk(
        v: &serde_json::Value,
        path: &str,
        name: &str,
        out: &mut BTreeMap<String, (String, Vec<String>)>,
    ) {
        match v {
            serde_json::Value::Object(members) => {
                for (key, value) in members {
                    let step = if maskbus_mask::is_identifier(key) {
                        format!("{path}.{key}")
                    } else {
                        format!("{path}[{}]", serde_json::Value::from(key.as_str()))
                    };
                    walk(value, &step, key, out);
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    walk(item, &format!("{path}[*]"), name, out);
                }
            }
            serde_json::Value::String(s)
                if !name.is_empty() && (out.len() < MAX_JSON_PATHS || out.contains_key(path)) =>
            {
                let entry = out
                    .entry(path.to_string())
                    .or_insert_with(|| (name.to_string(), Vec::new()));
                entry.1.push(s.clone());
            }
            serde_json::Value::Number(n)
                if !name.is_empty() && (out.len() < MAX_JSON_PATHS || out.contains_key(path)) =>
            {
                let entry = out
                    .entry(path.to_string())
                    .or_insert_with(|| (name.to_string(), Vec::new()));
                entry.1.push(n.to_string());
            }
            _ => {}
        }
    }
    for value in values {
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(value) {
            walk(&doc, "$", "", &mut leaves);
        }
    }
    // The documents are of a person when the table is, when they are a social login's profile,
    // or when they hold a given or family name: their `name` is then a full name.
    let people = people
        || is_social_table(table)
        || leaves.values().any(|(name, _)| is_person_name_column(name));
    let mut paths = toml_edit::InlineTable::new();
    for (path, (name, sampled)) in &leaves {
        // A social login's profile's own id is the person's account id at that service.
        let name = if is_social_table(table) && path == "$.id" {
            "uid"
        } else {
            name.as_str()
        };
        let column = maskbus_pg::Column {
            name: name.to_string(),
            sql_type: "text".into(),
            data_type: "text".into(),
            max_length: None,
            nullable: true,
            generated: false,
            identity: false,
            orderable: true,
            unique: false,
        };
        // A leaf's values are judged as the column's would be, but for their secret shape on
        // one document only (a leaf sampled once is judged by its name and values alone).
        let secret = secret_shaped(sampled)
            || (!sampled.is_empty()
                && sampled
                    .iter()
                    .all(|v| totp_seed(v.trim()) || hex_token(v.trim())));
        let facts = ColumnFacts {
            people,
            table: table.to_string(),
            secret_shape: secret,
            evidence: crate::schema_check::sample_evidence(name, sampled),
            ..ColumnFacts::default()
        };
        let proposal = propose(&column, &facts);
        // `scrub` is what the json rule gives every other leaf already.
        if proposal.rule == "\"keep\"" || proposal.rule == "\"scrub\"" {
            continue;
        }
        let Ok(rule) = proposal.rule.parse::<toml_edit::Value>() else {
            continue;
        };
        paths.insert(path, rule);
    }
    if paths.is_empty() {
        return None;
    }
    let mut outer = toml_edit::InlineTable::new();
    outer.insert("json", toml_edit::Value::InlineTable(paths));
    let mut value = toml_edit::Value::InlineTable(outer);
    value.decor_mut().clear();
    Some(value.to_string().trim().to_string())
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
    // Every table proposed, so that `--update` tells a table the reviewer deleted (left out on
    // purpose) from one new in the source (`crate::update::left_out_of`).
    if !tables.is_empty() {
        trailing.push_str(
            "\n# The tables proposed: `policy init --update` proposes none of them again once its\n\
             # section is deleted (remove its name here to have it proposed).\n",
        );
        let mut line = String::new();
        for (table, _) in tables {
            let name = one_line(&table.to_string());
            if !line.is_empty() && line.len() + name.len() > 90 {
                trailing.push_str(&format!("# {KNOWN_MARK} {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&name);
        }
        trailing.push_str(&format!("# {KNOWN_MARK} {line}\n"));
    }
    doc.set_trailing(trailing);
    doc.to_string()
}

/// The comment that lists the tables `policy init` proposed (`# known: a, b`).
pub const KNOWN_MARK: &str = "known:";

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

    pub(super) fn column(name: &str, data_type: &str) -> Column {
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

#[cfg(test)]
mod issue_54 {
    //! What `policy init` missed on held-out schemas (issue 54, item 5), each proposed now.
    use super::tests::column;
    use super::*;

    fn in_table(table: &str) -> ColumnFacts {
        ColumnFacts {
            table: table.into(),
            ..ColumnFacts::default()
        }
    }

    fn rule(name: &str, data_type: &str, facts: ColumnFacts) -> String {
        propose(&column(name, data_type), &facts).rule
    }

    fn evidence(values: &[&str]) -> Option<String> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        crate::schema_check::sample_evidence("c", &values)
    }

    #[test]
    fn a_column_of_emails_is_an_email_column_whatever_its_name() {
        let facts = ColumnFacts {
            evidence: evidence(&[
                "ann.lee@gmail.com",
                "bo.ng@yahoo.com",
                "cy.d@outlook.com",
                "dee.moss@hotmail.com",
            ]),
            ..ColumnFacts::default()
        };
        assert_eq!(rule("contact", "text", facts), "\"email\"");
    }

    #[test]
    fn a_list_of_emails_is_scrubbed_each_email() {
        assert_eq!(
            rule("bcc_emails", "text", ColumnFacts::default()),
            "\"scrub\""
        );
        assert_eq!(
            rule("cc_emails", "text", ColumnFacts::default()),
            "\"scrub\""
        );
        assert_eq!(
            rule("recipients", "text", ColumnFacts::default()),
            "\"scrub\""
        );
        assert_eq!(
            rule("recovery_emails", "ARRAY", ColumnFacts::default()),
            "\"scrub\""
        );
        assert_eq!(rule("emails", "ARRAY", ColumnFacts::default()), "\"email\"");
        assert_eq!(rule("email", "ARRAY", ColumnFacts::default()), "\"email\"");
    }

    #[test]
    fn a_middle_initial_and_an_age_are_masked() {
        assert_eq!(
            rule("middle_initial", "character", ColumnFacts::default()),
            "\"null\""
        );
        let mut mi = column("MiddleInitial", "character");
        mi.nullable = false;
        mi.max_length = Some(1);
        assert_eq!(
            propose(&mi, &ColumnFacts::default()).rule,
            "{ constant = \"X\" }"
        );
        assert_ne!(rule("mi", "text", ColumnFacts::default()), "\"keep\"");
        // The publisher's sample names it `minit`.
        assert_eq!(
            rule("minit", "character", ColumnFacts::default()),
            "\"null\""
        );
        // A postal code kept as a number gets a fake of its digits.
        assert_eq!(
            rule("zip", "integer", ColumnFacts::default()),
            r#"{ pseudonym = "digits" }"#
        );
        assert_eq!(rule("age", "integer", ColumnFacts::default()), "\"null\"");
        let people = ColumnFacts {
            people: true,
            ..ColumnFacts::default()
        };
        assert_eq!(rule("age_years", "smallint", people), "\"null\"");
        // Not a person's age.
        assert_eq!(rule("page", "integer", ColumnFacts::default()), "\"keep\"");
        assert_eq!(
            rule("initial_balance", "text", ColumnFacts::default()),
            "\"keep\""
        );
    }

    #[test]
    fn secrets_by_their_table_and_their_shape() {
        assert_eq!(
            rule("value", "text", in_table("api_keys")),
            "{ pseudonym = \"token\" }"
        );
        assert_eq!(
            rule("key", "character varying", in_table("otp_totp_totpdevice")),
            "{ pseudonym = \"token\" }"
        );
        // The same names elsewhere are not secrets.
        assert_eq!(rule("value", "text", in_table("settings")), "\"keep\"");
        // TOTP seeds (base32 of 16 and 32) and hex tokens are secret-shaped.
        let seeds: Vec<String> = ["JBSWY3DPEHPK3PXP", "GEZDGNBVGY3TQOJQ", "MFRGGZDFMZTWQ2LK"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(secret_shaped(&seeds));
        let long: Vec<String> = ["JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXQ"; 4]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(secret_shaped(&long));
        let hex: Vec<String> = [
            "0f070d5acffabfc4d4e79302f1531f96c3ac4449",
            "a068bf9af441dcb308d2ee51295d548218757bc5",
            "9be2c1d0e4f7a8b6c3d2e1f0a9b8c7d6e5f4a3b2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(secret_shaped(&hex));
        // Words in capitals are not seeds.
        let words: Vec<String> = ["SHIPPINGSHIPPING", "RECEIVABLESTOTAL", "DEPARTMENTSTORES"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(!secret_shaped(&words));
    }

    #[test]
    fn a_key_of_initials_and_digits_in_a_table_of_people_gets_a_bijection_of_both() {
        let ids: Vec<String> = ["PTC11962M", "A-C71452F", "PMA42628M"]
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert!(letters_and_digits(&ids));
        assert!(!letters_and_digits(&["ABC".to_string()]));
        assert!(
            !letters_and_digits(&["A1".to_string()]),
            "too small to hide"
        );
        assert!(!letters_and_digits(&["12345678".to_string()]));
        let facts = ColumnFacts {
            key: true,
            people: true,
            letters_and_digits: true,
            table: "employee".into(),
            ..ColumnFacts::default()
        };
        let p = propose(&column("emp_id", "character"), &facts);
        assert_eq!(p.rule, r#"{ pseudonym = "alnum" }"#, "{p:?}");
        // Not a table of people: a product code stays a key as it is.
        let p = propose(
            &column("sku", "character"),
            &ColumnFacts {
                people: false,
                table: "products".into(),
                ..facts
            },
        );
        assert_eq!(p.rule, "\"keep\"", "{p:?}");
    }

    #[test]
    fn a_secret_key_of_letters_and_digits_gets_a_bijective_fake() {
        let facts = ColumnFacts {
            key: true,
            secret_shape: true,
            alnum_shape: true,
            table: "authtoken_token".into(),
            ..ColumnFacts::default()
        };
        let p = propose(&column("key", "character varying"), &facts);
        assert_eq!(p.rule, r#"{ pseudonym = "alnum" }"#, "{p:?}");
        assert!(!p.secret_key, "{p:?}");
        let p = propose(
            &column("session_key", "character varying"),
            &ColumnFacts {
                secret_shape: false,
                table: "django_session".into(),
                ..facts.clone()
            },
        );
        assert_eq!(p.rule, r#"{ pseudonym = "alnum" }"#, "{p:?}");
        let sessions: Vec<String> = [
            "5bw1ne6cwkfl8k61o38elejtpt3cbu0z",
            "i5l9favuoyc6kikwm6b0qqpz0rtl2cwc",
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        assert!(alnum_shaped(&sessions));
        let signed: Vec<String> = ["eyJhIjoxfQ:1tea71:R3GOpqakHOuekyERva0LjG"]
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert!(!alnum_shaped(&signed));
        assert!(!alnum_shaped(&["abc123".to_string()]));
        assert!(!alnum_shaped(&[]));
    }

    #[test]
    fn a_session_key_used_as_primary_key_marks_its_table_to_leave_out() {
        let key = |table: &str, shape: bool| ColumnFacts {
            key: true,
            secret_shape: shape,
            table: table.into(),
            ..ColumnFacts::default()
        };
        let p = propose(
            &column("session_key", "character varying"),
            &key("django_session", false),
        );
        assert!(p.secret_key, "{p:?}");
        let p = propose(
            &column("key", "character varying"),
            &key("authtoken_token", true),
        );
        assert!(p.secret_key, "{p:?}");
        let p = propose(&column("id", "bigint"), &key("django_session", false));
        assert!(!p.secret_key);
        let p = propose(&column("code", "text"), &key("countries", false));
        assert!(!p.secret_key);
    }

    #[test]
    fn legal_and_tax_numbers_by_their_names() {
        for name in [
            "tax_number",
            "vat_no",
            "VatId",
            "fiscal_code",
            "legal_id",
            "nif",
            "cpf",
        ] {
            assert_eq!(
                rule(name, "character varying", ColumnFacts::default()),
                "\"last_four\"",
                "{name}"
            );
        }
        assert_eq!(
            rule("tax_rate", "numeric", ColumnFacts::default()),
            "\"keep\""
        );
        assert_eq!(
            rule("tax_amount", "numeric", ColumnFacts::default()),
            "\"keep\""
        );
    }

    #[test]
    fn representations_and_messages_of_logs_and_versions_are_redacted() {
        let mut repr = column("object_repr", "character varying");
        repr.nullable = false;
        repr.max_length = Some(200);
        assert_eq!(
            propose(&repr, &in_table("django_admin_log")).rule,
            "\"redact\""
        );
        assert_eq!(
            rule("change_message", "text", in_table("django_admin_log")),
            "\"redact\""
        );
        assert_eq!(
            rule("serialized_data", "text", in_table("reversion_version")),
            "\"redact\""
        );
        assert_eq!(
            rule("comment", "text", in_table("reversion_revision")),
            "\"redact\""
        );
        // A product's description is not a log's.
        assert_eq!(
            rule("description", "text", in_table("products")),
            "\"keep\""
        );
    }

    #[test]
    fn a_third_party_account_id_in_a_social_login() {
        assert_eq!(
            rule(
                "uid",
                "character varying",
                in_table("social_auth_usersocialauth")
            ),
            "{ pseudonym = \"token\" }"
        );
        assert_eq!(
            rule(
                "extra_data",
                "jsonb",
                in_table("socialaccount_socialaccount")
            ),
            "{ json = {} }"
        );
        assert_eq!(rule("uid", "text", in_table("files")), "\"keep\"");
    }

    #[test]
    fn json_profiles_are_proposed_leaf_by_leaf() {
        let docs: Vec<String> = [
            r#"{"first_name": "Ann", "last_name": "Lee", "theme": "dark", "totp_seed": "JBSWY3DPEHPK3PXP"}"#,
            r#"{"first_name": "Bo", "last_name": "Ng", "theme": "light", "contact": {"email": "bo@example.org"}}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rule = json_leaf_rule(true, "profiles", &docs).expect("a rule");
        let policy = maskbus_mask::Policy::from_toml(
            "t",
            &format!("[profiles]\nid = \"keep\"\ndoc = {rule}\n"),
        )
        .unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert!(policy.entity("profiles").is_some());
        for path in [
            "$.first_name",
            "$.last_name",
            "$.totp_seed",
            "$.contact.email",
        ] {
            assert!(rule.contains(path), "{path} in {rule}");
        }
        assert!(!rule.contains("$.theme"), "{rule}");
        assert!(
            !rule.contains("Ann") && !rule.contains("JBSWY"),
            "no value in {rule}"
        );
        // Proposed for the column, in place of keep.
        let facts = ColumnFacts {
            json_rule: Some(rule.clone()),
            ..ColumnFacts::default()
        };
        assert_eq!(propose(&column("profile", "jsonb"), &facts).rule, rule);
        // Documents without such leaves need nothing more.
        let plain = vec![r#"{"theme": "dark", "size": 3}"#.to_string()];
        assert_eq!(json_leaf_rule(false, "t", &plain), None);
    }

    #[test]
    fn a_social_logins_profile_names_its_person_and_account() {
        // As social-app-django keeps a GitHub login's `extra_data`.
        let docs: Vec<String> = [
            r#"{"id": 1007919, "login": "lwilson1", "name": "Linda Wilson", "token_type": "bearer"}"#,
            r#"{"id": 1015838, "login": "joseph_cla2", "name": "Joseph Clark", "token_type": "bearer"}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rule = json_leaf_rule(false, "social_auth_usersocialauth", &docs).expect("a rule");
        for path in ["$.id", "$.name", "$.login"] {
            assert!(rule.contains(&format!("\"{path}\"")), "{path} in {rule}");
        }
        assert!(
            !rule.contains("Linda") && !rule.contains("1007919"),
            "no value in {rule}"
        );
        // Elsewhere a document's `id` and `name` are not a person's.
        let items = vec![r#"{"id": 7, "name": "Blue mug"}"#.to_string()];
        assert_eq!(json_leaf_rule(false, "orders", &items), None);
    }

    #[test]
    fn a_logs_object_id_that_is_sometimes_a_token_key_is_masked() {
        let mut values: Vec<String> = (1..=30).map(|i| i.to_string()).collect();
        values.push("4e92da791a60909bffa39c049d26f1fb5e46ef8c".into());
        values.push("9a0c3f1be2d74a55c61f0e8b7d2a4c19f3e6b820".into());
        assert!(some_secret_shaped(&values));
        assert!(!secret_shaped(&values));
        let facts = |table: &str| ColumnFacts {
            some_secrets: some_secret_shaped(&values),
            table: table.into(),
            ..ColumnFacts::default()
        };
        let p = propose(&column("object_id", "text"), &facts("django_admin_log"));
        assert_eq!(p.rule, r#"{ pseudonym = "token" }"#, "{p:?}");
        // Outside a log, a few odd values are not enough.
        let p = propose(&column("object_id", "text"), &facts("shipments"));
        assert_eq!(p.rule, r#""keep""#, "{p:?}");
        let ids: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
        assert!(!some_secret_shaped(&ids));
    }

    #[test]
    fn the_policy_lists_its_tables_so_an_update_remembers_a_deleted_one() {
        let tables = vec![
            (
                TableRef::parse("customers"),
                vec![propose(
                    &column("id", "bigint"),
                    &ColumnFacts {
                        key: true,
                        ..ColumnFacts::default()
                    },
                )],
            ),
            (
                TableRef::parse("audit_trail"),
                vec![propose(
                    &column("id", "bigint"),
                    &ColumnFacts {
                        key: true,
                        ..ColumnFacts::default()
                    },
                )],
            ),
        ];
        let text = render("shop", &tables, &[], &[]);
        maskbus_mask::Policy::from_toml("init", &text).unwrap();
        // The reviewer deletes the audit trail's section.
        let reviewed = text.replace("[audit_trail]\nid = \"keep\"", "");
        assert!(!reviewed.contains("[audit_trail]"), "{reviewed}");
        let (updated, summary) = crate::update::update("p.toml", &reviewed, &text).unwrap();
        assert!(summary.new_tables.is_empty(), "{summary:?}\n{updated}");
        assert!(!updated.contains("[audit_trail]"), "{updated}");
        // A table new in the source is still proposed, and known from then on.
        let mut more = tables.clone();
        more.push((
            TableRef::parse("orders"),
            vec![propose(
                &column("id", "bigint"),
                &ColumnFacts {
                    key: true,
                    ..ColumnFacts::default()
                },
            )],
        ));
        let fresh = render("shop", &more, &[], &[]);
        let (updated, summary) = crate::update::update("p.toml", &reviewed, &fresh).unwrap();
        assert_eq!(summary.new_tables, ["public.orders"], "{updated}");
        assert!(crate::update::left_out_of(&updated).contains("public.orders"));
        // A table init left out stays out as well.
        let left = render(
            "shop",
            &tables[..1],
            &[],
            &[(TableRef::parse("audit_trail"), "why".to_string())],
        );
        let (_, summary) = crate::update::update("p.toml", &left, &text).unwrap();
        assert!(summary.new_tables.is_empty(), "{summary:?}");
    }
}
