//! The printer's atoms: literals, identifiers, numbers, operators. Everything printed here is
//! built from values the parser produced, re-quoted, never copied from the input text.

use crate::refusal::{shown, shown_qualified, Refusal};
use maskbus_model::quote_ident;
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// A string constant: `'it''s'`, or `E'a\\b'` when it holds a backslash (so it reads the same
/// whatever `standard_conforming_strings` the session has).
pub(crate) fn literal(text: &str) -> String {
    if text.contains('\\') {
        format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// A number the lexer read as a `Float` (too big for an integer, or with a point or exponent):
/// digits and the few other characters a numeric literal has; parenthesised when negative.
pub(crate) fn numeric(text: &str) -> Result<String, Refusal> {
    let ok = !text.is_empty()
        && text.len() <= 1000
        && text.chars().all(|c| {
            c.is_ascii_hexdigit() || matches!(c, '.' | '_' | '+' | '-' | 'x' | 'X' | 'o' | 'O')
        })
        && !text.contains("--")
        && text
            .trim_start_matches('-')
            .starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if !ok {
        return Err(Refusal::new("holds a number the consumer does not read"));
    }
    Ok(if text.starts_with('-') {
        format!("({text})")
    } else {
        text.to_string()
    })
}

/// An integer, parenthesised when negative (`(-1)`), so no `-` ever meets another.
pub(crate) fn integer(value: i32) -> String {
    if value < 0 {
        format!("({value})")
    } else {
        value.to_string()
    }
}

/// A bit-string constant (`b0101` or `x1F` as the parser keeps it) as `B'0101'` / `X'1F'`.
pub(crate) fn bit_string(text: &str) -> Result<String, Refusal> {
    let bad = || Refusal::new("holds a bit string the consumer does not read");
    let mut chars = text.chars();
    let kind = chars.next().ok_or_else(bad)?;
    let digits = chars.as_str();
    match kind {
        'b' | 'B' if digits.chars().all(|c| c == '0' || c == '1') => Ok(format!("B'{digits}'")),
        'x' | 'X' if digits.chars().all(|c| c.is_ascii_hexdigit()) => Ok(format!("X'{digits}'")),
        _ => Err(bad()),
    }
}

/// The strings of a name list (`[schema, name]`); anything but a `String` node is refused.
pub(crate) fn strings(nodes: &[pb::Node], what: &str) -> Result<Vec<String>, Refusal> {
    nodes
        .iter()
        .map(|n| match &n.node {
            Some(N::String(s)) if !s.sval.is_empty() => Ok(s.sval.clone()),
            _ => Err(Refusal::new(format!(
                "holds {what} that is not a plain name"
            ))),
        })
        .collect()
}

/// A name, quoted part by part: `"public"."order_status"`. One or two parts.
pub(crate) fn qualified(parts: &[String], what: &str) -> Result<String, Refusal> {
    match parts {
        [_] | [_, _] => Ok(parts
            .iter()
            .map(|p| quote_ident(p))
            .collect::<Vec<_>>()
            .join(".")),
        _ => Err(Refusal::new(format!(
            "names {what} {}, which has more parts than schema and name",
            shown_qualified(parts)
        ))),
    }
}

/// A list of column names, each quoted: `"a", "b"`. Each must be one of `scope`'s columns.
pub(crate) fn columns(
    nodes: &[pb::Node],
    scope: &crate::Scope,
    what: &str,
) -> Result<String, Refusal> {
    let names = strings(nodes, what)?;
    let mut out = Vec::new();
    for name in &names {
        out.push(column(name, scope)?);
    }
    Ok(out.join(", "))
}

/// One column of the scope, quoted.
pub(crate) fn column(name: &str, scope: &crate::Scope) -> Result<String, Refusal> {
    if scope.has_column(name) {
        Ok(quote_ident(name))
    } else {
        Err(Refusal::new(format!(
            "names column {}, which is not a column of this table",
            shown(name)
        )))
    }
}

/// Whether `op` is an operator name as the lexer makes them: operator characters only, no
/// comment start, at most 63 bytes (`NAMEDATALEN - 1`).
fn operator_lexeme(op: &str) -> bool {
    !op.is_empty()
        && op.len() <= 63
        && op.chars().all(|c| "+-*/<>=~!@#%^&|`?".contains(c))
        && !op.contains("--")
        && !op.contains("/*")
}

/// An operator as printed between operands: unqualified as given (`=`, `~~*`), or
/// `OPERATOR(pg_catalog.=)`. An operator of any other schema is refused: it may be a user's.
pub(crate) fn operator(name: &[pb::Node]) -> Result<String, Refusal> {
    let parts = strings(name, "an operator")?;
    let bad_op = |op: &str| {
        Refusal::new(format!(
            "uses operator {}, which is not an operator name",
            shown(op)
        ))
    };
    match parts.as_slice() {
        [op] if operator_lexeme(op) => Ok(op.clone()),
        [schema, op] if schema == "pg_catalog" && operator_lexeme(op) => {
            Ok(format!("OPERATOR(pg_catalog.{op})"))
        }
        [schema, op] if operator_lexeme(op) => Err(Refusal::new(format!(
            "uses operator {}.{op}: only pg_catalog's operators are accepted",
            shown(schema)
        ))),
        [op] | [_, op] => Err(bad_op(op)),
        _ => Err(Refusal::new(format!(
            "uses operator {}, which has more parts than schema and name",
            shown_qualified(&parts)
        ))),
    }
}

/// `WITH (name = value, ...)` storage parameters of an index or a key: plain names and
/// constant values only (`fillfactor = '70'`).
pub(crate) fn reloptions(options: &[pb::Node]) -> Result<String, Refusal> {
    if options.is_empty() {
        return Ok(String::new());
    }
    let mut out = Vec::new();
    for option in options {
        let Some(N::DefElem(d)) = &option.node else {
            return Err(Refusal::leftover("a storage parameter"));
        };
        let plain_name = !d.defname.is_empty()
            && d.defname.len() <= 63
            && d.defname
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !d.defnamespace.is_empty() || !plain_name {
            return Err(Refusal::new(format!(
                "sets storage parameter {}, which is not a plain parameter name",
                shown(&d.defname)
            )));
        }
        let value = match d.arg.as_deref().and_then(|a| a.node.as_ref()) {
            Some(N::String(s)) => literal(&s.sval),
            Some(N::Integer(i)) => integer(i.ival),
            Some(N::Float(f)) => numeric(&f.fval)?,
            Some(N::Boolean(b)) => literal(if b.boolval { "true" } else { "false" }),
            Some(N::TypeName(t)) if t.typmods.is_empty() && t.array_bounds.is_empty() => {
                match strings(&t.names, "a storage parameter")?.as_slice() {
                    [word] => literal(word),
                    _ => return Err(Refusal::leftover("a storage parameter value")),
                }
            }
            _ => return Err(Refusal::leftover("a storage parameter value")),
        };
        out.push(format!("{} = {value}", quote_ident(&d.defname)));
    }
    Ok(format!(" WITH ({})", out.join(", ")))
}
