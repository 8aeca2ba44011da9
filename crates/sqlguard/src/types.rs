//! Type names (`format_type`) and collation names, rebuilt part by part.

use crate::parse;
use crate::refusal::Refusal;
use crate::sql::{integer, qualified, strings};
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// A served type name (`format_type`: `character varying(20)`, `numeric(10,2)`,
/// `timestamp with time zone`, `integer[]`, `public.order_status`, `"char"`): parsed as
/// `SELECT NULL::<text>` and rebuilt as the parser resolved it, each part quoted, built-in
/// names as the parser gives them (`"pg_catalog"."varchar"(20)`), type modifiers only
/// integers, array bounds kept. `%TYPE`, `SETOF` and anything but a type name are refused.
///
/// ```
/// assert_eq!(
///     maskbus_sqlguard::type_name("character varying(20)").unwrap(),
///     r#""pg_catalog"."varchar"(20)"#
/// );
/// ```
pub fn type_name(text: &str) -> Result<String, Refusal> {
    const PLACE: &str = "one type name";
    let node = parse::select_target("SELECT NULL::", text, "", PLACE)?;
    match node.node {
        Some(N::TypeCast(cast)) => {
            let null = matches!(
                cast.arg.as_deref().and_then(|a| a.node.as_ref()),
                Some(N::AConst(c)) if c.isnull
            );
            match (null, cast.type_name.as_ref()) {
                (true, Some(t)) => typename(t),
                _ => Err(Refusal::shape(PLACE, "it is not only a type name")),
            }
        }
        _ => Err(Refusal::shape(PLACE, "it is not only a type name")),
    }
}

/// A served collation name (`pg_catalog."C"`, `public."de_DE"`): parsed as
/// `SELECT 'x' COLLATE <text>` and rebuilt quoted: `"pg_catalog"."C"`.
pub fn collation(text: &str) -> Result<String, Refusal> {
    const PLACE: &str = "one collation name";
    let node = parse::select_target("SELECT 'x' COLLATE ", text, "", PLACE)?;
    match node.node {
        Some(N::CollateClause(c))
            if matches!(
                c.arg.as_deref().and_then(|a| a.node.as_ref()),
                Some(N::AConst(k)) if !k.isnull
            ) =>
        {
            collation_name(&c.collname)
        }
        _ => Err(Refusal::shape(PLACE, "it is not only a collation name")),
    }
}

/// A collation's name list, quoted part by part.
pub(crate) fn collation_name(names: &[pb::Node]) -> Result<String, Refusal> {
    qualified(&strings(names, "a collation")?, "collation")
}

/// A `TypeName` node, rebuilt: quoted name parts, integer modifiers, array bounds.
pub(crate) fn typename(t: &pb::TypeName) -> Result<String, Refusal> {
    if t.setof {
        return Err(Refusal::new(
            "names a SETOF type, which is not a column type",
        ));
    }
    if t.pct_type {
        return Err(Refusal::new(
            "names a type as another column's %TYPE, which the consumer does not resolve",
        ));
    }
    if t.type_oid != 0 || t.typemod != -1 {
        return Err(Refusal::leftover("a type by number"));
    }
    let mut sql = qualified(&strings(&t.names, "a type")?, "type")?;
    if !t.typmods.is_empty() {
        let mut mods = Vec::new();
        for m in &t.typmods {
            match &m.node {
                Some(N::AConst(pb::AConst {
                    isnull: false,
                    val: Some(pb::a_const::Val::Ival(i)),
                    ..
                })) => mods.push(i.ival.to_string()),
                _ => return Err(Refusal::new("gives a type modifier that is not an integer")),
            }
        }
        sql += &format!("({})", mods.join(", "));
    }
    for bound in &t.array_bounds {
        match &bound.node {
            Some(N::Integer(i)) if i.ival == -1 => sql += "[]",
            Some(N::Integer(i)) if i.ival >= 0 => sql += &format!("[{}]", integer(i.ival)),
            _ => return Err(Refusal::new("gives an array bound that is not an integer")),
        }
    }
    Ok(sql)
}
