//! The expression walk: every node checked against the allow-list and printed anew.
//!
//! Every printed expression is self-delimiting: an atom (a constant, a quoted column, a call,
//! `CAST(...)`, `ARRAY[...]`, a keyword) or wrapped in parentheses, so no operator can bind to
//! a neighbour other than the one the tree says; negative numbers are parenthesised too, so no
//! `-` ever meets another and starts a comment.

use crate::functions;
use crate::parse;
use crate::refusal::{shown, shown_qualified, Refusal};
use crate::sql::{bit_string, column, integer, literal, numeric, operator, strings};
use crate::types::{collation_name, typename};
use crate::Scope;
use maskbus_model::quote_ident;
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// The parse-tree node kinds an expression may hold (PostgreSQL's names); every other kind
/// (`SubLink`, `ParamRef`, `GroupingFunc`, `XmlExpr`, the JSON constructors...) is refused.
/// `A_Indirection` is accepted with constant subscripts only (`arr[1]`, `doc['k']`): a field
/// selection `(x).f` is refused, as PostgreSQL reads it as the call `f(x)` when `x` has no
/// field `f`.
pub const ALLOWED_NODE_KINDS: &[&str] = &[
    "A_Const",
    "TypeCast",
    "ColumnRef",
    "A_Expr",
    "BoolExpr",
    "NullTest",
    "BooleanTest",
    "FuncCall",
    "NamedArgExpr",
    "CoalesceExpr",
    "MinMaxExpr",
    "CaseExpr",
    "CaseWhen",
    "A_ArrayExpr",
    "SQLValueFunction",
    "RowExpr",
    "CollateClause",
    "A_Indirection",
    "A_Indices",
];

pub(crate) fn expression(text: &str, scope: &Scope) -> Result<String, Refusal> {
    let node = parse::select_target("SELECT (\n", text, "\n)", "one expression")?;
    Walker { scope }.expr(&node, 0)
}

/// Walks one expression tree with the columns and sequences of `scope`.
pub(crate) struct Walker<'a> {
    pub(crate) scope: &'a Scope,
}

/// The child a node must have.
fn child(node: &Option<Box<pb::Node>>) -> Result<&pb::Node, Refusal> {
    node.as_deref()
        .ok_or_else(|| Refusal::leftover("an incomplete expression"))
}

/// A constant as printed: `NULL`, `TRUE`, `42`, `(-1)`, `1.5`, `'text'`, `B'01'`.
pub(crate) fn constant(c: &pb::AConst) -> Result<String, Refusal> {
    use pb::a_const::Val;
    if c.isnull {
        return Ok("NULL".into());
    }
    match &c.val {
        Some(Val::Ival(i)) => Ok(integer(i.ival)),
        Some(Val::Fval(f)) => numeric(&f.fval),
        Some(Val::Boolval(b)) => Ok(if b.boolval { "TRUE" } else { "FALSE" }.into()),
        Some(Val::Sval(s)) => Ok(literal(&s.sval)),
        Some(Val::Bsval(b)) => bit_string(&b.bsval),
        None => Err(Refusal::leftover("a constant without a value")),
    }
}

/// What a refused node is, in words, for the refusal.
fn kind_in_words(node: &N) -> &'static str {
    match node {
        N::SubLink(_) => "a subquery",
        N::ParamRef(_) => "a parameter ($n)",
        N::GroupingFunc(_) => "a GROUPING() call",
        N::XmlExpr(_) | N::XmlSerialize(_) => "an XML expression",
        N::MultiAssignRef(_) => "a multiple assignment",
        N::JsonFuncExpr(_)
        | N::JsonParseExpr(_)
        | N::JsonScalarExpr(_)
        | N::JsonSerializeExpr(_)
        | N::JsonObjectConstructor(_)
        | N::JsonArrayConstructor(_)
        | N::JsonArrayQueryConstructor(_)
        | N::JsonObjectAgg(_)
        | N::JsonArrayAgg(_)
        | N::JsonIsPredicate(_) => "a SQL/JSON expression",
        N::SelectStmt(_) => "a query",
        N::SetToDefault(_) => "DEFAULT",
        N::CurrentOfExpr(_) => "CURRENT OF",
        N::MergeSupportFunc(_) => "MERGE_ACTION()",
        _ => "an expression of a kind",
    }
}

