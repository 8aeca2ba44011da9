//! Rules inside JSON documents: `{ json = { "$.contact.email" = "email" } }`.
//!
//! A json or jsonb column holds documents whose shape the schema does not fix, so deny by default
//! applies inside them too, to keys as well as values:
//! - a string leaf at a path the rule names gets that path's rule; every other string leaf is
//!   scrubbed (or nulled, with `others = "null"`);
//! - a number at a named path gets its rule (`keep` keeps its text exactly); every other number
//!   whose value has six or more digits (`4111111111111111`, `2.2430828e8`) becomes `#`s (or
//!   null), and smaller numbers pass with their text unchanged, never through a float;
//! - every object key that no named path goes through is scrubbed like a string leaf (a member
//!   whose key holds an SSN or an email gets the key `###-##-####`), or, with `others = "null"`,
//!   the member is dropped whole;
//! - booleans and nulls pass.
//!
//! Paths are sequences of steps, compared step by step, never joined into strings: `$` is the
//! root, `.name` an object member (letters, digits, `_`, `-`), `["any name"]` a member whose name
//! is anything else (`$["meta.source"]`, with `\"` and `\\` inside), and `[*]` any array element:
//! `$.phones[*].number`. A member named `"meta.source"` is never the path `$.meta.source`.
//!
//! Documents are read and written as events ([`json_event_parser`]), so members keep their order
//! and duplicates (a `json` column's text stays as written, less its whitespace), numbers keep
//! their text, and nesting costs no stack: a document may nest [`DEPTH_BUDGET`] deep; deeper is
//! refused with that budget named.

use crate::pseudonym::PseudonymKey;
use crate::rules::{scrub, Rule, RuleError};
use json_event_parser::{JsonEvent, SliceJsonParser, WriterJsonSerializer};
use std::borrow::Cow;

/// What happens to the leaves and keys no path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Others {
    /// Leaves and keys scrubbed.
    Scrub,
    /// Leaves nulled; a member whose key scrub would change dropped.
    Null,
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// An object member by its exact name.
    Member(String),
    /// Any element of an array.
    Element,
}

/// A path inside a document, as a policy writes it (`$.phones[*].number`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JsonPath(Vec<Step>);

impl JsonPath {
    /// Reads a path; the error says what is wrong with it, and never repeats a long path.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "JSON path {:?} {why} (paths look like \"$.contact.email\", \"$.phones[*]\", \"$[\\\"meta.source\\\"]\")",
                crate::shorten(text)
            )
        };
        let mut rest = text
            .strip_prefix('$')
            .ok_or_else(|| bad("must start with $"))?;
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("[*]") {
                steps.push(Step::Element);
                rest = after;
            } else if let Some(after) = rest.strip_prefix("[\"") {
                let mut name = String::new();
                let mut chars = after.char_indices();
                let end = loop {
                    match chars.next() {
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c @ ('"' | '\\'))) => name.push(c),
                            _ => return Err(bad("has an escape other than \\\" or \\\\")),
                        },
                        Some((i, '"')) => break i,
                        Some((_, c)) if c.is_control() => {
                            return Err(bad("has a control character"))
                        }
                        Some((_, c)) => name.push(c),
                        None => return Err(bad("has an unclosed [\"")),
                    }
                };
                rest = after[end + 1..]
                    .strip_prefix(']')
                    .ok_or_else(|| bad("has a quoted name not followed by ]"))?;
                steps.push(Step::Member(name));
            } else if let Some(after) = rest.strip_prefix('.') {
                let end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(after.len());
                if end == 0 {
                    return Err(bad(
                        "has an empty name after a dot; quote other names with [\"...\"]",
                    ));
                }
                steps.push(Step::Member(after[..end].to_string()));
                rest = &after[end..];
            } else {
                return Err(bad("has a step that is not .name, [\"name\"] or [*]"));
            }
        }
        Ok(JsonPath(steps))
    }

    /// The steps.
    pub fn steps(&self) -> &[Step] {
        &self.0
    }
}

impl std::fmt::Display for JsonPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("$")?;
        for step in &self.0 {
            match step {
                Step::Element => f.write_str("[*]")?,
                Step::Member(name)
                    if !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '-') =>
                {
                    write!(f, ".{name}")?
                }
                Step::Member(name) => {
                    f.write_str("[\"")?;
                    for c in name.chars() {
                        if matches!(c, '"' | '\\') {
                            f.write_str("\\")?;
                        }
                        write!(f, "{c}")?;
                    }
                    f.write_str("\"]")?
                }
            }
        }
        Ok(())
    }
}

