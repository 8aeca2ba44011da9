//! Does a policy fit a live schema? The pure half of `maskbus policy check`.
//!
//! The caller reads the catalog and hands over [`ColumnInfo`]s; this module decides, column by
//! column, whether the policy can mask it into something the target column accepts: a rule for
//! every column, no rule for a column that does not exist, outputs of the right type and length,
//! NULL only where NULL is allowed, and no lossy rule on a UNIQUE column (masked
//! `d***@yahoo.com` would collide). [`render`] prints the verdicts as a Markdown table a reviewer
//! can paste into a review.

use crate::rules::{Rule, REDACTED};
use crate::{qualify, Policy};
use std::collections::BTreeSet;

/// One column of the live schema, as the catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    pub entity: String,
    pub column: String,
    /// `information_schema.columns.data_type`, e.g. `character varying`, `date`, `bigint`.
    pub data_type: String,
    /// `character_maximum_length`, for `varchar(n)` and `char(n)`.
    pub max_length: Option<usize>,
    pub nullable: bool,
    /// Part of a primary key or UNIQUE constraint on this column alone.
    pub unique: bool,
    /// Computed by the server (`GENERATED ALWAYS AS ... STORED`): not synced, so it needs no rule;
    /// the target computes it from the masked columns.
    pub generated: bool,
    /// For an array column, its elements' type (`character varying` of a `varchar(20)[]`): a
    /// rule other than keep and null applies to each element, and is judged against it.
    pub element_type: Option<String>,
}

impl ColumnInfo {
    fn type_label(&self) -> String {
        match self.max_length {
            Some(n) => format!("{}({n})", self.data_type),
            None => self.data_type.clone(),
        }
    }

    fn is_text(&self) -> bool {
        matches!(
            self.data_type.as_str(),
            "character varying" | "character" | "text" | "citext"
        )
    }

    fn is_date(&self) -> bool {
        self.data_type == "date" || self.data_type.starts_with("timestamp")
    }

    /// What a rule that masks elements writes into: the element, for an array.
    fn element(&self) -> Option<ColumnInfo> {
        let element = self.element_type.as_ref()?;
        Some(ColumnInfo {
            data_type: element.clone(),
            max_length: None,
            nullable: true,
            element_type: None,
            ..self.clone()
        })
    }

    /// The element type of an array column, from its `format_type` spelling
    /// (`character varying(20)[]` → `character varying`); `None` for any other column.
    pub fn element_of(data_type: &str, sql_type: &str) -> Option<String> {
        if data_type != "ARRAY" {
            return None;
        }
        let base = sql_type.trim_end_matches("[]");
        let base = match base.find('(') {
            Some(open) => &base[..open],
            None => base,
        };
        Some(base.trim().to_string())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Warning(String),
    Error(String),
}

/// The verdict on one column (or on one policy line that names no column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub entity: String,
    pub column: String,
    pub column_type: String,
    pub rule: String,
    pub verdict: Verdict,
}

/// The longest text each rule can write, when that is fixed.
fn fixed_width(rule: &Rule) -> Option<usize> {
    match rule {
        Rule::Ssn => Some("***-**-0000".len()),
        Rule::Card => Some("0000 **** **** 0000".len()),
        Rule::Redact => Some(REDACTED.len()),
        Rule::FirstLetter => Some(4),
        Rule::Constant(text) => Some(text.chars().count()),
        // Pseudonyms shorten to the column's limit, down to their least width.
        Rule::Pseudonym(kind) => Some(kind.min_width()),
        _ => None,
    }
}

