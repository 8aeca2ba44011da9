//! Running PostgreSQL's parser on a served text inside the one statement its place allows.

use crate::Refusal;
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// Parses `prefix + text + suffix` and returns its one statement. `text` is the served part,
/// measured against [`crate::MAX_TEXT_BYTES`]; `place` names what it should be, for refusals.
pub(crate) fn statement(prefix: &str, text: &str, suffix: &str, place: &str) -> Result<N, Refusal> {
    if text.len() > crate::MAX_TEXT_BYTES {
        return Err(Refusal::too_long(text.len()));
    }
    let sql = format!("{prefix}{text}{suffix}");
    let parsed = match pg_query::parse(&sql, pg_query::ParserOptions::default()) {
        Ok(parsed) => parsed,
        // The protobuf decoder's recursion limit, or the parser's own stack or memory guard.
        Err(pg_query::Error::Decode(_)) => return Err(Refusal::too_deep()),
        Err(pg_query::Error::Parse(message))
            if message.contains("stack depth limit exceeded")
                || message.contains("memory exhausted") =>
        {
            return Err(Refusal::too_deep())
        }
        Err(_) => return Err(Refusal::not_sql(place)),
    };
    let mut stmts = parsed.protobuf.stmts.into_iter();
    let (Some(first), None) = (stmts.next(), stmts.next()) else {
        return Err(Refusal::shape(place, "it is not one statement"));
    };
    first
        .stmt
        .and_then(|s| s.node)
        .ok_or_else(|| Refusal::shape(place, "it is empty"))
}

/// The one expression of `SELECT (<text>)` (or `SELECT NULL::<text>`...): a `SelectStmt` with
/// one unnamed target and nothing else, no `FROM`, `WHERE`, `GROUP BY`, `ORDER BY`, `LIMIT`,
/// `WITH`, `INTO`, set operation or locking clause.
pub(crate) fn select_target(
    prefix: &str,
    text: &str,
    suffix: &str,
    place: &str,
) -> Result<pb::Node, Refusal> {
    let N::SelectStmt(select) = statement(prefix, text, suffix, place)? else {
        return Err(Refusal::shape(place, "it is not one expression"));
    };
    let mut select = *select;
    let targets = std::mem::take(&mut select.target_list);
    let bare = pb::SelectStmt {
        limit_option: pb::LimitOption::Default as i32,
        op: pb::SetOperation::SetopNone as i32,
        ..pb::SelectStmt::default()
    };
    if select != bare {
        return Err(Refusal::shape(
            place,
            "it holds clauses besides the expression (FROM, WHERE, ...)",
        ));
    }
    let mut targets = targets.into_iter();
    let (Some(target), None) = (targets.next(), targets.next()) else {
        return Err(Refusal::shape(place, "it holds more than one expression"));
    };
    match target.node {
        Some(N::ResTarget(t)) if t.name.is_empty() && t.indirection.is_empty() => t
            .val
            .map(|v| *v)
            .ok_or_else(|| Refusal::shape(place, "it is empty")),
        _ => Err(Refusal::shape(place, "it names or subscripts its result")),
    }
}

/// `relation` is the plain, unqualified `name` the wrapper wrote (`t` in `ALTER TABLE t`).
pub(crate) fn is_wrapper_relation(relation: Option<&pb::RangeVar>, name: &str) -> bool {
    relation.is_some_and(|r| {
        r.catalogname.is_empty()
            && r.schemaname.is_empty()
            && r.relname == name
            && r.inh
            && r.relpersistence == "p"
            && r.alias.is_none()
    })
}