/// The rules of one JSON column, by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonRule {
    paths: Vec<(JsonPath, Rule)>,
    others: Others,
}

/// How deep a document may nest (objects and arrays inside each other). Deeper documents are
/// refused with this number in the error, never cut; a document this deep costs a few hundred
/// kilobytes to mask, not stack.
pub const DEPTH_BUDGET: usize = 10_000;

/// The fewest digits a number's value needs before it is treated like a run of digits in free
/// text.
const NUMBER_DIGITS: usize = 6;

/// What the walk is inside of.
enum Container {
    Object,
    Array,
}

impl JsonRule {
    /// A rule of these paths, each once (a later duplicate is refused by the policy reader).
    pub fn new(paths: Vec<(JsonPath, Rule)>, others: Others) -> Self {
        JsonRule { paths, others }
    }

    /// The paths and their rules.
    pub fn paths(&self) -> &[(JsonPath, Rule)] {
        &self.paths
    }

    pub fn others(&self) -> Others {
        self.others
    }

    fn rule_at(&self, path: &[Step]) -> Option<&Rule> {
        self.paths
            .iter()
            .find(|(p, _)| p.steps() == path)
            .map(|(_, rule)| rule)
    }

    /// Some named path goes through `path` (so its last key was named by the policy).
    fn is_named_prefix(&self, path: &[Step]) -> bool {
        self.paths.iter().any(|(p, _)| p.steps().starts_with(path))
    }

    /// Masks one document given as JSON text; returns JSON text.
    pub fn apply(&self, text: &str, key: Option<&PseudonymKey>) -> Result<String, RuleError> {
        let not_json = || RuleError::NotJson(text.chars().count());
        let mut parser = SliceJsonParser::new(text.as_bytes());
        let mut out = WriterJsonSerializer::new(Vec::with_capacity(text.len()));
        let mut path: Vec<Step> = Vec::new();
        let mut containers: Vec<Container> = Vec::new();
        loop {
            let event = parser.parse_next().map_err(|_| not_json())?;
            let emitted: JsonEvent<'_> = match event {
                JsonEvent::Eof => break,
                JsonEvent::StartObject | JsonEvent::StartArray => {
                    if containers.len() >= DEPTH_BUDGET {
                        return Err(RuleError::TooDeep(DEPTH_BUDGET));
                    }
                    if event == JsonEvent::StartArray {
                        containers.push(Container::Array);
                        path.push(Step::Element);
                    } else {
                        containers.push(Container::Object);
                    }
                    event
                }
                JsonEvent::EndObject | JsonEvent::EndArray => {
                    if matches!(containers.pop(), Some(Container::Array)) {
                        path.pop();
                    }
                    out.serialize_event(event).map_err(|_| not_json())?;
                    self.value_done(&containers, &mut path);
                    continue;
                }
                JsonEvent::ObjectKey(name) => {
                    path.push(Step::Member(name.to_string()));
                    if self.is_named_prefix(&path) {
                        JsonEvent::ObjectKey(name)
                    } else {
                        let scrubbed = scrub(&name);
                        match (scrubbed == *name, self.others) {
                            (true, _) => JsonEvent::ObjectKey(name),
                            (false, Others::Scrub) => JsonEvent::ObjectKey(Cow::Owned(scrubbed)),
                            (false, Others::Null) => {
                                // Drop the member: pass over its value.
                                skip_value(&mut parser, containers.len())
                                    .ok_or_else(not_json)??;
                                path.pop();
                                continue;
                            }
                        }
                    }
                }
                JsonEvent::String(value) => {
                    let masked = match self.rule_at(&path) {
                        Some(rule) => rule.apply(Some(value.into_owned()), key)?,
                        None => match self.others {
                            Others::Scrub => Some(scrub(&value)),
                            Others::Null => None,
                        },
                    };
                    let event = masked.map_or(JsonEvent::Null, |m| JsonEvent::String(m.into()));
                    out.serialize_event(event).map_err(|_| not_json())?;
                    self.value_done(&containers, &mut path);
                    continue;
                }
                JsonEvent::Number(number) => {
                    let event = match self.rule_at(&path) {
                        Some(Rule::Keep) => JsonEvent::Number(number),
                        Some(rule) => rule
                            .apply(Some(number.into_owned()), key)?
                            .map_or(JsonEvent::Null, |m| JsonEvent::String(m.into())),
                        None if value_digits(&number) < NUMBER_DIGITS => JsonEvent::Number(number),
                        None => match self.others {
                            Others::Scrub => JsonEvent::String(hashes(&number).into()),
                            Others::Null => JsonEvent::Null,
                        },
                    };
                    out.serialize_event(event).map_err(|_| not_json())?;
                    self.value_done(&containers, &mut path);
                    continue;
                }
                JsonEvent::Boolean(_) | JsonEvent::Null => {
                    out.serialize_event(event).map_err(|_| not_json())?;
                    self.value_done(&containers, &mut path);
                    continue;
                }
            };
            out.serialize_event(emitted).map_err(|_| not_json())?;
        }
        let bytes = out.finish().map_err(|_| not_json())?;
        String::from_utf8(bytes).map_err(|_| not_json())
    }

    /// A value ended: if it was an object member's, its step is done.
    fn value_done(&self, containers: &[Container], path: &mut Vec<Step>) {
        if matches!(containers.last(), Some(Container::Object)) {
            path.pop();
        }
    }
}