fn judge(rule: &Rule, column: &ColumnInfo) -> Verdict {
    if rule.masks_elements() {
        if let Some(element) = column.element() {
            return match judge(rule, &element) {
                Verdict::Error(e) => {
                    Verdict::Error(format!("{e} (each element of the array gets the rule)"))
                }
                other => other,
            };
        }
    }
    // NULLs never collide in a UNIQUE column: only a lossy rule that writes values can.
    if column.unique && !rule.class().keeps_distinct() && *rule != Rule::Null {
        return Verdict::Error(format!(
            "UNIQUE column with {} rule {}: masked values would collide in the target; use a pseudonym that keeps values distinct (ssn, digits, alnum, email, token) or keep",
            rule.class().name(),
            rule.name()
        ));
    }
    match rule {
        Rule::Keep => Verdict::Ok,
        Rule::Json(_) if matches!(column.data_type.as_str(), "json" | "jsonb") => Verdict::Ok,
        Rule::Json(_) => Verdict::Error(format!(
            "rule json needs a json or jsonb column, not {}",
            column.type_label()
        )),
        Rule::Null if !column.nullable => Verdict::Error("rule null on a NOT NULL column".into()),
        Rule::Null => Verdict::Ok,
        Rule::YearOnly if column.is_date() => Verdict::Ok,
        Rule::YearOnly if column.is_text() && column.max_length.is_none_or(|n| n >= 10) => {
            Verdict::Warning("year_only on a text column: every value must be an ISO date, or masking refuses it".into())
        }
        Rule::YearOnly => Verdict::Error(format!("year_only needs a date or timestamp column, not {}", column.type_label())),
        // The alnum pseudonym writes letters where letters were and any digits: text only.
        Rule::Pseudonym(crate::PseudonymKind::Alnum) if !column.is_text() => Verdict::Error(format!(
            "pseudonym alnum writes letters and digits of any value, for text columns; the column is {}: use {{ pseudonym = \"digits\" }}",
            column.type_label()
        )),
        // A bijective pseudonym rewrites digits only, and keeps a number's shape and its
        // integer type's range (`crate::bijection`): its fake of a number is a number of the
        // same type, so it fits integer, numeric and uuid columns (and their keys).
        Rule::Pseudonym(kind)
            if kind.class() == crate::RuleClass::Bijective
                && matches!(
                    column.data_type.as_str(),
                    "smallint" | "integer" | "bigint" | "numeric" | "uuid"
                ) =>
        {
            Verdict::Ok
        }
        Rule::Constant(_) if !column.is_text() => {
            Verdict::Warning(format!("the constant must cast to {}; check it", column.type_label()))
        }
        _ if !column.is_text() => {
            Verdict::Error(format!("rule {} writes text; the column is {}", rule.name(), column.type_label()))
        }
        _ => match (fixed_width(rule), column.max_length) {
            (Some(width), Some(max)) if width > max => Verdict::Error(format!(
                "rule {} writes up to {width} characters; the column holds {max}",
                rule.name()
            )),
            _ => Verdict::Ok,
        },
    }
}

