//! Partition bounds (`pg_get_expr(relpartbound)`) and partition keys (`pg_get_partkeydef`).

use crate::expr::{constant, Walker};
use crate::parse::{self, is_wrapper_relation};
use crate::refusal::{shown, Refusal};
use crate::sql::{column, qualified, strings};
use crate::types::{collation_name, typename};
use crate::Scope;
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// A served partition bound (`DEFAULT`, `FOR VALUES IN ('a', 'b')`,
/// `FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')`, `FOR VALUES WITH (modulus 4, remainder 0)`):
/// parsed as `CREATE TABLE t PARTITION OF p <text>` and rebuilt. A bound is evaluated when the
/// partition is created, so it may hold only constants: literals, casts of literals, negative
/// numbers, `MINVALUE` and `MAXVALUE`. A function call is refused even if allow-listed.
///
/// ```
/// assert_eq!(
///     maskbus_sqlguard::partition_bound("FOR VALUES IN ('a', 'b')").unwrap(),
///     "FOR VALUES IN ('a', 'b')"
/// );
/// ```
pub fn partition_bound(text: &str) -> Result<String, Refusal> {
    const PLACE: &str = "one partition bound";
    let N::CreateStmt(create) =
        parse::statement("CREATE TABLE t PARTITION OF p ", text, "", PLACE)?
    else {
        return Err(Refusal::shape(PLACE, "it is not a partition bound"));
    };
    let mut create = create;
    let bound = create.partbound.take();
    let parents = std::mem::take(&mut create.inh_relations);
    let parent_ok = match parents.as_slice() {
        [p] => matches!(&p.node, Some(N::RangeVar(r)) if is_wrapper_relation(Some(r), "p")),
        _ => false,
    };
    let relation_ok = is_wrapper_relation(create.relation.as_ref(), "t");
    create.relation = None;
    let bare = pb::CreateStmt {
        oncommit: pb::OnCommitAction::OncommitNoop as i32,
        ..pb::CreateStmt::default()
    };
    if !parent_ok || !relation_ok || create != bare {
        return Err(Refusal::shape(
            PLACE,
            "it holds clauses besides the bound (columns, PARTITION BY, WITH, TABLESPACE...)",
        ));
    }
    let bound = bound.ok_or_else(|| Refusal::shape(PLACE, "it has no bound"))?;
    bound_sql(&bound)
}

fn bound_sql(b: &pb::PartitionBoundSpec) -> Result<String, Refusal> {
    let leftover = || Refusal::leftover("a partition bound of a form");
    if b.is_default {
        let rest = pb::PartitionBoundSpec {
            is_default: false,
            location: 0,
            ..b.clone()
        };
        return if rest == pb::PartitionBoundSpec::default() {
            Ok("DEFAULT".into())
        } else {
            Err(leftover())
        };
    }
    match b.strategy.as_str() {
        "l" if b.lowerdatums.is_empty() && b.upperdatums.is_empty() && b.modulus == 0 => {
            if b.listdatums.is_empty() {
                return Err(leftover());
            }
            Ok(format!("FOR VALUES IN ({})", datums(&b.listdatums, false)?))
        }
        "r" if b.listdatums.is_empty() && b.modulus == 0 => {
            if b.lowerdatums.is_empty() || b.upperdatums.is_empty() {
                return Err(leftover());
            }
            Ok(format!(
                "FOR VALUES FROM ({}) TO ({})",
                datums(&b.lowerdatums, true)?,
                datums(&b.upperdatums, true)?
            ))
        }
        "h" if b.listdatums.is_empty() && b.lowerdatums.is_empty() && b.upperdatums.is_empty() => {
            if b.modulus < 1 || b.remainder < 0 || b.remainder >= b.modulus {
                return Err(Refusal::new(
                    "gives a hash bound whose modulus and remainder do not fit",
                ));
            }
            Ok(format!(
                "FOR VALUES WITH (MODULUS {}, REMAINDER {})",
                b.modulus, b.remainder
            ))
        }
        _ => Err(leftover()),
    }
}

/// The constants of a bound; `MINVALUE` and `MAXVALUE` only in a range bound.
fn datums(nodes: &[pb::Node], range: bool) -> Result<String, Refusal> {
    let mut out = Vec::with_capacity(nodes.len());
    for node in nodes {
        out.push(datum(node, range)?);
    }
    Ok(out.join(", "))
}

