//! Index definitions (`pg_get_indexdef`), rebuilt from `USING` on.

use crate::expr::Walker;
use crate::parse;
use crate::partition::operator_class;
use crate::refusal::{shown, Refusal};
use crate::sql::{column, reloptions};
use crate::types::collation_name;
use crate::Scope;
use maskbus_model::{quote_ident, TableRef};
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// The index access methods an index or an exclusion constraint may use: PostgreSQL's own.
pub const INDEX_METHODS: &[&str] = &["btree", "hash", "gist", "gin", "spgist", "brin"];

/// A rebuilt index: whether it is unique, and its definition from `USING` on, to be put after
/// the index's own name and table (see [`IndexSql::create_statement`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSql {
    unique: bool,
    using: String,
}

impl IndexSql {
    /// Whether it was `CREATE UNIQUE INDEX`.
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// From `USING` on: `USING btree ("a", (pg_catalog.lower("b"))) WHERE ("c" IS NULL)`.
    pub fn using(&self) -> &str {
        &self.using
    }

    /// `CREATE [UNIQUE] INDEX "name" ON "schema"."table" USING ...` (without `ONLY`, so the
    /// partitions of a partitioned table get it too).
    pub fn create_statement(&self, name: &str, table: &TableRef) -> String {
        format!(
            "CREATE {}INDEX {} ON {} {}",
            if self.unique { "UNIQUE " } else { "" },
            quote_ident(name),
            table.sql(),
            self.using
        )
    }
}

/// A served index definition as `pg_get_indexdef` prints it
/// (`CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING method (elems) [INCLUDE (...)]
/// [NULLS NOT DISTINCT] [WITH (...)] [WHERE pred]`), parsed whole and rebuilt from `USING` on:
/// the method from [`INDEX_METHODS`], each element a column of `scope` or an allowed expression
/// with optional collation, operator class (unqualified or `pg_catalog`'s), `ASC`/`DESC` and
/// `NULLS FIRST`/`LAST`, `INCLUDE` columns of `scope`, storage parameters with constant values,
/// and the predicate as an allowed expression. The definition's own index name and table are
/// ignored (the caller supplies them); a tablespace is dropped (the test database has its own).
///
/// ```
/// use maskbus_sqlguard::{index, Scope};
/// let rebuilt = index(
///     "CREATE UNIQUE INDEX x ON public.t USING btree (lower((email)::text)) WHERE (deleted_at IS NULL)",
///     &Scope::of_columns(["email", "deleted_at"]),
/// )
/// .unwrap();
/// assert!(rebuilt.is_unique());
/// assert_eq!(
///     rebuilt.using(),
///     r#"USING btree ((pg_catalog.lower(CAST("email" AS "text")))) WHERE ("deleted_at" IS NULL)"#
/// );
/// ```
pub fn index(definition: &str, scope: &Scope) -> Result<IndexSql, Refusal> {
    const PLACE: &str = "one index definition";
    let N::IndexStmt(stmt) = parse::statement("", definition, "", PLACE)? else {
        return Err(Refusal::shape(PLACE, "it is not CREATE INDEX"));
    };
    let mut stmt = *stmt;
    let method = take_method(&mut stmt.access_method, "index")?;
    let params = std::mem::take(&mut stmt.index_params);
    let including = std::mem::take(&mut stmt.index_including_params);
    let options = std::mem::take(&mut stmt.options);
    let predicate = stmt.where_clause.take();
    let unique = std::mem::take(&mut stmt.unique);
    let nulls_not_distinct = std::mem::take(&mut stmt.nulls_not_distinct);
    // Ignored: the caller names the index and its table; the test database has its own
    // tablespaces.
    stmt.idxname.clear();
    stmt.relation = None;
    stmt.table_space.clear();
    if stmt != pb::IndexStmt::default() {
        return Err(Refusal::shape(
            PLACE,
            "it holds clauses the consumer does not rebuild (CONCURRENTLY, IF NOT EXISTS...)",
        ));
    }
    if params.is_empty() {
        return Err(Refusal::shape(PLACE, "it has no column"));
    }
    let walker = Walker { scope };
    let mut elems = Vec::with_capacity(params.len());
    for p in &params {
        elems.push(index_elem(p, &walker)?);
    }
    let mut using = format!("USING {method} ({})", elems.join(", "));
    using += &include(&including, scope)?;
    if nulls_not_distinct {
        using += " NULLS NOT DISTINCT";
    }
    using += &reloptions(&options)?;
    if let Some(p) = predicate {
        // Self-delimiting already (see the expr module): no parentheses needed.
        using += &format!(" WHERE {}", walker.expr(&p, 0)?);
    }
    Ok(IndexSql { unique, using })
}