/// Passes over the value of a dropped member (a scalar, or a container and all inside it) that
/// starts `depth` containers deep. `None` when the text ends or breaks inside it.
fn skip_value(parser: &mut SliceJsonParser<'_>, depth: usize) -> Option<Result<(), RuleError>> {
    let mut open = 0usize;
    loop {
        match parser.parse_next().ok()? {
            JsonEvent::StartObject | JsonEvent::StartArray => {
                open += 1;
                if depth + open > DEPTH_BUDGET {
                    return Some(Err(RuleError::TooDeep(DEPTH_BUDGET)));
                }
            }
            JsonEvent::EndObject | JsonEvent::EndArray => open = open.checked_sub(1)?,
            JsonEvent::Eof => return None,
            _ => {}
        }
        if open == 0 {
            return Some(Ok(()));
        }
    }
}

/// How many digits the value of a JSON number has before its point (`2.2430828e8` is
/// `224308280`, nine), or the digits its mantissa is written with, whichever is more.
fn value_digits(number: &str) -> usize {
    let (mantissa, exponent) = match number.find(['e', 'E']) {
        Some(e) => (&number[..e], number[e + 1..].parse::<i64>().unwrap_or(0)),
        None => (number, 0),
    };
    let written = mantissa.bytes().filter(u8::is_ascii_digit).count();
    let mantissa = mantissa.trim_start_matches('-');
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let leading_zeros = digits.bytes().take_while(|b| *b == b'0').count();
    if leading_zeros == digits.len() {
        return written;
    }
    // Where the point stands in the significant digits.
    let point = whole.len() as i64 - leading_zeros as i64 + exponent;
    written.max(point.clamp(0, 1 << 20) as usize)
}