/// Judges every column of every entity the policy names, plus the policy's lines for columns or
/// entities the schema does not have. `columns` is the live schema of the entities in question
/// (it may hold other tables; those are reported as not covered).
pub fn check(policy: &Policy, columns: &[ColumnInfo]) -> Vec<Line> {
    let mut lines = Vec::new();
    let live_entities: BTreeSet<String> = columns.iter().map(|c| qualify(&c.entity)).collect();
    for column in columns {
        let line = |rule: String, verdict| Line {
            entity: column.entity.clone(),
            column: column.column.clone(),
            column_type: column.type_label(),
            rule,
            verdict,
        };
        if column.generated {
            let rule = policy
                .entity(&column.entity)
                .and_then(|e| e.rule(&column.column));
            lines.push(line(
                rule.map_or("-".into(), Rule::name),
                match rule {
                    None => Verdict::Ok,
                    Some(_) => Verdict::Warning("a generated column is not synced (the target computes it from the masked columns); this rule is unused".into()),
                },
            ));
            continue;
        }
        match policy.entity(&column.entity) {
            None => lines.push(line(
                "-".into(),
                Verdict::Warning("table not in the policy: it will not be synced".into()),
            )),
            Some(entity) => match entity.rule(&column.column) {
                None => lines.push(line(
                    "-".into(),
                    Verdict::Error("no rule: deny by default refuses this column, so the table cannot be synced".into()),
                )),
                Some(rule) => lines.push(line(rule.name(), judge(rule, column))),
            },
        }
    }
    // A name the schema lacks is most often a typo of one it has that the policy does not
    // name yet: those are what "did you mean" looks among first.
    let unnamed: Vec<&str> = live_entities
        .iter()
        .filter(|e| policy.entity(e).is_none())
        .map(String::as_str)
        .collect();
    for (entity_name, entity) in policy.entities() {
        if !live_entities.contains(entity_name) {
            let hint = maskbus_model::closest(entity_name, unnamed.iter().copied())
                .or_else(|| {
                    maskbus_model::closest(entity_name, live_entities.iter().map(String::as_str))
                })
                .map_or(String::new(), |t| format!(" (did you mean `{t}`?)"));
            lines.push(Line {
                entity: entity_name.to_string(),
                column: "*".into(),
                column_type: "-".into(),
                rule: "-".into(),
                verdict: Verdict::Error(format!(
                    "the policy names this table; the schema has no such table{hint}"
                )),
            });
            continue;
        }
        let of_table: Vec<&str> = columns
            .iter()
            .filter(|c| qualify(&c.entity) == entity_name)
            .map(|c| c.column.as_str())
            .collect();
        for (column_name, rule) in entity.columns() {
            if !of_table.contains(&column_name) {
                let hint = maskbus_model::closest(column_name, of_table.iter().copied())
                    .map_or(String::new(), |c| format!(" (did you mean `{c}`?)"));
                lines.push(Line {
                    entity: entity_name.to_string(),
                    column: column_name.to_string(),
                    column_type: "-".into(),
                    rule: rule.name(),
                    verdict: Verdict::Error(format!(
                        "the policy has a rule for a column the table does not have{hint}"
                    )),
                });
            }
        }
    }
    lines
}

/// Counts of (errors, warnings).
pub fn tally(lines: &[Line]) -> (usize, usize) {
    lines
        .iter()
        .fold((0, 0), |(e, w), line| match line.verdict {
            Verdict::Error(_) => (e + 1, w),
            Verdict::Warning(_) => (e, w + 1),
            Verdict::Ok => (e, w),
        })
}

/// One line per entity and column, in the order they first come: its type and rule as the
/// first line that knows them says, and its worst verdict (the texts of several verdicts as bad
/// joined, each once). Several checks judge one column (the rule's fit, the sample, the
/// constraints): a person reads one row per column.
pub fn merged(lines: &[Line]) -> Vec<Line> {
    fn rank(v: &Verdict) -> u8 {
        match v {
            Verdict::Ok => 0,
            Verdict::Warning(_) => 1,
            Verdict::Error(_) => 2,
        }
    }
    let mut out: Vec<Line> = Vec::new();
    let mut at: std::collections::HashMap<(String, &str), usize> = Default::default();
    for line in lines {
        let key = (qualify(&line.entity), line.column.as_str());
        let Some(&i) = at.get(&key) else {
            at.insert(key, out.len());
            out.push(line.clone());
            continue;
        };
        let kept = &mut out[i];
        if kept.column_type == "-" {
            kept.column_type.clone_from(&line.column_type);
        }
        if kept.rule == "-" {
            kept.rule.clone_from(&line.rule);
        }
        match rank(&line.verdict).cmp(&rank(&kept.verdict)) {
            std::cmp::Ordering::Greater => kept.verdict = line.verdict.clone(),
            std::cmp::Ordering::Equal => match (&mut kept.verdict, &line.verdict) {
                (Verdict::Error(a), Verdict::Error(b))
                | (Verdict::Warning(a), Verdict::Warning(b))
                    if !a.split("; ").any(|t| t == b) =>
                {
                    a.push_str("; ");
                    a.push_str(b);
                }
                _ => {}
            },
            std::cmp::Ordering::Less => {}
        }
    }
    out
}