/// The method of an index or exclusion constraint, from [`INDEX_METHODS`].
pub(crate) fn take_method(method: &mut String, what: &str) -> Result<&'static str, Refusal> {
    let name = std::mem::take(method);
    INDEX_METHODS
        .iter()
        .find(|m| **m == name)
        .copied()
        .ok_or_else(|| {
            Refusal::new(format!(
                "uses {what} method {}, which is not one of {}",
                shown(&name),
                INDEX_METHODS.join(", ")
            ))
        })
}

/// ` INCLUDE ("a", "b")` of columns of `scope`, or nothing.
pub(crate) fn include(nodes: &[pb::Node], scope: &Scope) -> Result<String, Refusal> {
    if nodes.is_empty() {
        return Ok(String::new());
    }
    let mut names = Vec::with_capacity(nodes.len());
    for n in nodes {
        match &n.node {
            // An index's INCLUDE list holds plain IndexElems; a key's holds names.
            Some(N::IndexElem(e))
                if e.expr.is_none() && **e == plain_index_elem(e.name.clone()) =>
            {
                names.push(column(&e.name, scope)?)
            }
            Some(N::String(s)) => names.push(column(&s.sval, scope)?),
            _ => return Err(Refusal::leftover("an INCLUDE entry")),
        }
    }
    Ok(format!(" INCLUDE ({})", names.join(", ")))
}

fn plain_index_elem(name: String) -> pb::IndexElem {
    pb::IndexElem {
        name,
        ordering: pb::SortByDir::SortbyDefault as i32,
        nulls_ordering: pb::SortByNulls::SortbyNullsDefault as i32,
        ..pb::IndexElem::default()
    }
}

/// One element of an index or exclusion constraint: `"col"` or `(expr)`, then
/// `COLLATE`, operator class, `ASC`/`DESC`, `NULLS FIRST`/`LAST`.
pub(crate) fn index_elem(node: &pb::Node, walker: &Walker<'_>) -> Result<String, Refusal> {
    let Some(N::IndexElem(e)) = &node.node else {
        return Err(Refusal::leftover("an index element"));
    };
    if !e.indexcolname.is_empty() {
        return Err(Refusal::leftover("an index element with a name"));
    }
    if !e.opclassopts.is_empty() {
        return Err(Refusal::new(
            "gives operator class options, which the consumer does not rebuild",
        ));
    }
    let mut sql = match (e.name.as_str(), &e.expr) {
        (name, None) if !name.is_empty() => column(name, walker.scope)?,
        ("", Some(expr)) => format!("({})", walker.expr(expr, 0)?),
        _ => return Err(Refusal::leftover("an index element")),
    };
    if !e.collation.is_empty() {
        sql += &format!(" COLLATE {}", collation_name(&e.collation)?);
    }
    if !e.opclass.is_empty() {
        sql += &format!(" {}", operator_class(&e.opclass)?);
    }
    match pb::SortByDir::try_from(e.ordering) {
        Ok(pb::SortByDir::SortbyDefault) => {}
        Ok(pb::SortByDir::SortbyAsc) => sql += " ASC",
        Ok(pb::SortByDir::SortbyDesc) => sql += " DESC",
        _ => return Err(Refusal::leftover("an index ordering")),
    }
    match pb::SortByNulls::try_from(e.nulls_ordering) {
        Ok(pb::SortByNulls::SortbyNullsDefault) => {}
        Ok(pb::SortByNulls::SortbyNullsFirst) => sql += " NULLS FIRST",
        Ok(pb::SortByNulls::SortbyNullsLast) => sql += " NULLS LAST",
        _ => return Err(Refusal::leftover("an index ordering")),
    }
    Ok(sql)
}
