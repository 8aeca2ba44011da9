//! Message bodies: JSON text, serialized once by the sender and read once by the receiver,
//! straight into its own types (no document tree in between). The mailbox checks, before any
//! handler sees a body, that it is JSON the receivers can read.

/// How deep a body may nest: the receivers' parser (serde_json) stops at 128 levels, and a body
/// they cannot read is dead-lettered here, before any of them sees it.
pub const MAX_NESTING: usize = 128;

/// The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
/// count). Reading a body as raw text does not check depth, so this does.
pub fn nesting_depth(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                // Jump through the string: to its closing quote, past every escaped character.
                at += 1;
                loop {
                    let rest = bytes.get(at..).unwrap_or_default();
                    match memchr::memchr2(b'"', b'\\', rest) {
                        Some(found) if bytes[at + found] == b'\\' => at += found + 2,
                        Some(found) => {
                            at += found;
                            break;
                        }
                        None => return deepest,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    deepest
}

/// A message body: JSON text, serialized once by the sender and parsed once by the receiver.
pub type Body = Box<serde_json::value::RawValue>;

/// A value as a [`Body`].
pub fn body_of(value: &impl serde::Serialize) -> Result<Body, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

#[cfg(test)]
mod tests {
    use super::nesting_depth;

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        assert_eq!(nesting_depth("1"), 0);
        assert_eq!(nesting_depth(r#"{"a": [1, {"b": []}]}"#), 4);
        assert_eq!(nesting_depth(r#"{"a": "[[[[{{{{\"]]]"}"#), 1);
        assert_eq!(nesting_depth(r#"["\\", [[]]]"#), 3);
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(nesting_depth(&deep), 200);
    }

    #[test]
    fn text_cut_inside_a_string_or_an_escape_ends_the_count() {
        assert_eq!(nesting_depth(r#"[["abc"#), 2);
        assert_eq!(nesting_depth(r#"[["abc"#), 2);
        assert_eq!(nesting_depth(r#"[[""#), 2);
        assert_eq!(nesting_depth(r#"[[""]]"#), 2);
    }
}