/// A number no path names, too long to pass: `#` for each digit of its value.
fn hashes(number: &str) -> String {
    "#".repeat(value_digits(number).min(64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(paths: &[(&str, Rule)], others: Others) -> JsonRule {
        JsonRule::new(
            paths
                .iter()
                .map(|(p, r)| (JsonPath::parse(p).unwrap(), r.clone()))
                .collect(),
            others,
        )
    }

    #[test]
    fn named_paths_get_their_rule_and_every_other_leaf_is_scrubbed() {
        let r = rule(
            &[("$.contact.email", Rule::Email), ("$.tier", Rule::Keep)],
            Others::Scrub,
        );
        let masked = r
            .apply(
                "{\"contact\": {\"email\": \"dave@yahoo.com\", \"phone\": \"(212) 555-0143\"},
                    \"tier\": \"gold\", \"notes\": [\"SSN 224-30-8280\", \"ok\"], \"card\": 4111111111111111,
                    \"count\": 12, \"vip\": true, \"gone\": null}",
                None,
            )
            .unwrap();
        assert_eq!(
            masked,
            "{\"contact\":{\"email\":\"d***@yahoo.com\",\"phone\":\"(###) ###-####\"},\"tier\":\"gold\",\"notes\":[\"SSN ###-##-####\",\"ok\"],\"card\":\"################\",\"count\":12,\"vip\":true,\"gone\":null}"
        );
        assert_eq!(r.apply(&masked, None).unwrap(), masked, "idempotent");
    }

    #[test]
    fn others_null_and_arrays_by_star() {
        let r = rule(&[("$.phones[*]", Rule::LastFour)], Others::Null);
        let masked = r
            .apply("{\"phones\": [\"212-555-0143\"], \"name\": \"Dave\"}", None)
            .unwrap();
        assert_eq!(masked, "{\"phones\":[\"***-***-0143\"],\"name\":null}");
        assert!(matches!(
            r.apply("not json", None),
            Err(RuleError::NotJson(_))
        ));
    }

    #[test]
    fn keys_are_masked_like_values() {
        let r = rule(&[("$.tier", Rule::Keep)], Others::Scrub);
        assert_eq!(
            r.apply(
                "{\"224-30-8280\": true, \"dave.smith@yahoo.com\": \"primary\", \"tier\": 1}",
                None
            )
            .unwrap(),
            "{\"###-##-####\":true,\"d***@yahoo.com\":\"primary\",\"tier\":1}"
        );
        let r = rule(&[("$.tier", Rule::Keep)], Others::Null);
        assert_eq!(
            r.apply(
                "{\"224-30-8280\": {\"a\": [1, {\"b\": 2}]}, \"ok\": \"x\", \"tier\": \"gold\"}",
                None
            )
            .unwrap(),
            "{\"ok\":null,\"tier\":\"gold\"}"
        );
    }

    #[test]
    fn a_member_named_like_a_path_is_not_that_path() {
        let r = rule(
            &[("$.meta.source", Rule::Keep), ("$.phones[*]", Rule::Keep)],
            Others::Scrub,
        );
        assert_eq!(
            r.apply(
                "{\"meta.source\": \"SSN 224-30-8280\", \"phones[*]\": \"SSN 224-30-8280\", \"meta\": {\"source\": \"crm\"}}",
                None
            )
            .unwrap(),
            "{\"meta.source\":\"SSN ###-##-####\",\"phones[*]\":\"SSN ###-##-####\",\"meta\":{\"source\":\"crm\"}}"
        );
        let quoted = rule(&[("$[\"meta.source\"]", Rule::Keep)], Others::Scrub);
        assert_eq!(
            quoted
                .apply("{\"meta.source\": \"crm 224308280\"}", None)
                .unwrap(),
            "{\"meta.source\":\"crm 224308280\"}"
        );
        for path in [
            "$.meta.source",
            "$[\"meta.source\"]",
            "$.a[*].b",
            "$[\"q\\\"x\"]",
        ] {
            assert_eq!(JsonPath::parse(path).unwrap().to_string(), path);
        }
        for bad in ["meta", "$.", "$..a", "$[\"a", "$[0]", "$.a b"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_keep_their_text_and_order_and_duplicates_stay() {
        let r = rule(&[("$.big", Rule::Keep)], Others::Scrub);
        assert_eq!(
            r.apply(
                "{\"z\": 1.50, \"big\": 12345678901234567890123, \"a\": 1e3, \"a\": 2, \"f\": 2.2430828e8}",
                None
            )
            .unwrap(),
            "{\"z\":1.50,\"big\":12345678901234567890123,\"a\":1e3,\"a\":2,\"f\":\"#########\"}"
        );
        assert_eq!(value_digits("2.2430828e8"), 9);
        assert_eq!(value_digits("1e8"), 9);
        assert_eq!(value_digits("0.000012"), 7);
        assert_eq!(value_digits("-12.5"), 3);
        assert_eq!(value_digits("1.5e-3"), 2);
    }

    #[test]
    fn deep_documents_within_the_budget_and_a_clear_refusal_past_it() {
        let r = rule(&[], Others::Scrub);
        let deep = format!("{}\"224-30-8280\"{}", "[".repeat(5_000), "]".repeat(5_000));
        let masked = r.apply(&deep, None).unwrap();
        assert_eq!(
            masked,
            format!("{}\"###-##-####\"{}", "[".repeat(5_000), "]".repeat(5_000))
        );
        let deeper = format!(
            "{}1{}",
            "[".repeat(DEPTH_BUDGET + 1),
            "]".repeat(DEPTH_BUDGET + 1)
        );
        assert_eq!(
            r.apply(&deeper, None),
            Err(RuleError::TooDeep(DEPTH_BUDGET))
        );
    }
}
