//! A schema reply is data, never code.
//!
//! The producer serves the schema of production tables as text PostgreSQL deparsed
//! (`pg_get_expr`, `pg_get_constraintdef`, `pg_get_indexdef`, `pg_get_partkeydef`, `format_type`,
//! read with `search_path = ''` so non-builtin names are schema-qualified), and the consumer
//! creates that schema in a test database. An expression is code: a served default, check,
//! partition bound or index predicate could call `lo_from_bytea`, `query_to_xml`, `setval`,
//! `pg_notify`, `pg_sleep`, `dblink_exec`, `set_config`... and the consumer would run it
//! (tracker issue 51). This crate is what stands between the text and the test database.
//!
//! # What it guarantees
//!
//! Every piece of served text that the consumer puts into DDL goes through one function here
//! ([`expression`], [`type_name`], [`collation`], [`constraint`], [`partition_bound`],
//! [`partition_key`], [`index`]). Each one:
//!
//! 1. refuses text over [`MAX_TEXT_BYTES`] before parsing it;
//! 2. parses it with PostgreSQL's own parser, wrapped in the one statement its place allows
//!    (`SELECT (<text>)`, `ALTER TABLE t ADD CONSTRAINT c <text>`, ...), and checks that the
//!    tree has exactly that shape: one statement, one target, no `FROM`, no `WHERE`, no second
//!    subcommand, no clause the rebuild would not print;
//! 3. walks the tree against allow-lists: constants, casts, column references to the table's own
//!    columns (the [`Scope`]), operators (unqualified or `pg_catalog`'s), and the node kinds and
//!    built-in functions listed below; anything else (another function, a subquery, a parameter,
//!    a column of another table, a name in another schema...) is a [`Refusal`] that says what
//!    and why, and nothing is run;
//! 4. returns SQL printed by this crate's own printer from the tree, never the input text:
//!    every identifier quoted ([`maskbus_model::quote_ident`]), every string constant re-quoted,
//!    every function called as `pg_catalog.name(...)`, every expression parenthesised so
//!    precedence cannot change, comments and whitespace gone. What PostgreSQL's parser did not
//!    see cannot reach the test database, and what it saw was rebuilt from the allow-list.
//!
//! Nesting is bounded three times: PostgreSQL's parser has its own stack and memory guards
//! (10,000 parentheses are a parse error, not a crash), the protobuf decoder under `pg_query`
//! refuses messages nested deeper than 100 (about 45 levels of expression: `a || b || ...` of
//! 46 pieces is refused), and the walk here counts its own depth ([`MAX_DEPTH`]). Nothing here
//! panics on any input; the tests feed it thousands of mangled texts.
//!
//! String constants are printed as `'...'` with `'` doubled; a constant holding a backslash is
//! printed as `E'...'` with `\` doubled too, so it means the same text whatever
//! `standard_conforming_strings` the session has. Refusals name objects (a function, a column,
//! a schema) but never print a literal value: constants can be personal data.
//!
//! # What the caller still owns
//!
//! * Unqualified names in the output are resolved by the session that runs it: type names as
//!   `format_type` prints built-ins (`"text"`, `"jsonb"`, `"char"`) and operators (`=`, `~~`).
//!   Run the DDL with `search_path = pg_catalog, pg_temp` (as `maskbus_pg::ddl::SESSION` does),
//!   so they can only be PostgreSQL's own. Functions are always called `pg_catalog.name`.
//! * Type and collation names are not restricted: converting a value to a type runs that
//!   type's input or cast function, and a type in the test database is a built-in, one the
//!   reply's DDL creates (enum, domain, composite, range: no code of the producer's), or an
//!   extension's. Which extensions a reply may create is the caller's decision.
//! * Cost is not bounded: an allowed function can still be slow or large (a regular expression,
//!   `lpad` to a gigabyte). Run the DDL with a `statement_timeout`.
//! * `nextval` is accepted for the sequences the [`Scope`] holds; give sequences only to the
//!   scope of column defaults.
//!
//! # Why PostgreSQL's own parser
//!
//! `pg_query` (pganalyze's binding of libpg_query) compiles the server's own grammar and lexer
//! into the binary, so a text means to this crate exactly what it means to the server: quoting,
//! dollar quotes, nested comments, `E''` escapes, operator lexing and keywords all agree, and no
//! trick of the grammar slips between a hand-written checker and the server. It parses only; it
//! connects to nothing and runs nothing. It was chosen over `pg_parse` 0.15, which fails to link
//! on Debian 12's glibc 2.36 (`strlcpy`), and over hand-written parsing.
//!
//! # The allow-lists
//!
//! * Node kinds: `A_Const`, `TypeCast`, `ColumnRef` (one field, in scope), `A_Expr` (operators,
//!   `ANY`/`ALL`, `IS [NOT] DISTINCT FROM`, `NULLIF`, `IN`, `LIKE`, `ILIKE`, `SIMILAR TO`,
//!   `BETWEEN` and its variants), `BoolExpr`, `NullTest`, `BooleanTest`, `FuncCall` (allow-listed,
//!   plain or named arguments only), `CoalesceExpr`, `MinMaxExpr`, `CaseExpr`, `A_ArrayExpr`,
//!   `SQLValueFunction` (dates, times and user names), `RowExpr`, `CollateClause`,
//!   `A_Indirection` with constant subscripts only (a field selection `(x).f` is refused:
//!   PostgreSQL reads it as the call `f(x)` when `x` has no field `f`, so
//!   `(0.1::float8).pg_sleep` sleeps). See [`ALLOWED_NODE_KINDS`].
//! * Functions: [`ALLOWED_FUNCTIONS`], plus `nextval` of a sequence in the [`Scope`].
//! * Index methods: [`INDEX_METHODS`].
//!
//! # The modules
//!
//! `parse` (the wrapper statements and the shape checks), `expr` (the expression walk and its
//! allow-list), `functions` (the allowed built-ins), `types` (type names and collations),
//! `constraint`, `index` and `partition` (each a served object kind), `scope` (what a text may
//! name), `sql` (the printer: quoting and literals), `refusal` (why a text is refused).