impl Walker<'_> {
    /// One expression node, rebuilt.
    pub(crate) fn expr(&self, node: &pb::Node, depth: usize) -> Result<String, Refusal> {
        if depth >= crate::MAX_DEPTH {
            return Err(Refusal::too_deep());
        }
        let d = depth + 1;
        let Some(n) = &node.node else {
            return Err(Refusal::leftover("an empty expression"));
        };
        match n {
            N::AConst(c) => constant(c),
            N::TypeCast(t) => {
                let ty = typename(
                    t.type_name
                        .as_ref()
                        .ok_or_else(|| Refusal::leftover("a cast without a type"))?,
                )?;
                Ok(format!("CAST({} AS {ty})", self.expr(child(&t.arg)?, d)?))
            }
            N::ColumnRef(c) => self.column_ref(c),
            N::AExpr(a) => self.a_expr(a, d),
            N::BoolExpr(b) => self.bool_expr(b, d),
            N::NullTest(t) => {
                let test = match pb::NullTestType::try_from(t.nulltesttype) {
                    Ok(pb::NullTestType::IsNull) => "IS NULL",
                    Ok(pb::NullTestType::IsNotNull) => "IS NOT NULL",
                    _ => return Err(Refusal::leftover("a null test")),
                };
                Ok(format!("({} {test})", self.expr(child(&t.arg)?, d)?))
            }
            N::BooleanTest(t) => {
                use pb::BoolTestType as B;
                let test = match B::try_from(t.booltesttype) {
                    Ok(B::IsTrue) => "IS TRUE",
                    Ok(B::IsNotTrue) => "IS NOT TRUE",
                    Ok(B::IsFalse) => "IS FALSE",
                    Ok(B::IsNotFalse) => "IS NOT FALSE",
                    Ok(B::IsUnknown) => "IS UNKNOWN",
                    Ok(B::IsNotUnknown) => "IS NOT UNKNOWN",
                    _ => return Err(Refusal::leftover("a boolean test")),
                };
                Ok(format!("({} {test})", self.expr(child(&t.arg)?, d)?))
            }
            N::FuncCall(f) => self.func_call(f, d),
            N::CoalesceExpr(c) => Ok(format!("COALESCE({})", self.list(&c.args, d)?)),
            N::MinMaxExpr(m) => {
                let name = match pb::MinMaxOp::try_from(m.op) {
                    Ok(pb::MinMaxOp::IsGreatest) => "GREATEST",
                    Ok(pb::MinMaxOp::IsLeast) => "LEAST",
                    _ => return Err(Refusal::leftover("a GREATEST or LEAST")),
                };
                Ok(format!("{name}({})", self.list(&m.args, d)?))
            }
            N::CaseExpr(c) => self.case_expr(c, d),
            N::AArrayExpr(a) => Ok(format!("ARRAY[{}]", self.list(&a.elements, d)?)),
            N::SqlvalueFunction(f) => sql_value_function(f),
            N::RowExpr(r) => {
                if !r.colnames.is_empty() {
                    return Err(Refusal::leftover("a row with column names"));
                }
                Ok(format!("ROW({})", self.list(&r.args, d)?))
            }
            N::CollateClause(c) => Ok(format!(
                "({} COLLATE {})",
                self.expr(child(&c.arg)?, d)?,
                collation_name(&c.collname)?
            )),
            N::AIndirection(i) => self.indirection(i, d),
            N::ColumnDef(_) | N::Constraint(_) => Err(Refusal::leftover("a definition")),
            N::AStar(_) => Err(Refusal::new("selects every column (*)")),
            other => Err(Refusal::new(format!(
                "holds {}, which is not on the consumer's allow-list of expression kinds",
                kind_in_words(other)
            ))),
        }
    }

    /// Expressions separated by `, `.
    fn list(&self, nodes: &[pb::Node], d: usize) -> Result<String, Refusal> {
        let mut out = Vec::with_capacity(nodes.len());
        for n in nodes {
            out.push(self.expr(n, d)?);
        }
        Ok(out.join(", "))
    }

    fn column_ref(&self, c: &pb::ColumnRef) -> Result<String, Refusal> {
        match c.fields.as_slice() {
            [one] => match &one.node {
                Some(N::String(s)) => column(&s.sval, self.scope),
                Some(N::AStar(_)) => Err(Refusal::new("selects every column (*)")),
                _ => Err(Refusal::leftover("a column reference")),
            },
            many => {
                let parts: Vec<String> = many
                    .iter()
                    .take(4)
                    .map(|f| match &f.node {
                        Some(N::String(s)) => shown(&s.sval),
                        _ => "*".into(),
                    })
                    .collect();
                Err(Refusal::new(format!(
                    "names {}, which is not a column of this table (only the table's own \
                     columns, unqualified, are allowed)",
                    parts.join(".")
                )))
            }
        }
    }

    fn a_expr(&self, a: &pb::AExpr, d: usize) -> Result<String, Refusal> {
        use pb::AExprKind as K;
        let kind = K::try_from(a.kind).map_err(|_| Refusal::leftover("an operator"))?;
        let right = || -> Result<&pb::Node, Refusal> { child(&a.rexpr) };
        let left = || -> Result<&pb::Node, Refusal> { child(&a.lexpr) };
        // The two operands of `IN` and `BETWEEN`: a list.
        let pair_or_list = |node: &pb::Node| -> Result<Vec<String>, Refusal> {
            match &node.node {
                Some(N::List(l)) => l.items.iter().map(|i| self.expr(i, d)).collect(),
                _ => Err(Refusal::leftover("an IN or BETWEEN without its list")),
            }
        };
        match kind {
            K::AexprOp => {
                let op = operator(&a.name)?;
                let r = self.expr(right()?, d)?;
                match &a.lexpr {
                    Some(l) => Ok(format!("({} {op} {r})", self.expr(l, d)?)),
                    None => Ok(format!("({op} {r})")),
                }
            }
            K::AexprOpAny | K::AexprOpAll => {
                let op = operator(&a.name)?;
                let which = if kind == K::AexprOpAny { "ANY" } else { "ALL" };
                Ok(format!(
                    "({} {op} {which} ({}))",
                    self.expr(left()?, d)?,
                    self.expr(right()?, d)?
                ))
            }
            K::AexprDistinct | K::AexprNotDistinct => {
                self.expect_operator(&a.name, &["="])?;
                let not = if kind == K::AexprNotDistinct {
                    " NOT"
                } else {
                    ""
                };
                Ok(format!(
                    "({} IS{not} DISTINCT FROM {})",
                    self.expr(left()?, d)?,
                    self.expr(right()?, d)?
                ))
            }
            K::AexprNullif => {
                self.expect_operator(&a.name, &["="])?;
                Ok(format!(
                    "NULLIF({}, {})",
                    self.expr(left()?, d)?,
                    self.expr(right()?, d)?
                ))
            }
            K::AexprIn => {
                let op = self.expect_operator(&a.name, &["=", "<>"])?;
                let not = if op == "<>" { " NOT" } else { "" };
                let items = pair_or_list(right()?)?;
                if items.is_empty() {
                    return Err(Refusal::leftover("an empty IN list"));
                }
                Ok(format!(
                    "({}{not} IN ({}))",
                    self.expr(left()?, d)?,
                    items.join(", ")
                ))
            }
            K::AexprLike | K::AexprIlike | K::AexprSimilar => {
                let allowed: &[&str] = match kind {
                    K::AexprLike => &["~~", "!~~"],
                    K::AexprIlike => &["~~*", "!~~*"],
                    _ => &["~", "!~"],
                };
                let op = self.expect_operator(&a.name, allowed)?;
                Ok(format!(
                    "({} {op} {})",
                    self.expr(left()?, d)?,
                    self.expr(right()?, d)?
                ))
            }
            K::AexprBetween | K::AexprNotBetween | K::AexprBetweenSym | K::AexprNotBetweenSym => {
                let words = match kind {
                    K::AexprBetween => "BETWEEN",
                    K::AexprNotBetween => "NOT BETWEEN",
                    K::AexprBetweenSym => "BETWEEN SYMMETRIC",
                    _ => "NOT BETWEEN SYMMETRIC",
                };
                let bounds = pair_or_list(right()?)?;
                let [low, high] = bounds.as_slice() else {
                    return Err(Refusal::leftover("a BETWEEN without two bounds"));
                };
                Ok(format!(
                    "({} {words} {low} AND {high})",
                    self.expr(left()?, d)?
                ))
            }
            K::Undefined => Err(Refusal::leftover("an operator")),
        }
    }

    /// The operator of an `IN`, `LIKE`, `DISTINCT`... must be one the grammar itself writes.
    fn expect_operator(&self, name: &[pb::Node], allowed: &[&str]) -> Result<String, Refusal> {
        let parts = strings(name, "an operator")?;
        match parts.as_slice() {
            [op] if allowed.contains(&op.as_str()) => Ok(op.clone()),
            _ => Err(Refusal::leftover("an operator in a form")),
        }
    }

    fn bool_expr(&self, b: &pb::BoolExpr, d: usize) -> Result<String, Refusal> {
        use pb::BoolExprType as B;
        let args = b
            .args
            .iter()
            .map(|a| self.expr(a, d))
            .collect::<Result<Vec<_>, _>>()?;
        match (B::try_from(b.boolop), args.as_slice()) {
            (Ok(B::NotExpr), [one]) => Ok(format!("(NOT {one})")),
            (Ok(B::AndExpr), [_, ..]) => Ok(format!("({})", args.join(" AND "))),
            (Ok(B::OrExpr), [_, ..]) => Ok(format!("({})", args.join(" OR "))),
            _ => Err(Refusal::leftover("a boolean expression")),
        }
    }

    fn case_expr(&self, c: &pb::CaseExpr, d: usize) -> Result<String, Refusal> {
        let mut sql = String::from("(CASE");
        if let Some(arg) = &c.arg {
            sql += &format!(" {}", self.expr(arg, d)?);
        }
        if c.args.is_empty() {
            return Err(Refusal::leftover("a CASE without WHEN"));
        }
        for when in &c.args {
            let Some(N::CaseWhen(w)) = &when.node else {
                return Err(Refusal::leftover("a CASE branch"));
            };
            sql += &format!(
                " WHEN {} THEN {}",
                self.expr(child(&w.expr)?, d)?,
                self.expr(child(&w.result)?, d)?
            );
        }
        if let Some(default) = &c.defresult {
            sql += &format!(" ELSE {}", self.expr(default, d)?);
        }
        sql += " END)";
        Ok(sql)
    }

    fn indirection(&self, i: &pb::AIndirection, d: usize) -> Result<String, Refusal> {
        let mut sql = format!("({})", self.expr(child(&i.arg)?, d)?);
        if i.indirection.is_empty() {
            return Err(Refusal::leftover("an empty subscript"));
        }
        for step in &i.indirection {
            match &step.node {
                // `(x).name` is PostgreSQL's attribute notation for a call: when `x` has no
                // field `name` it runs `name(x)` (`(0.1::float8).pg_sleep` sleeps,
                // `('f'::text).pg_stat_file` reads the server's files). Never rebuilt.
                Some(N::String(field)) => {
                    return Err(Refusal::new(format!(
                        "selects .{} of a value, which PostgreSQL may read as a call of \
                         function {}; the consumer does not rebuild field selection",
                        shown(&field.sval),
                        shown(&field.sval)
                    )))
                }
                Some(N::AIndices(ix)) => {
                    let bound = |b: &Option<Box<pb::Node>>| -> Result<String, Refusal> {
                        match b.as_deref().map(|n| &n.node) {
                            None => Ok(String::new()),
                            Some(Some(N::AConst(c))) if !c.isnull => constant(c),
                            Some(_) => Err(Refusal::new(
                                "subscripts with something other than a constant",
                            )),
                        }
                    };
                    let upper = bound(&ix.uidx)?;
                    if ix.is_slice {
                        sql += &format!("[{}:{upper}]", bound(&ix.lidx)?);
                    } else if ix.lidx.is_some() || upper.is_empty() {
                        return Err(Refusal::leftover("a subscript"));
                    } else {
                        sql += &format!("[{upper}]");
                    }
                }
                Some(N::AStar(_)) => return Err(Refusal::new("selects every field (.*)")),
                _ => return Err(Refusal::leftover("a subscript")),
            }
        }
        Ok(format!("({sql})"))
    }

    fn func_call(&self, f: &pb::FuncCall, d: usize) -> Result<String, Refusal> {
        let parts = strings(&f.funcname, "a function")?;
        let name = match parts.as_slice() {
            [name] => name,
            [schema, name] if schema == "pg_catalog" => name,
            _ => {
                return Err(Refusal::new(format!(
                    "calls function {}: only pg_catalog's built-ins are called",
                    shown_qualified(&parts)
                )))
            }
        };
        let qualified = format!("pg_catalog.{}", shown(name));
        if f.agg_star
            || f.agg_distinct
            || f.agg_within_group
            || !f.agg_order.is_empty()
            || f.agg_filter.is_some()
            || f.over.is_some()
        {
            return Err(Refusal::new(format!(
                "calls {qualified} as an aggregate or window function"
            )));
        }
        if f.func_variadic {
            return Err(Refusal::new(format!(
                "calls {qualified} with VARIADIC, which the consumer does not rebuild"
            )));
        }
        if name == "nextval" {
            return self.nextval(&f.args);
        }
        let Some(allowed) = functions::allowed(name) else {
            return Err(Refusal::new(format!(
                "calls function {qualified}, which is not on the consumer's allow-list of \
                 side-effect-free built-ins"
            )));
        };
        let mut args = Vec::with_capacity(f.args.len());
        for arg in &f.args {
            match &arg.node {
                Some(N::NamedArgExpr(named)) => {
                    if named.name.is_empty() {
                        return Err(Refusal::leftover("a named argument without a name"));
                    }
                    args.push(format!(
                        "{} => {}",
                        quote_ident(&named.name),
                        self.expr(child(&named.arg)?, d)?
                    ));
                }
                _ => args.push(self.expr(arg, d)?),
            }
        }
        Ok(format!("pg_catalog.{allowed}({})", args.join(", ")))
    }

    /// `nextval('<schema>.<seq>'::regclass)` (or `nextval('<seq>')`) of a sequence of the
    /// scope, rebuilt as `pg_catalog.nextval('"schema"."seq"'::pg_catalog.regclass)`.
    fn nextval(&self, args: &[pb::Node]) -> Result<String, Refusal> {
        let refuse = || {
            Refusal::new(
                "calls nextval with an argument other than the name of a sequence this reply \
                 creates",
            )
        };
        let [arg] = args else {
            return Err(refuse());
        };
        let text = match &arg.node {
            Some(N::TypeCast(cast)) => {
                let regclass = cast
                    .type_name
                    .as_ref()
                    .filter(|t| t.typmods.is_empty() && t.array_bounds.is_empty())
                    .and_then(|t| strings(&t.names, "a type").ok())
                    .is_some_and(|n| {
                        n == ["regclass"] || n == ["pg_catalog".to_string(), "regclass".into()]
                    });
                match cast.arg.as_deref().and_then(|a| a.node.as_ref()) {
                    Some(N::AConst(pb::AConst {
                        isnull: false,
                        val: Some(pb::a_const::Val::Sval(s)),
                        ..
                    })) if regclass => s.sval.as_str(),
                    _ => return Err(refuse()),
                }
            }
            Some(N::AConst(pb::AConst {
                isnull: false,
                val: Some(pb::a_const::Val::Sval(s)),
                ..
            })) => s.sval.as_str(),
            _ => return Err(refuse()),
        };
        let parts = relation_name(text).ok_or_else(refuse)?;
        let (schema, name) = self.scope.sequence(&parts).ok_or_else(|| {
            Refusal::new(format!(
                "draws from sequence {}, which this reply does not create",
                shown_qualified(&parts)
            ))
        })?;
        let target = format!("{}.{}", quote_ident(schema), quote_ident(name));
        Ok(format!(
            "pg_catalog.nextval({}::pg_catalog.regclass)",
            literal(&target)
        ))
    }
}

