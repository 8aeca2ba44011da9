//! Postgres arrays as text (`{224-30-8280,"dave@yahoo.com",NULL}`), masked element by element.
//!
//! A rule on an array column applies to each element (the plain rule: `tags = "scrub"` on a
//! `text[]` scrubs every tag); `keep` and `null` apply to the whole value. Elements keep their
//! places, NULL elements stay NULL, nested arrays (`{{a,b},{c,d}}`) and a dimension decoration
//! (`[0:1]={a,b}`) keep their shape. Every element is written quoted, which Postgres reads back
//! as the same element whatever it holds.

use crate::pseudonym::PseudonymKey;
use crate::rules::{Rule, RuleError};

/// Postgres allows 6 dimensions; nesting deeper than this is not an array it printed.
const MAX_DIMENSIONS: usize = 6;

/// Masks every element of the array literal `text` with `rule`.
pub fn apply_each(
    rule: &Rule,
    text: &str,
    key: Option<&PseudonymKey>,
    max_chars: Option<usize>,
) -> Result<String, RuleError> {
    let not_array = || RuleError::NotAnArray(text.chars().count());
    let mut out = String::with_capacity(text.len() + 8);
    let body = match text.find("={") {
        Some(eq) if text.starts_with('[') => {
            out.push_str(&text[..=eq]);
            &text[eq + 1..]
        }
        _ => text,
    };
    let chars: Vec<char> = body.chars().collect();
    let mut depth = 0usize;
    let mut i = 0;
    // After `{` or `,`: an element or a nested array may start.
    let mut expect_element = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => {
                depth += 1;
                if depth > MAX_DIMENSIONS {
                    return Err(not_array());
                }
                out.push('{');
                expect_element = true;
                i += 1;
            }
            '}' => {
                depth = depth.checked_sub(1).ok_or_else(not_array)?;
                out.push('}');
                expect_element = false;
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth > 0 => {
                out.push(',');
                expect_element = true;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            _ if depth > 0 && expect_element => {
                let (element, quoted, next) = read_element(&chars, i).ok_or_else(not_array)?;
                let value = if !quoted && element.eq_ignore_ascii_case("NULL") {
                    None
                } else {
                    Some(element)
                };
                match rule.apply_within(value, key, max_chars)? {
                    None => out.push_str("NULL"),
                    Some(masked) => quote_into(&masked, &mut out),
                }
                expect_element = false;
                i = next;
            }
            _ => return Err(not_array()),
        }
    }
    let rest_is_blank = chars[i..].iter().all(|c| c.is_whitespace());
    if depth != 0 || !rest_is_blank || !out.ends_with('}') {
        return Err(not_array());
    }
    Ok(out)
}

/// One element starting at `i`: its text (escapes undone), whether it was quoted, and where the
/// text after it starts.
fn read_element(chars: &[char], mut i: usize) -> Option<(String, bool, usize)> {
    let mut element = String::new();
    if chars[i] == '"' {
        i += 1;
        loop {
            match *chars.get(i)? {
                '\\' => {
                    element.push(*chars.get(i + 1)?);
                    i += 2;
                }
                '"' => return Some((element, true, i + 1)),
                c => {
                    element.push(c);
                    i += 1;
                }
            }
        }
    }
    while let Some(&c) = chars.get(i) {
        match c {
            ',' | '}' => break,
            '{' | '"' => return None,
            '\\' => {
                element.push(*chars.get(i + 1)?);
                i += 2;
            }
            c => {
                element.push(c);
                i += 1;
            }
        }
    }
    Some((element.trim_end().to_string(), false, i))
}

/// Writes `element` quoted, with `"` and `\` escaped.
fn quote_into(element: &str, out: &mut String) {
    out.push('"');
    for c in element.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn each(rule: Rule, text: &str) -> Result<String, RuleError> {
        apply_each(&rule, text, None, None)
    }

    #[test]
    fn every_element_gets_the_rule() {
        assert_eq!(
            each(
                Rule::Scrub,
                r#"{224-30-8280,"dave.smith@yahoo.com",NULL,"a \"b\" c",ok}"#
            )
            .unwrap(),
            "{\"###-##-####\",\"d***@yahoo.com\",NULL,\"a \\\"b\\\" c\",\"ok\"}"
        );
        assert_eq!(each(Rule::Email, "{}").unwrap(), "{}");
        assert_eq!(
            each(Rule::LastFour, "{{2125550143,NULL},{\"(212) 555-0143\",x}}").unwrap(),
            r#"{{"******0143",NULL},{"(***) ***-0143","x"}}"#
        );
        assert_eq!(
            each(Rule::FirstLetter, "[0:1]={Johnson,\"NULL\"}").unwrap(),
            r#"[0:1]={"J***","N***"}"#
        );
        assert_eq!(each(Rule::Null, "{a,b}").unwrap(), "{NULL,NULL}");
        let once = each(Rule::Scrub, "{\"SSN 224-30-8280\"}").unwrap();
        assert_eq!(each(Rule::Scrub, &once).unwrap(), once, "idempotent");
    }

    #[test]
    fn a_number_split_over_elements_is_scrubbed_joined() {
        let shape = crate::CellShape::of("ARRAY", None);
        let scrubbed = |text: &str| {
            Rule::Scrub
                .apply_to(Some(text.to_string()), None, shape)
                .unwrap()
                .unwrap()
        };
        assert_eq!(
            scrubbed("{224,30,8280,NULL}"),
            "{\"###\",\"##\",\"####\",NULL}"
        );
        assert_eq!(
            scrubbed("{4111,1111,1111,1111}"),
            "{\"####\",\"####\",\"####\",\"####\"}"
        );
        // Short numbers of their own stay.
        assert_eq!(scrubbed("{12,3,ok}"), r#"{"12","3","ok"}"#);
        let once = scrubbed(r#"{"x \"224\"",30,"dave@yahoo.com"}"#);
        assert_eq!(scrubbed(&once), once, "idempotent: {once}");
    }

    #[test]
    fn what_is_not_an_array_is_refused() {
        for bad in [
            "",
            "abc",
            "{a,b",
            "{a}}",
            "{a} x",
            "{\"a}",
            "{{{{{{{1}}}}}}}",
        ] {
            assert!(
                matches!(each(Rule::Scrub, bad), Err(RuleError::NotAnArray(_))),
                "{bad:?}"
            );
        }
    }
}