mod constraint;
mod expr;
mod functions;
mod index;
mod parse;
mod partition;
mod refusal;
mod scope;
mod sql;
mod types;

#[cfg(test)]
mod tests;

pub use constraint::constraint;
pub use expr::ALLOWED_NODE_KINDS;
pub use functions::ALLOWED_FUNCTIONS;
pub use index::{index, IndexSql, INDEX_METHODS};
pub use partition::{partition_bound, partition_key};
pub use refusal::Refusal;
pub use scope::Scope;
pub use types::{collation, type_name};

/// The longest served text read, in bytes (64 KiB); longer text is refused unparsed.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// The deepest expression tree this crate's walk descends (a backstop: the protobuf decoder
/// already stops at about 45 levels); deeper is refused.
pub const MAX_DEPTH: usize = 200;

/// A served expression (a column default, a generated column, a domain's default): parsed as
/// `SELECT (<text>)`, checked against the allow-lists with `scope`'s columns and sequences, and
/// rebuilt. `nextval('<schema>.<seq>'::regclass)` is accepted only for a sequence in `scope`.
///
/// ```
/// use maskbus_model::TableRef;
/// use maskbus_sqlguard::{expression, Scope};
///
/// let scope = Scope::of_columns(["id"]).with_sequences([&TableRef::new("public", "t_id_seq")]);
/// assert_eq!(
///     expression("nextval('public.t_id_seq'::regclass)", &scope).unwrap(),
///     r#"pg_catalog.nextval('"public"."t_id_seq"'::pg_catalog.regclass)"#
/// );
/// assert!(expression("pg_sleep(10)", &scope).is_err());
/// ```
pub fn expression(text: &str, scope: &Scope) -> Result<String, Refusal> {
    expr::expression(text, scope)
}