/// `CURRENT_DATE`, `CURRENT_TIMESTAMP(3)`, `CURRENT_USER`...; `CURRENT_CATALOG` and
/// `CURRENT_SCHEMA` (which read the session's settings) are refused.
fn sql_value_function(f: &pb::SqlValueFunction) -> Result<String, Refusal> {
    use pb::SqlValueFunctionOp as S;
    let op = S::try_from(f.op).map_err(|_| Refusal::leftover("a SQL value function"))?;
    let with_precision = |name: &str| -> Result<String, Refusal> {
        if (0..=6).contains(&f.typmod) {
            Ok(format!("{name}({})", f.typmod))
        } else {
            Err(Refusal::new(format!(
                "asks for {name} with a precision outside 0 to 6"
            )))
        }
    };
    match op {
        S::SvfopCurrentDate => Ok("CURRENT_DATE".into()),
        S::SvfopCurrentTime => Ok("CURRENT_TIME".into()),
        S::SvfopCurrentTimeN => with_precision("CURRENT_TIME"),
        S::SvfopCurrentTimestamp => Ok("CURRENT_TIMESTAMP".into()),
        S::SvfopCurrentTimestampN => with_precision("CURRENT_TIMESTAMP"),
        S::SvfopLocaltime => Ok("LOCALTIME".into()),
        S::SvfopLocaltimeN => with_precision("LOCALTIME"),
        S::SvfopLocaltimestamp => Ok("LOCALTIMESTAMP".into()),
        S::SvfopLocaltimestampN => with_precision("LOCALTIMESTAMP"),
        S::SvfopCurrentRole => Ok("CURRENT_ROLE".into()),
        S::SvfopCurrentUser => Ok("CURRENT_USER".into()),
        S::SvfopUser => Ok("USER".into()),
        S::SvfopSessionUser => Ok("SESSION_USER".into()),
        S::SvfopCurrentCatalog | S::SvfopCurrentSchema => Err(Refusal::new(
            "reads CURRENT_CATALOG or CURRENT_SCHEMA, which are not on the consumer's allow-list",
        )),
        S::SqlvalueFunctionOpUndefined => Err(Refusal::leftover("a SQL value function")),
    }
}

/// The parts of a relation name as `regclass` input reads them (`public.t_id_seq`,
/// `"My Schema"."Seq"`): dot-separated, each part double-quoted (with `""` for `"`) or bare
/// (ASCII-lower-cased, letters, digits, `_` and `$`, not starting with a digit), at most 63
/// bytes, at most two parts.
pub(crate) fn relation_name(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii() {
                    part.push(c.to_ascii_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            if part.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
                return None;
            }
        }
        if part.is_empty() || part.len() > 63 {
            return None;
        }
        parts.push(part);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => break,
            Some('.') if parts.len() < 2 => continue,
            Some(_) => return None,
        }
    }
    Some(parts)
}