/// A Markdown table of the verdicts, one row per column ([`merged`]), and a summary line that
/// counts the columns of the schema judged (not the policy's lines for what the schema lacks,
/// nor the checks of a whole key or link).
pub fn render(policy_name: &str, lines: &[Line]) -> String {
    let lines = merged(lines);
    let mut out = format!("policy check: {}\n\n", crate::escape::one_line(policy_name));
    out.push_str("| entity | column | type | rule | verdict |\n|---|---|---|---|---|\n");
    for line in &lines {
        let cell = crate::escape::markdown_cell;
        let verdict = match &line.verdict {
            Verdict::Ok => "ok".to_string(),
            Verdict::Warning(text) => format!("warning: {}", cell(text)),
            Verdict::Error(text) => format!("**ERROR**: {}", cell(text)),
        };
        let cells = [&line.entity, &line.column, &line.column_type, &line.rule].map(|t| cell(t));
        out.push_str(&format!("| {} | {verdict} |\n", cells.join(" | ")));
    }
    let (errors, warnings) = tally(&lines);
    let columns = lines.iter().filter(|l| l.column_type != "-").count();
    out.push_str(&format!(
        "\n{columns} columns checked: {errors} errors, {warnings} warnings\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(
        entity: &str,
        column: &str,
        data_type: &str,
        max_length: Option<usize>,
    ) -> ColumnInfo {
        ColumnInfo {
            entity: entity.into(),
            column: column.into(),
            data_type: data_type.into(),
            max_length,
            nullable: true,
            unique: false,
            generated: false,
            element_type: None,
        }
    }

    fn verdict_of<'a>(lines: &'a [Line], entity: &str, col: &str) -> &'a Verdict {
        &lines
            .iter()
            .find(|l| qualify(&l.entity) == qualify(entity) && l.column == col)
            .unwrap()
            .verdict
    }

    #[test]
    fn a_table_or_column_the_schema_lacks_gets_a_did_you_mean() {
        let policy = Policy::from_toml(
            "p",
            "[public.order]\nid = \"keep\"\nnotes = \"keep\"\n[public.customers]\nid = \"keep\"\nemal = \"keep\"",
        )
        .unwrap();
        let live = vec![
            column("public.orders", "id", "bigint", None),
            column("public.customers", "id", "bigint", None),
            column("public.customers", "email", "text", None),
        ];
        let lines = check(&policy, &live);
        assert!(
            matches!(verdict_of(&lines, "public.order", "*"), Verdict::Error(e) if e.ends_with("no such table (did you mean `public.orders`?)")),
            "{lines:#?}"
        );
        assert!(
            matches!(verdict_of(&lines, "public.customers", "emal"), Verdict::Error(e) if e.ends_with("(did you mean `email`?)")),
            "{lines:#?}"
        );
    }

    #[test]
    fn the_table_has_one_row_per_column_with_its_worst_verdict() {
        let line = |column: &str, ty: &str, verdict: Verdict| Line {
            entity: "public.orders".into(),
            column: column.into(),
            column_type: ty.into(),
            rule: "keep".into(),
            verdict,
        };
        let lines = vec![
            line("id", "bigint", Verdict::Ok),
            line("note", "text", Verdict::Ok),
            line(
                "note",
                "-",
                Verdict::Error("the sample reads as an email".into()),
            ),
            line("note", "-", Verdict::Warning("long".into())),
            line("(key)", "-", Verdict::Error("no key".into())),
        ];
        let merged = merged(&lines);
        assert_eq!(merged.len(), 3, "{merged:#?}");
        assert_eq!(merged[1].column, "note");
        assert_eq!(merged[1].column_type, "text");
        assert_eq!(
            merged[1].verdict,
            Verdict::Error("the sample reads as an email".into())
        );
        let text = render("p", &lines);
        assert_eq!(text.matches("| note |").count(), 1, "{text}");
        assert!(
            text.ends_with("\n2 columns checked: 2 errors, 0 warnings\n"),
            "{text}"
        );
    }

    #[test]
    fn finds_every_kind_of_misfit() {
        let policy = Policy::from_toml(
            "p",
            r#"
            [people]
            id = "keep"
            email = "email"
            ssn = "ssn"
            born = "year_only"
            age = "last_four"
            nick = "null"
            gone = "keep"
            [ghosts]
            id = "keep"
            "#,
        )
        .unwrap();
        let mut email = column("people", "email", "character varying", Some(254));
        email.unique = true;
        let mut nick = column("people", "nick", "text", None);
        nick.nullable = false;
        let live = vec![
            column("people", "id", "bigint", None),
            email,
            column("people", "ssn", "character varying", Some(9)),
            column("people", "born", "integer", None),
            column("people", "age", "integer", None),
            nick,
            column("people", "phone", "text", None),
            column("other", "id", "bigint", None),
        ];
        let lines = check(&policy, &live);
        assert_eq!(verdict_of(&lines, "people", "id"), &Verdict::Ok);
        assert!(
            matches!(verdict_of(&lines, "people", "email"), Verdict::Error(e) if e.contains("UNIQUE"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "ssn"), Verdict::Error(e) if e.contains("11 characters"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "born"), Verdict::Error(e) if e.contains("date or timestamp column"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "age"), Verdict::Error(e) if e.contains("writes text"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "nick"), Verdict::Error(e) if e.contains("NOT NULL"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "phone"), Verdict::Error(e) if e.contains("deny by default"))
        );
        assert!(
            matches!(verdict_of(&lines, "people", "gone"), Verdict::Error(e) if e.contains("does not have"))
        );
        assert!(
            matches!(verdict_of(&lines, "public.ghosts", "*"), Verdict::Error(e) if e.contains("no such table"))
        );
        assert!(matches!(
            verdict_of(&lines, "other", "id"),
            Verdict::Warning(_)
        ));
        let table = render("p", &lines);
        assert!(
            table.contains("| people | ssn | character varying(9) | ssn | **ERROR**"),
            "{table}"
        );
        assert!(table.contains("8 errors, 1 warnings"), "{table}");
    }

    #[test]
    fn a_rule_on_an_array_is_judged_against_its_elements() {
        let policy = Policy::from_toml(
            "p",
            "[u]\ntags = \"scrub\"\nids = \"scrub\"\nkept = \"keep\"\nwhen = \"year_only\"",
        )
        .unwrap();
        let array = |name: &str, sql: &str| {
            let mut c = column("u", name, "ARRAY", None);
            c.element_type = ColumnInfo::element_of("ARRAY", sql);
            c
        };
        let lines = check(
            &policy,
            &[
                array("tags", "character varying(20)[]"),
                array("ids", "integer[]"),
                array("kept", "text[]"),
                array("when", "date[]"),
            ],
        );
        assert_eq!(verdict_of(&lines, "u", "tags"), &Verdict::Ok);
        assert!(
            matches!(verdict_of(&lines, "u", "ids"), Verdict::Error(e) if e.contains("each element"))
        );
        assert_eq!(verdict_of(&lines, "u", "kept"), &Verdict::Ok);
        assert_eq!(verdict_of(&lines, "u", "when"), &Verdict::Ok);
        assert_eq!(
            ColumnInfo::element_of("ARRAY", "character varying(20)[][]").as_deref(),
            Some("character varying")
        );
        assert_eq!(ColumnInfo::element_of("text", "text"), None);
    }

    #[test]
    fn a_unique_pseudonym_email_fits_a_unique_column() {
        let policy = Policy::from_toml("p", "[u]\nemail = { pseudonym = \"email\" }").unwrap();
        let mut email = column("u", "email", "text", None);
        email.unique = true;
        assert_eq!(check(&policy, &[email.clone()])[0].verdict, Verdict::Ok);
        // A narrow column takes a shortened fake, down to the least width that stays unique.
        email.data_type = "character varying".into();
        email.max_length = Some(24);
        assert_eq!(check(&policy, &[email.clone()])[0].verdict, Verdict::Ok);
        email.max_length = Some(12);
        assert!(
            matches!(&check(&policy, &[email.clone()])[0].verdict, Verdict::Error(e) if e.contains("holds 12"))
        );
        // NULLs never collide: null on a UNIQUE column is fine.
        let nulled = Policy::from_toml("p", "[u]\nemail = \"null\"").unwrap();
        email.max_length = None;
        assert_eq!(check(&nulled, &[email])[0].verdict, Verdict::Ok);
    }
}