fn datum(node: &pb::Node, range: bool) -> Result<String, Refusal> {
    let not_constant = || Refusal::new("is a partition bound that is not made of constants");
    match &node.node {
        Some(N::AConst(c)) => constant(c),
        Some(N::TypeCast(t)) => match t.arg.as_deref().and_then(|a| a.node.as_ref()) {
            Some(N::AConst(c)) => Ok(format!(
                "CAST({} AS {})",
                constant(c)?,
                typename(
                    t.type_name
                        .as_ref()
                        .ok_or_else(|| Refusal::leftover("a cast without a type"))?
                )?
            )),
            _ => Err(not_constant()),
        },
        // A unary minus over a numeric constant (the parser folds most of them already).
        Some(N::AExpr(a))
            if a.kind == pb::AExprKind::AexprOp as i32
                && a.lexpr.is_none()
                && strings(&a.name, "an operator").ok().as_deref() == Some(&["-".to_string()]) =>
        {
            match a.rexpr.as_deref().and_then(|r| r.node.as_ref()) {
                Some(N::AConst(pb::AConst {
                    isnull: false,
                    val: Some(v @ (pb::a_const::Val::Ival(_) | pb::a_const::Val::Fval(_))),
                    ..
                })) => Ok(format!(
                    "(- {})",
                    constant(&pb::AConst {
                        isnull: false,
                        val: Some(v.clone()),
                        location: 0
                    })?
                )),
                _ => Err(not_constant()),
            }
        }
        Some(N::ColumnRef(c)) if range => match strings(&c.fields, "a bound").ok().as_deref() {
            Some([word]) if word == "minvalue" => Ok("MINVALUE".into()),
            Some([word]) if word == "maxvalue" => Ok("MAXVALUE".into()),
            _ => Err(not_constant()),
        },
        _ => Err(not_constant()),
    }
}

/// A served partition key (`RANGE (created_at)`, `LIST (lower((region)::text))`,
/// `HASH (id)`): parsed as `CREATE TABLE t () PARTITION BY <text>` and rebuilt. Each element
/// is a column of `scope` or an allowed expression, with an optional collation and operator
/// class (unqualified or `pg_catalog`'s).
///
/// ```
/// use maskbus_sqlguard::{partition_key, Scope};
/// assert_eq!(
///     partition_key("RANGE (created_at)", &Scope::of_columns(["created_at"])).unwrap(),
///     r#"RANGE ("created_at")"#
/// );
/// ```
pub fn partition_key(text: &str, scope: &Scope) -> Result<String, Refusal> {
    const PLACE: &str = "one partition key";
    let N::CreateStmt(create) =
        parse::statement("CREATE TABLE t () PARTITION BY ", text, "", PLACE)?
    else {
        return Err(Refusal::shape(PLACE, "it is not a partition key"));
    };
    let mut create = create;
    let spec = create.partspec.take();
    let relation_ok = is_wrapper_relation(create.relation.as_ref(), "t");
    create.relation = None;
    let bare = pb::CreateStmt {
        oncommit: pb::OnCommitAction::OncommitNoop as i32,
        ..pb::CreateStmt::default()
    };
    if !relation_ok || create != bare {
        return Err(Refusal::shape(
            PLACE,
            "it holds clauses besides the key (WITH, TABLESPACE, USING...)",
        ));
    }
    let spec = spec.ok_or_else(|| Refusal::shape(PLACE, "it has no key"))?;
    let strategy = match pb::PartitionStrategy::try_from(spec.strategy) {
        Ok(pb::PartitionStrategy::Range) => "RANGE",
        Ok(pb::PartitionStrategy::List) => "LIST",
        Ok(pb::PartitionStrategy::Hash) => "HASH",
        _ => return Err(Refusal::leftover("a partition strategy")),
    };
    if spec.part_params.is_empty() {
        return Err(Refusal::shape(PLACE, "it has no column"));
    }
    let walker = Walker { scope };
    let mut elems = Vec::new();
    for param in &spec.part_params {
        let Some(N::PartitionElem(e)) = &param.node else {
            return Err(Refusal::leftover("a partition key element"));
        };
        let mut sql = match (e.name.as_str(), &e.expr) {
            (name, None) if !name.is_empty() => column(name, scope)?,
            ("", Some(expr)) => format!("({})", walker.expr(expr, 0)?),
            _ => return Err(Refusal::leftover("a partition key element")),
        };
        if !e.collation.is_empty() {
            sql += &format!(" COLLATE {}", collation_name(&e.collation)?);
        }
        if !e.opclass.is_empty() {
            sql += &format!(" {}", operator_class(&e.opclass)?);
        }
        elems.push(sql);
    }
    Ok(format!("{strategy} ({})", elems.join(", ")))
}

/// An operator class, unqualified or `pg_catalog`'s, quoted: `"text_pattern_ops"`,
/// `"pg_catalog"."text_ops"`. One of
/// another schema is refused: its support functions may be a user's.
pub(crate) fn operator_class(names: &[pb::Node]) -> Result<String, Refusal> {
    let parts = strings(names, "an operator class")?;
    match parts.as_slice() {
        [_] => qualified(&parts, "operator class"),
        [schema, _] if schema == "pg_catalog" => qualified(&parts, "operator class"),
        [schema, name] => Err(Refusal::new(format!(
            "uses operator class {}.{}: only pg_catalog's operator classes are accepted",
            shown(schema),
            shown(name)
        ))),
        _ => Err(Refusal::leftover("an operator class name")),
    }
}
