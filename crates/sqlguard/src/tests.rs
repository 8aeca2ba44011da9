//! The attacker's tests: each hostile class refused with a reason, and the texts PostgreSQL
//! really deparses accepted and rebuilt to SQL whose exact text a reviewer can read here. Every
//! accepted case is also rebuilt a second time from its own output, which must parse again and
//! give the same text (idempotence).

use crate::*;
use maskbus_model::TableRef;

/// The columns, sequences and tables of the tests' one table.
fn scope() -> Scope {
    Scope::of_columns([
        "id",
        "email",
        "deleted_at",
        "price",
        "status",
        "code",
        "zip",
        "customer_id",
        "created_at",
        "doc",
        "a",
        "b",
        "c",
        "n",
        "m",
        "arr",
        "during",
        "region",
        "flag",
        "Mixed Case",
    ])
    .with_sequences([
        &TableRef::new("public", "t_id_seq"),
        &TableRef::new("sales", "Order Seq"),
    ])
    .with_tables([
        &TableRef::new("public", "customers"),
        &TableRef::new("sales", "orders"),
    ])
}

// ---------------------------------------------------------------- helpers

/// `text` as a failure message shows it: at most 120 characters.
fn cut(text: &str) -> String {
    text.chars().take(120).collect()
}

/// `expression` accepts `text`, rebuilds it to `expected`, and rebuilds that to itself.
#[track_caller]
fn accepts(text: &str, expected: &str) {
    let s = scope();
    let rebuilt = expression(text, &s).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt, expected, "rebuilding {text}");
    let again = expression(&rebuilt, &s).unwrap_or_else(|e| panic!("{rebuilt}: refused: {e}"));
    assert_eq!(again, rebuilt, "rebuilding the rebuilt {rebuilt}");
}

/// `expression` refuses `text` with a reason containing `reason`.
#[track_caller]
fn refuses(text: &str, reason: &str) {
    match expression(text, &scope()) {
        Ok(sql) => panic!("{}: accepted as {}", cut(text), cut(&sql)),
        Err(e) => assert!(
            e.to_string().contains(reason),
            "{}: refused for {e:?}, expected a reason containing {reason:?}",
            cut(text)
        ),
    }
}

#[track_caller]
fn accepts_constraint(text: &str, expected: &str) {
    accepts_constraint_in(text, &scope(), expected);
}

#[track_caller]
fn accepts_constraint_in(text: &str, s: &Scope, expected: &str) {
    let rebuilt = constraint(text, s).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt, expected, "rebuilding {text}");
    let again = constraint(&rebuilt, s).unwrap_or_else(|e| panic!("{rebuilt}: refused: {e}"));
    assert_eq!(again, rebuilt, "rebuilding the rebuilt {rebuilt}");
}

#[track_caller]
fn refuses_constraint(text: &str, reason: &str) {
    match constraint(text, &scope()) {
        Ok(sql) => panic!("{text}: accepted as {sql}"),
        Err(e) => assert!(e.to_string().contains(reason), "{text}: refused for {e:?}"),
    }
}

#[track_caller]
fn accepts_bound(text: &str, expected: &str) {
    let rebuilt = partition_bound(text).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt, expected, "rebuilding {text}");
    assert_eq!(partition_bound(&rebuilt).as_deref(), Ok(rebuilt.as_str()));
}

#[track_caller]
fn refuses_bound(text: &str, reason: &str) {
    match partition_bound(text) {
        Ok(sql) => panic!("{text}: accepted as {sql}"),
        Err(e) => assert!(e.to_string().contains(reason), "{text}: refused for {e:?}"),
    }
}

#[track_caller]
fn accepts_key(text: &str, expected: &str) {
    let s = scope();
    let rebuilt = partition_key(text, &s).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt, expected, "rebuilding {text}");
    assert_eq!(partition_key(&rebuilt, &s).as_deref(), Ok(rebuilt.as_str()));
}

#[track_caller]
fn refuses_key(text: &str, reason: &str) {
    match partition_key(text, &scope()) {
        Ok(sql) => panic!("{text}: accepted as {sql}"),
        Err(e) => assert!(e.to_string().contains(reason), "{text}: refused for {e:?}"),
    }
}

#[track_caller]
fn accepts_index(text: &str, unique: bool, expected: &str) {
    let s = scope();
    let rebuilt = index(text, &s).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt.using(), expected, "rebuilding {text}");
    assert_eq!(rebuilt.is_unique(), unique, "{text}");
    let statement = rebuilt.create_statement("x", &TableRef::new("public", "t"));
    let again = index(&statement, &s).unwrap_or_else(|e| panic!("{statement}: refused: {e}"));
    assert_eq!(again, rebuilt, "rebuilding the rebuilt {statement}");
}

#[track_caller]
fn refuses_index(text: &str, reason: &str) {
    match index(text, &scope()) {
        Ok(sql) => panic!("{text}: accepted as {sql:?}"),
        Err(e) => assert!(e.to_string().contains(reason), "{text}: refused for {e:?}"),
    }
}

#[track_caller]
fn accepts_type(text: &str, expected: &str) {
    let rebuilt = type_name(text).unwrap_or_else(|e| panic!("{text}: refused: {e}"));
    assert_eq!(rebuilt, expected, "rebuilding {text}");
    assert_eq!(type_name(&rebuilt).as_deref(), Ok(rebuilt.as_str()));
}

#[track_caller]
fn refuses_type(text: &str, reason: &str) {
    match type_name(text) {
        Ok(sql) => panic!("{text}: accepted as {sql}"),
        Err(e) => assert!(e.to_string().contains(reason), "{text}: refused for {e:?}"),
    }
}

const NOT_ALLOWED: &str = "which is not on the consumer's allow-list of side-effect-free built-ins";

// ---------------------------------------------------------------- hostile expressions

#[test]
fn large_objects_are_refused() {
    refuses(
        r"lo_from_bytea(0, '\x41'::bytea)",
        &format!("calls function pg_catalog.lo_from_bytea, {NOT_ALLOWED}"),
    );
    refuses("lo_import('/etc/passwd')", "pg_catalog.lo_import");
    refuses("lo_export(16384, '/tmp/x')", "pg_catalog.lo_export");
    refuses("lo_create(0)", "pg_catalog.lo_create");
}

#[test]
fn query_running_functions_are_refused() {
    refuses(
        "(query_to_xml('select 1', true, true, ''))::text",
        &format!("calls function pg_catalog.query_to_xml, {NOT_ALLOWED}"),
    );
    refuses(
        "query_to_xml_and_xmlschema('select 1', true, true, '')",
        "query_to_xml_and_xmlschema",
    );
    refuses("cursor_to_xml('c', 1, true, true, '')", "cursor_to_xml");
    refuses("table_to_xml('pg_authid', true, true, '')", "table_to_xml");
}

#[test]
fn functions_with_side_effects_are_refused() {
    refuses("setval('s', 1)", "pg_catalog.setval");
    refuses(
        "setval('public.t_id_seq'::regclass, 1)",
        "pg_catalog.setval",
    );
    refuses("currval('public.t_id_seq'::regclass)", "pg_catalog.currval");
    refuses("lastval()", "pg_catalog.lastval");
    refuses("pg_notify('c','x')", "pg_catalog.pg_notify");
    refuses("pg_sleep(1)", "pg_catalog.pg_sleep");
    refuses("pg_sleep_for('1 hour')", "pg_catalog.pg_sleep_for");
    refuses("set_config('a','b',false)", "pg_catalog.set_config");
    refuses(
        "current_setting('search_path')",
        "pg_catalog.current_setting",
    );
    refuses("pg_read_file('/etc/passwd')", "pg_catalog.pg_read_file");
    refuses("pg_ls_dir('.')", "pg_catalog.pg_ls_dir");
    refuses("pg_terminate_backend(1)", "pg_catalog.pg_terminate_backend");
    refuses("pg_cancel_backend(1)", "pg_catalog.pg_cancel_backend");
    refuses("pg_advisory_lock(1)", "pg_catalog.pg_advisory_lock");
    refuses("txid_current()", "pg_catalog.txid_current");
    refuses("pg_current_xact_id()", "pg_catalog.pg_current_xact_id");
    refuses("setseed(0.5)", "pg_catalog.setseed");
    refuses("repeat('x', 1000000000)", "pg_catalog.repeat");
    refuses(
        "dblink_exec('host=evil', 'drop table x')",
        "pg_catalog.dblink_exec",
    );
}

#[test]
fn a_side_effect_hidden_inside_an_allowed_call_is_refused() {
    refuses("lower(pg_sleep(1)::text)", "pg_catalog.pg_sleep");
    refuses("coalesce(null, set_config('a', 'b', false))", "set_config");
    refuses(
        "CASE WHEN true THEN 1 ELSE pg_cancel_backend(1)::int END",
        "pg_cancel_backend",
    );
    refuses("ARRAY[1, (pg_notify('c', 'x'))::int]", "pg_notify");
    refuses(
        "(doc)[lo_create(0)]",
        "subscripts with something other than a constant",
    );
}

#[test]
fn the_allow_listed_name_is_refused_spelled_with_pg_catalog_too_when_not_listed() {
    refuses(
        "pg_catalog.pg_sleep(1)",
        &format!("pg_catalog.pg_sleep, {NOT_ALLOWED}"),
    );
    refuses(r#""pg_catalog"."pg_sleep"(1)"#, "pg_catalog.pg_sleep");
    refuses("PG_CATALOG.PG_SLEEP(1)", "pg_catalog.pg_sleep");
}

#[test]
fn functions_of_other_schemas_are_refused_even_with_an_allowed_name() {
    refuses(
        "public.dblink_exec('...')",
        "calls function public.dblink_exec: only pg_catalog's built-ins are called",
    );
    refuses("public.lower(email)", "calls function public.lower");
    refuses(
        r#""Evil Schema".now()"#,
        r#"calls function "Evil Schema".now"#,
    );
    refuses(
        "db.pg_catalog.lower(email)",
        "calls function db.pg_catalog.lower",
    );
}

#[test]
fn subqueries_are_refused() {
    refuses("(SELECT 1)", "holds a subquery");
    refuses("EXISTS (SELECT 1 FROM pg_authid)", "holds a subquery");
    refuses("a IN (SELECT 1)", "holds a subquery");
    refuses("ARRAY(SELECT 1)", "holds a subquery");
    refuses("a = ANY (SELECT 1)", "holds a subquery");
    refuses(
        "lower((SELECT rolpassword FROM pg_authid LIMIT 1))",
        "holds a subquery",
    );
}

#[test]
fn a_second_statement_or_clause_cannot_be_smuggled() {
    refuses(
        "1) ; DROP TABLE x; --",
        "is not valid SQL for one expression",
    );
    refuses("1); DROP TABLE x; SELECT (1", "is not one statement");
    refuses(
        "1) FROM pg_authid WHERE (true",
        "holds clauses besides the expression",
    );
    refuses("1) UNION SELECT (2", "holds clauses besides the expression");
    refuses("1), (pg_sleep(1)", "holds more than one expression");
    refuses("1) AS x, (2", "holds more than one expression");
    refuses(
        "1) INTO TEMP t FROM (SELECT 1",
        "holds clauses besides the expression",
    );
    refuses("1) FOR UPDATE --", "is not valid SQL");
    refuses("", "is not valid SQL");
    refuses("/* just a comment */", "is not valid SQL");
}

#[test]
fn columns_must_be_the_tables_own() {
    refuses(
        "other.col",
        "names other.col, which is not a column of this table",
    );
    refuses("public.t.id", "names public.t.id, which is not a column");
    refuses(
        "ssn",
        "names column ssn, which is not a column of this table",
    );
    refuses(r#""ID""#, r#"names column "ID", which is not a column"#);
    refuses("t.*", "names t.*");
    refuses("(doc).*", "selects every field");
}

#[test]
fn field_selection_is_refused_as_postgres_reads_it_as_a_call() {
    // Attribute notation: `(x).f` is `f(x)` when x has no field f (checked on PostgreSQL 15:
    // `SELECT (0.1::float8).pg_sleep` sleeps).
    refuses(
        "(0.1::float8).pg_sleep",
        "selects .pg_sleep of a value, which PostgreSQL may read as a call of function pg_sleep",
    );
    refuses(
        "('/etc/passwd'::text).pg_read_file",
        "call of function pg_read_file",
    );
    refuses("(16384::oid).lo_unlink", "call of function lo_unlink");
    refuses(
        "(during).lower",
        "the consumer does not rebuild field selection",
    );
    refuses(
        "(arr[1]).pg_cancel_backend",
        "call of function pg_cancel_backend",
    );
    // Written as a qualified column, it is a column of another table and refused too.
    refuses("email.pg_read_file", "names email.pg_read_file");
}

#[test]
fn other_node_kinds_are_refused() {
    refuses("$1", "holds a parameter ($n)");
    refuses("xmlelement(name a, 'x')", "holds an XML expression");
    refuses("xmlparse(document '<a/>')", "holds an XML expression");
    refuses("JSON_OBJECT('a': 1)", "holds a SQL/JSON expression");
    refuses("doc IS JSON", "holds a SQL/JSON expression");
    refuses("CURRENT_SCHEMA", "CURRENT_CATALOG or CURRENT_SCHEMA");
    refuses("CURRENT_CATALOG", "CURRENT_CATALOG or CURRENT_SCHEMA");
    refuses("GROUPING(a)", "GROUPING()");
}

#[test]
fn aggregates_windows_and_variadic_calls_are_refused() {
    refuses("count(*)", "as an aggregate or window function");
    refuses("lower(email) OVER ()", "as an aggregate or window function");
    refuses(
        "lower(email) FILTER (WHERE true)",
        "as an aggregate or window function",
    );
    refuses("concat(DISTINCT a)", "as an aggregate or window function");
    refuses("concat(a ORDER BY b)", "as an aggregate or window function");
    refuses(
        "concat(VARIADIC ARRAY['a', 'b'])",
        "calls pg_catalog.concat with VARIADIC",
    );
}

#[test]
fn operators_of_other_schemas_are_refused() {
    refuses(
        "a OPERATOR(public.=) b",
        "uses operator public.=: only pg_catalog's operators are accepted",
    );
    refuses("a OPERATOR(evil.+) 1", "uses operator evil.+");
    refuses(
        "a OPERATOR(public.=) ANY (ARRAY[1])",
        "uses operator public.=",
    );
}

#[test]
fn nextval_draws_only_from_the_replys_own_sequences() {
    refuses(
        "nextval('public.other_seq'::regclass)",
        "draws from sequence public.other_seq, which this reply does not create",
    );
    refuses(
        "nextval('pg_catalog.pg_class'::regclass)",
        "draws from sequence pg_catalog.pg_class",
    );
    refuses(
        "nextval(email)",
        "calls nextval with an argument other than",
    );
    refuses(
        "nextval('a.b.c')",
        "calls nextval with an argument other than",
    );
    refuses(
        "nextval('public.t_id_seq'::text)",
        "calls nextval with an argument",
    );
    refuses(
        "nextval('public.t_id_seq'::regclass, 1)",
        "calls nextval with an argument",
    );
    refuses(
        "nextval(('public.t_id_seq' || '')::regclass)",
        "calls nextval with an argument",
    );
    refuses(
        "public.nextval('public.t_id_seq'::regclass)",
        "calls function public.nextval",
    );
    // A sequence that the scope does not hold is refused even when the text is well formed.
    let empty = Scope::of_columns(["id"]);
    assert!(expression("nextval('public.t_id_seq'::regclass)", &empty).is_err());
}

#[test]
fn hostile_nesting_is_refused_without_a_crash() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    refuses(&deep, "nests deeper than the consumer reads");
    let calls = format!("{}1{}", "lower(".repeat(5_000), ")".repeat(5_000));
    refuses(&calls, "nests deeper than the consumer reads");
    let minus = "- ".repeat(10_000) + "1";
    refuses(&minus, "nests deeper than the consumer reads");
    let nots = "NOT ".repeat(10_000) + "true";
    refuses(&nots, "nests deeper than the consumer reads");
    let arrays = format!("ARRAY{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    refuses(&arrays, "nests deeper than the consumer reads");
    // Left-deep: the grammar builds it without nesting its own stack.
    let sums = "1".to_string() + &"+1".repeat(30_000);
    refuses(&sums, "nests deeper than the consumer reads");
    // Moderate nesting is read.
    let fine = format!("{}1{}", "(".repeat(30), ")".repeat(30));
    accepts(&fine, "1");
}

#[test]
fn hostile_nesting_is_refused_in_every_entry_point() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(constraint(&format!("CHECK ({deep})"), &scope()).is_err());
    assert!(partition_bound(&format!("FOR VALUES IN ({deep})")).is_err());
    assert!(partition_key(&format!("RANGE (({deep}))"), &scope()).is_err());
    assert!(index(
        &format!("CREATE INDEX x ON t USING btree (a) WHERE {deep}"),
        &scope()
    )
    .is_err());
    let sums = "1".to_string() + &"+1".repeat(20_000);
    assert!(constraint(&format!("CHECK ({sums} > 0)"), &scope()).is_err());
    // On a thread with a small stack, as an async runtime's workers have.
    let worker = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let sums = "1".to_string() + &"+1".repeat(30_000);
            expression(&sums, &scope()).is_err() && expression(&deep, &scope()).is_err()
        })
        .unwrap();
    assert!(worker.join().unwrap());
}

#[test]
fn over_long_text_is_refused_unparsed() {
    let long = format!("'{}'", "x".repeat(MAX_TEXT_BYTES));
    refuses(&long, "bytes long; the consumer reads at most 65536");
    assert!(type_name(&"a".repeat(MAX_TEXT_BYTES + 1)).is_err());
    assert!(constraint(&"x".repeat(MAX_TEXT_BYTES + 1), &scope()).is_err());
    assert!(index(&"x".repeat(MAX_TEXT_BYTES + 1), &scope()).is_err());
    assert!(partition_bound(&"x".repeat(MAX_TEXT_BYTES + 1)).is_err());
    // Just under the limit is read.
    let under = format!("'{}'", "x".repeat(MAX_TEXT_BYTES - 2));
    assert!(expression(&under, &scope()).is_ok());
}

#[test]
fn refusals_never_repeat_a_literal_value() {
    let secret = "123-45-6789";
    for text in [
        format!("pg_sleep('{secret}')"),
        format!("'{secret}"),
        format!("'{secret}' FROM x"),
        format!("'{secret}' +"),
        format!("lower('{secret}') OVER ()"),
        format!("nextval('{secret}')"),
        format!("(SELECT '{secret}')"),
        format!("E'{secret}\\"),
        format!("other.c = '{secret}'"),
        format!("'a\0{secret}'"),
    ] {
        let e = expression(&text, &scope()).unwrap_err();
        assert!(!e.to_string().contains(secret), "{text}: {e}");
        assert!(!e.to_string().contains("6789"), "{text}: {e}");
    }
    let e = constraint(
        &format!("CHECK (zip = '{secret}' AND pg_sleep(1))"),
        &scope(),
    )
    .unwrap_err();
    assert!(!e.to_string().contains(secret), "{e}");
    let e = partition_bound(&format!("FOR VALUES IN (lower('{secret}'))")).unwrap_err();
    assert!(!e.to_string().contains(secret), "{e}");
}

#[test]
fn a_nul_character_is_refused() {
    refuses("'a\0b'", "is not valid SQL");
    assert!(type_name("int\0eger").is_err());
}

// ---------------------------------------------------------------- accepted expressions

#[test]
fn defaults_postgres_deparses_are_rebuilt() {
    accepts(
        "nextval('public.t_id_seq'::regclass)",
        r#"pg_catalog.nextval('"public"."t_id_seq"'::pg_catalog.regclass)"#,
    );
    accepts("now()", "pg_catalog.now()");
    accepts("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP");
    accepts("CURRENT_TIMESTAMP(3)", "CURRENT_TIMESTAMP(3)");
    accepts("CURRENT_DATE", "CURRENT_DATE");
    accepts("LOCALTIMESTAMP(0)", "LOCALTIMESTAMP(0)");
    accepts("CURRENT_USER", "CURRENT_USER");
    accepts("SESSION_USER", "SESSION_USER");
    accepts("'active'::text", r#"CAST('active' AS "text")"#);
    accepts("'{}'::jsonb", r#"CAST('{}' AS "jsonb")"#);
    accepts("0", "0");
    accepts("(-1)", "(-1)");
    accepts("'-1'::integer", r#"CAST('-1' AS "pg_catalog"."int4")"#);
    accepts("gen_random_uuid()", "pg_catalog.gen_random_uuid()");
    accepts("true", "TRUE");
    accepts("NULL::text", r#"CAST(NULL AS "text")"#);
    accepts("1.5", "1.5");
    accepts("99999999999", "99999999999");
    accepts("(-1.5)", "(-1.5)");
    accepts("B'0101'", "B'0101'");
    accepts("X'1F'", "X'1F'");
    accepts("'0101'::\"bit\"", r#"CAST('0101' AS "bit")"#);
    accepts(
        "(now() + '1 day'::interval)",
        r#"(pg_catalog.now() + CAST('1 day' AS "pg_catalog"."interval"))"#,
    );
    accepts(
        "'new'::public.order_status",
        r#"CAST('new' AS "public"."order_status")"#,
    );
    accepts(
        "'{1,2}'::integer[]",
        r#"CAST('{1,2}' AS "pg_catalog"."int4"[])"#,
    );
    accepts("ARRAY[1, 2]", "ARRAY[1, 2]");
    accepts("ARRAY[]::text[]", r#"CAST(ARRAY[] AS "text"[])"#);
}

#[test]
fn nextval_names_are_read_as_regclass_reads_them() {
    accepts(
        r#"nextval('sales."Order Seq"'::regclass)"#,
        r#"pg_catalog.nextval('"sales"."Order Seq"'::pg_catalog.regclass)"#,
    );
    accepts(
        "nextval('PUBLIC.T_ID_SEQ'::pg_catalog.regclass)",
        r#"pg_catalog.nextval('"public"."t_id_seq"'::pg_catalog.regclass)"#,
    );
    // A bare name is read when exactly one sequence of the reply has it.
    accepts(
        "nextval('t_id_seq')",
        r#"pg_catalog.nextval('"public"."t_id_seq"'::pg_catalog.regclass)"#,
    );
}

#[test]
fn strings_are_requoted_so_they_read_the_same_under_any_setting() {
    accepts("'it''s'::text", r#"CAST('it''s' AS "text")"#);
    // A backslash is a character (standard_conforming_strings = on, the parser's default);
    // printed as an E'' literal it stays one character whatever the session's setting.
    accepts(r"'a\b'::text", r#"CAST(E'a\\b' AS "text")"#);
    accepts(r"E'a\\b'", r"E'a\\b'");
    accepts(r"E'it\'s'", "'it''s'");
    accepts("U&'d\\0061t\\+000061'", "'data'");
    accepts("$$dollar's$$", "'dollar''s'");
    accepts("$tag$x$$y$tag$", "'x$$y'");
    accepts("''", "''");
    accepts("'line\nbreak'", "'line\nbreak'");
}

#[test]
fn checks_postgres_deparses_are_rebuilt() {
    accepts_constraint(
        "CHECK ((price >= (0)::numeric))",
        r#"CHECK (("price" >= CAST(0 AS "pg_catalog"."numeric")))"#,
    );
    accepts_constraint(
        "CHECK ((status = ANY (ARRAY['a'::text, 'b'::text])))",
        r#"CHECK (("status" = ANY (ARRAY[CAST('a' AS "text"), CAST('b' AS "text")])))"#,
    );
    accepts_constraint(
        "CHECK ((char_length((code)::text) = 5))",
        r#"CHECK ((pg_catalog.char_length(CAST("code" AS "text")) = 5))"#,
    );
    accepts_constraint(
        "CHECK ((zip ~ '^[0-9]{5}$'::text))",
        r#"CHECK (("zip" ~ CAST('^[0-9]{5}$' AS "text")))"#,
    );
    accepts_constraint(
        "CHECK ((((n >= 0) AND (n <= 10)) AND (m <> 7))) NO INHERIT",
        r#"CHECK ((("n" >= 0) AND ("n" <= 10) AND ("m" <> 7))) NO INHERIT"#,
    );
    accepts_constraint(
        "CHECK ((price > (0)::numeric)) NOT VALID",
        r#"CHECK (("price" > CAST(0 AS "pg_catalog"."numeric"))) NOT VALID"#,
    );
}

#[test]
fn the_expression_kinds_postgres_deparses_are_rebuilt() {
    accepts(
        "(n IS DISTINCT FROM m) AND (NOT (n IS NOT DISTINCT FROM m))",
        r#"(("n" IS DISTINCT FROM "m") AND (NOT ("n" IS NOT DISTINCT FROM "m")))"#,
    );
    accepts(
        "CASE WHEN (n > 0) THEN 'p'::text WHEN (n < 0) THEN 'n'::text ELSE 'z'::text END",
        r#"(CASE WHEN ("n" > 0) THEN CAST('p' AS "text") WHEN ("n" < 0) THEN CAST('n' AS "text") ELSE CAST('z' AS "text") END)"#,
    );
    accepts(
        "CASE n WHEN 1 THEN 'one' END",
        r#"(CASE "n" WHEN 1 THEN 'one' END)"#,
    );
    accepts(
        "COALESCE(m, 0) >= '-5'::integer",
        r#"(COALESCE("m", 0) >= CAST('-5' AS "pg_catalog"."int4"))"#,
    );
    accepts(
        "NULLIF(n, 3) IS NOT NULL",
        r#"(NULLIF("n", 3) IS NOT NULL)"#,
    );
    accepts("flag IS TRUE", r#"("flag" IS TRUE)"#);
    accepts("flag IS NOT UNKNOWN", r#"("flag" IS NOT UNKNOWN)"#);
    accepts(
        "(GREATEST(n, m) < 100) OR (LEAST(n, m) > 0)",
        r#"((GREATEST("n", "m") < 100) OR (LEAST("n", "m") > 0))"#,
    );
    accepts(
        "email ~~ '%@%'::text",
        r#"("email" ~~ CAST('%@%' AS "text"))"#,
    );
    accepts("email LIKE '%@%'", r#"("email" ~~ '%@%')"#);
    accepts("email NOT ILIKE '%x'", r#"("email" !~~* '%x')"#);
    accepts(
        "(code)::text ~ similar_to_escape('[A-Z]+'::text)",
        r#"(CAST("code" AS "text") ~ pg_catalog.similar_to_escape(CAST('[A-Z]+' AS "text")))"#,
    );
    accepts(
        "code SIMILAR TO '[A-Z]+'",
        r#"("code" ~ pg_catalog.similar_to_escape('[A-Z]+'))"#,
    );
    accepts("n IN (1, 2, 3)", r#"("n" IN (1, 2, 3))"#);
    accepts("n NOT IN (7)", r#"("n" NOT IN (7))"#);
    accepts("n BETWEEN 0 AND 10", r#"("n" BETWEEN 0 AND 10)"#);
    accepts(
        "n NOT BETWEEN SYMMETRIC 5 AND 1",
        r#"("n" NOT BETWEEN SYMMETRIC 5 AND 1)"#,
    );
    accepts("n > ALL (ARRAY[1, 2])", r#"("n" > ALL (ARRAY[1, 2]))"#);
    accepts(
        "n OPERATOR(pg_catalog.+) 1",
        r#"("n" OPERATOR(pg_catalog.+) 1)"#,
    );
    accepts("- n", r#"(- "n")"#);
    accepts("n - -1", r#"("n" - (-1))"#);
    accepts("(doc ->> 'k'::text)", r#"("doc" ->> CAST('k' AS "text"))"#);
    accepts(
        "NOT (doc @> '{\"bad\": true}'::jsonb)",
        r#"(NOT ("doc" @> CAST('{"bad": true}' AS "jsonb")))"#,
    );
    accepts("arr[1]", r#"(("arr")[1])"#);
    accepts("arr[1:2]", r#"(("arr")[1:2])"#);
    accepts("arr[:2]", r#"(("arr")[:2])"#);
    accepts("(doc)['k']", r#"(("doc")['k'])"#);
    accepts("ROW(n, m) IS NOT NULL", r#"(ROW("n", "m") IS NOT NULL)"#);
    accepts(
        "(email COLLATE \"C\") > ''::text",
        r#"(("email" COLLATE "C") > CAST('' AS "text"))"#,
    );
    accepts(
        "email COLLATE pg_catalog.\"default\"",
        r#"("email" COLLATE "pg_catalog"."default")"#,
    );
    accepts(r#""Mixed Case" + 1"#, r#"("Mixed Case" + 1)"#);
    accepts(
        "ARRAY[ARRAY[1, 2], ARRAY[3, 4]]",
        "ARRAY[ARRAY[1, 2], ARRAY[3, 4]]",
    );
}

#[test]
fn sql_syntax_functions_are_rebuilt_as_the_calls_the_parser_made_of_them() {
    accepts(
        "EXTRACT(year FROM created_at) > (2000)::numeric",
        r#"(pg_catalog.extract('year', "created_at") > CAST(2000 AS "pg_catalog"."numeric"))"#,
    );
    accepts(
        "(created_at AT TIME ZONE 'UTC'::text)",
        r#"pg_catalog.timezone(CAST('UTC' AS "text"), "created_at")"#,
    );
    accepts(
        "SUBSTRING(email FROM 1 FOR 3)",
        r#"pg_catalog.substring("email", 1, 3)"#,
    );
    accepts(
        "POSITION(('@'::text) IN (email))",
        r#"pg_catalog.position("email", CAST('@' AS "text"))"#,
    );
    accepts(
        "TRIM(BOTH ' '::text FROM email)",
        r#"pg_catalog.btrim("email", CAST(' ' AS "text"))"#,
    );
    accepts(
        "date_trunc('day'::text, created_at)",
        r#"pg_catalog.date_trunc(CAST('day' AS "text"), "created_at")"#,
    );
    accepts(
        "to_tsvector('english'::regconfig, COALESCE(email, ''::text))",
        r#"pg_catalog.to_tsvector(CAST('english' AS "regconfig"), COALESCE("email", CAST('' AS "text")))"#,
    );
    accepts(
        "make_interval(days => 1)",
        r#"pg_catalog.make_interval("days" => 1)"#,
    );
    accepts("lower(email)", r#"pg_catalog.lower("email")"#);
    accepts(
        "pg_catalog.upper((email)::text)",
        r#"pg_catalog.upper(CAST("email" AS "text"))"#,
    );
}

#[test]
fn newer_sql_syntax_is_rebuilt_as_calls_too() {
    accepts(
        "email IS NFC NORMALIZED",
        r#"pg_catalog.is_normalized("email", 'NFC')"#,
    );
    accepts(
        "(created_at AT LOCAL)",
        r#"pg_catalog.timezone("created_at")"#,
    );
    accepts("CURRENT_TIME", "CURRENT_TIME");
    accepts(
        "n::numeric(10,-2)",
        r#"CAST("n" AS "pg_catalog"."numeric"(10, -2))"#,
    );
}

#[test]
fn domain_checks_use_value() {
    accepts_constraint_in(
        "CHECK ((VALUE > 0))",
        &Scope::of_domain(),
        r#"CHECK (("value" > 0))"#,
    );
    accepts_constraint_in(
        "CHECK ((VALUE ~ '^[0-9]{5}$'::text))",
        &Scope::of_domain(),
        r#"CHECK (("value" ~ CAST('^[0-9]{5}$' AS "text")))"#,
    );
    assert!(constraint("CHECK ((price > 0))", &Scope::of_domain()).is_err());
    // A domain's default has no column at all.
    assert_eq!(expression("1", &Scope::default()).as_deref(), Ok("1"));
    assert!(expression("value", &Scope::default()).is_err());
}

// ---------------------------------------------------------------- constraints

#[test]
fn keys_are_rebuilt() {
    accepts_constraint(
        "FOREIGN KEY (customer_id) REFERENCES public.customers(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
        r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"#,
    );
    accepts_constraint(
        "FOREIGN KEY (customer_id) REFERENCES public.customers(id) MATCH FULL ON UPDATE RESTRICT ON DELETE SET NULL (customer_id)",
        r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") MATCH FULL ON UPDATE RESTRICT ON DELETE SET NULL ("customer_id")"#,
    );
    accepts_constraint(
        "FOREIGN KEY (a, b) REFERENCES sales.orders(x, \"Y\") ON UPDATE CASCADE ON DELETE SET DEFAULT NOT VALID",
        r#"FOREIGN KEY ("a", "b") REFERENCES "sales"."orders" ("x", "Y") ON UPDATE CASCADE ON DELETE SET DEFAULT NOT VALID"#,
    );
    accepts_constraint(
        "FOREIGN KEY (a, PERIOD during) REFERENCES sales.orders (a, PERIOD during)",
        r#"FOREIGN KEY ("a", PERIOD "during") REFERENCES "sales"."orders" ("a", PERIOD "during")"#,
    );
    accepts_constraint("UNIQUE (a, b)", r#"UNIQUE ("a", "b")"#);
    accepts_constraint("PRIMARY KEY (id)", r#"PRIMARY KEY ("id")"#);
    accepts_constraint(
        "PRIMARY KEY (id) DEFERRABLE",
        r#"PRIMARY KEY ("id") DEFERRABLE"#,
    );
    accepts_constraint(
        "UNIQUE NULLS NOT DISTINCT (email, code) INCLUDE (zip)",
        r#"UNIQUE NULLS NOT DISTINCT ("email", "code") INCLUDE ("zip")"#,
    );
    accepts_constraint(
        "UNIQUE (a) WITH (fillfactor='70') USING INDEX TABLESPACE fast",
        r#"UNIQUE ("a") WITH ("fillfactor" = '70')"#,
    );
    accepts_constraint(
        "PRIMARY KEY (id, during WITHOUT OVERLAPS)",
        r#"PRIMARY KEY ("id", "during" WITHOUT OVERLAPS)"#,
    );
    accepts_constraint(
        "EXCLUDE USING gist (during WITH &&) WHERE ((status = 'paid'::public.order_status))",
        r#"EXCLUDE USING gist ("during" WITH &&) WHERE (("status" = CAST('paid' AS "public"."order_status")))"#,
    );
    accepts_constraint(
        "EXCLUDE USING gist (a WITH OPERATOR(pg_catalog.=), tstzrange(created_at, deleted_at) WITH &&) DEFERRABLE",
        r#"EXCLUDE USING gist ("a" WITH OPERATOR(pg_catalog.=), (pg_catalog.tstzrange("created_at", "deleted_at")) WITH &&) DEFERRABLE"#,
    );
}

#[test]
fn constraint_attributes_are_kept() {
    accepts_constraint(
        "FOREIGN KEY (customer_id) REFERENCES public.customers(id) NOT ENFORCED",
        r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") NOT ENFORCED"#,
    );
    accepts_constraint(
        "CHECK ((n > 0)) NOT ENFORCED",
        r#"CHECK (("n" > 0)) NOT ENFORCED"#,
    );
    accepts_constraint(
        "FOREIGN KEY (customer_id) REFERENCES public.customers",
        r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers""#,
    );
    // EXCLUDE without USING is btree, as the grammar says.
    accepts_constraint("EXCLUDE (a WITH =)", r#"EXCLUDE USING btree ("a" WITH =)"#);
    accepts_constraint(
        "CHECK ((n > 0)) NOT DEFERRABLE INITIALLY IMMEDIATE",
        r#"CHECK (("n" > 0))"#,
    );
}

#[test]
fn hostile_constraints_are_refused() {
    refuses_constraint(
        "CHECK ((lo_import('/etc/passwd') > 0))",
        "calls function pg_catalog.lo_import",
    );
    refuses_constraint(
        "CHECK ((price > 0)), ADD CONSTRAINT d CHECK ((pg_sleep(1) IS NULL))",
        "holds more than one subcommand",
    );
    refuses_constraint(
        "CHECK ((price > 0)), DROP COLUMN zip",
        "holds more than one subcommand",
    );
    refuses_constraint(
        "CHECK ((price > 0)); SELECT pg_sleep(1)",
        "is not one statement",
    );
    refuses_constraint("CHECK ((SELECT true))", "holds a subquery");
    refuses_constraint("CHECK ((other.price > 0))", "names other.price");
    refuses_constraint(
        "FOREIGN KEY (customer_id) REFERENCES public.secrets(id)",
        "references table public.secrets, which this reply does not create",
    );
    refuses_constraint(
        "FOREIGN KEY (customer_id) REFERENCES customers(id)",
        "references table customers without its schema",
    );
    refuses_constraint(
        "FOREIGN KEY (ssn) REFERENCES public.customers(id)",
        "names column ssn",
    );
    refuses_constraint("PRIMARY KEY (ssn)", "names column ssn");
    refuses_constraint("UNIQUE (a) INCLUDE (ssn)", "names column ssn");
    refuses_constraint(
        "EXCLUDE USING evil (during WITH &&)",
        "uses index method evil, which is not one of btree, hash, gist, gin, spgist, brin",
    );
    refuses_constraint(
        "EXCLUDE USING gist (during WITH OPERATOR(public.&&))",
        "uses operator public.&&",
    );
    refuses_constraint(
        "EXCLUDE USING gist ((public.f(during)) WITH &&)",
        "calls function public.f",
    );
    refuses_constraint(
        "EXCLUDE USING gist (during WITH &&) WHERE ((pg_sleep(1) IS NULL))",
        "pg_catalog.pg_sleep",
    );
    refuses_constraint(
        "PRIMARY KEY USING INDEX some_index",
        "that the consumer does not rebuild",
    );
    refuses_constraint(
        "NOT NULL id",
        "a constraint of a kind the consumer does not rebuild",
    );
    refuses_constraint("UNIQUE (a) WITH (\"a=b\"='1')", "sets storage parameter");
    refuses_constraint("CHECK ((price > 0)) NOT ENFORCED NOT", "is not valid SQL");
}

// ---------------------------------------------------------------- partitions

#[test]
fn partition_bounds_are_rebuilt() {
    accepts_bound(
        "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
        "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
    );
    accepts_bound(
        "FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00')",
        "FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00')",
    );
    accepts_bound("FOR VALUES IN ('a', 'b')", "FOR VALUES IN ('a', 'b')");
    accepts_bound("FOR VALUES IN ('de', NULL)", "FOR VALUES IN ('de', NULL)");
    accepts_bound(
        "FOR VALUES WITH (modulus 4, remainder 0)",
        "FOR VALUES WITH (MODULUS 4, REMAINDER 0)",
    );
    accepts_bound("DEFAULT", "DEFAULT");
    accepts_bound(
        "FOR VALUES FROM (MINVALUE) TO ('2025-01-01')",
        "FOR VALUES FROM (MINVALUE) TO ('2025-01-01')",
    );
    accepts_bound(
        "FOR VALUES FROM ('-10', MINVALUE) TO (10, MAXVALUE)",
        "FOR VALUES FROM ('-10', MINVALUE) TO (10, MAXVALUE)",
    );
    accepts_bound(
        "FOR VALUES FROM (-10) TO (- 5)",
        "FOR VALUES FROM ((-10)) TO ((-5))",
    );
    accepts_bound(
        "FOR VALUES IN ('2025-01-01'::date, true)",
        r#"FOR VALUES IN (CAST('2025-01-01' AS "date"), TRUE)"#,
    );
}

#[test]
fn hostile_partition_bounds_are_refused() {
    refuses_bound(
        "FOR VALUES IN ((pg_sleep(1))::text)",
        "is a partition bound that is not made of constants",
    );
    // Even an allow-listed function: a bound is evaluated at CREATE.
    refuses_bound(
        "FOR VALUES IN (lower('A'))",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (now())",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (CURRENT_DATE)",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES FROM ((SELECT 1)) TO (2)",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (1 + 1)",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (MINVALUE)",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (x)",
        "is a partition bound that is not made of constants",
    );
    refuses_bound(
        "FOR VALUES IN (1) PARTITION BY LIST (x)",
        "holds clauses besides the bound",
    );
    refuses_bound(
        "FOR VALUES IN (1) WITH (fillfactor = 10)",
        "holds clauses besides the bound",
    );
    refuses_bound("DEFAULT; DROP TABLE x", "is not one statement");
    refuses_bound(
        "FOR VALUES WITH (modulus 0, remainder 0)",
        "modulus and remainder do not fit",
    );
    refuses_bound("FOR VALUES WITH (modulus 4, remainder 4)", "do not fit");
}

#[test]
fn partition_keys_are_rebuilt() {
    accepts_key("RANGE (created_at)", r#"RANGE ("created_at")"#);
    accepts_key(
        "HASH (id, code text_pattern_ops)",
        r#"HASH ("id", "code" "text_pattern_ops")"#,
    );
    accepts_key(
        "LIST (lower(region))",
        r#"LIST ((pg_catalog.lower("region")))"#,
    );
    accepts_key(
        "RANGE (a COLLATE \"C\", ((n + m)))",
        r#"RANGE ("a" COLLATE "C", (("n" + "m")))"#,
    );
    accepts_key(
        "LIST (code pg_catalog.text_ops)",
        r#"LIST ("code" "pg_catalog"."text_ops")"#,
    );
}

#[test]
fn hostile_partition_keys_are_refused() {
    refuses_key("RANGE ((pg_sleep(1)))", "pg_catalog.pg_sleep");
    refuses_key("LIST (ssn)", "names column ssn");
    refuses_key(
        "RANGE (a public.evil_ops)",
        "uses operator class public.evil_ops",
    );
    refuses_key(
        "RANGE (a) WITH (fillfactor = 10)",
        "holds clauses besides the key",
    );
    refuses_key("RANGE (a); DROP TABLE t", "is not one statement");
}

// ---------------------------------------------------------------- indexes

#[test]
fn indexes_are_rebuilt_from_using_on() {
    accepts_index(
        "CREATE UNIQUE INDEX x ON public.t USING btree (lower((email)::text)) WHERE (deleted_at IS NULL)",
        true,
        r#"USING btree ((pg_catalog.lower(CAST("email" AS "text")))) WHERE ("deleted_at" IS NULL)"#,
    );
    accepts_index(
        "CREATE INDEX x ON ONLY public.t USING gin (doc jsonb_path_ops)",
        false,
        r#"USING gin ("doc" "jsonb_path_ops")"#,
    );
    accepts_index(
        "CREATE INDEX cust_multi ON public.customers USING btree (created_at DESC NULLS LAST, email COLLATE \"C\" text_pattern_ops) INCLUDE (zip) WITH (fillfactor='80')",
        false,
        r#"USING btree ("created_at" DESC NULLS LAST, "email" COLLATE "C" "text_pattern_ops") INCLUDE ("zip") WITH ("fillfactor" = '80')"#,
    );
    accepts_index(
        "CREATE INDEX x ON public.t USING btree (((doc ->> 'k'::text)), ((n + m)))",
        false,
        r#"USING btree ((("doc" ->> CAST('k' AS "text"))), (("n" + "m")))"#,
    );
    accepts_index(
        "CREATE UNIQUE INDEX x ON public.t USING btree (a, b) NULLS NOT DISTINCT",
        true,
        r#"USING btree ("a", "b") NULLS NOT DISTINCT"#,
    );
    accepts_index(
        "CREATE INDEX x ON public.t USING brin (created_at) WITH (pages_per_range='32')",
        false,
        r#"USING brin ("created_at") WITH ("pages_per_range" = '32')"#,
    );
    accepts_index(
        "CREATE INDEX x ON public.t USING hash (code)",
        false,
        r#"USING hash ("code")"#,
    );
    accepts_index(
        "CREATE INDEX x ON public.t USING gist (during) TABLESPACE fast",
        false,
        r#"USING gist ("during")"#,
    );
    accepts_index(
        "CREATE INDEX x ON public.t USING spgist (code ASC NULLS FIRST) WHERE flag",
        false,
        r#"USING spgist ("code" ASC NULLS FIRST) WHERE "flag""#,
    );
}

#[test]
fn the_caller_names_the_index_and_its_table() {
    let rebuilt = index(
        "CREATE UNIQUE INDEX \"evil\"\"name\" ON pg_catalog.pg_authid USING btree (id)",
        &scope(),
    )
    .unwrap();
    assert_eq!(
        rebuilt.create_statement("orders_id_idx", &TableRef::new("sales", "orders")),
        r#"CREATE UNIQUE INDEX "orders_id_idx" ON "sales"."orders" USING btree ("id")"#
    );
}

#[test]
fn hostile_indexes_are_refused() {
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a) WHERE (a IN (SELECT 1))",
        "holds a subquery",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree ((public.dblink('h', 'select 1')))",
        "calls function public.dblink",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree ((dblink_exec('drop table t')))",
        "calls function pg_catalog.dblink_exec",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a) WHERE (pg_sleep(1) IS NULL)",
        "pg_catalog.pg_sleep",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING evil_am (a)",
        "uses index method evil_am",
    );
    refuses_index(
        "CREATE INDEX CONCURRENTLY x ON public.t USING btree (a)",
        "holds clauses the consumer does not rebuild",
    );
    refuses_index(
        "CREATE INDEX IF NOT EXISTS x ON public.t USING btree (a)",
        "holds clauses the consumer does not rebuild",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a); DROP TABLE public.t",
        "is not one statement",
    );
    refuses_index("DROP TABLE public.t", "is not CREATE INDEX");
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a public.evil_ops)",
        "uses operator class public.evil_ops",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING gist (a gist_trgm_ops (siglen='32'))",
        "operator class options",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (ssn)",
        "names column ssn",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a) INCLUDE (ssn)",
        "names column ssn",
    );
    refuses_index(
        "CREATE INDEX x ON public.t USING btree (a) WITH (toast.x = 1)",
        "sets storage parameter",
    );
}

// ---------------------------------------------------------------- types and collations

#[test]
fn type_names_are_rebuilt() {
    accepts_type("character varying(20)", r#""pg_catalog"."varchar"(20)"#);
    accepts_type("numeric(10,2)", r#""pg_catalog"."numeric"(10, 2)"#);
    accepts_type("timestamp with time zone", r#""pg_catalog"."timestamptz""#);
    accepts_type(
        "timestamp(3) without time zone",
        r#""pg_catalog"."timestamp"(3)"#,
    );
    accepts_type("integer[]", r#""pg_catalog"."int4"[]"#);
    accepts_type("integer[3][]", r#""pg_catalog"."int4"[3][]"#);
    accepts_type("public.order_status", r#""public"."order_status""#);
    accepts_type("sales.\"Mood\"[]", r#""sales"."Mood"[]"#);
    accepts_type("\"char\"", r#""char""#);
    accepts_type("character(1)", r#""pg_catalog"."bpchar"(1)"#);
    accepts_type("bit varying(8)", r#""pg_catalog"."varbit"(8)"#);
    accepts_type("interval", r#""pg_catalog"."interval""#);
    accepts_type(
        "interval day to second(3)",
        r#""pg_catalog"."interval"(7176, 3)"#,
    );
    accepts_type("double precision", r#""pg_catalog"."float8""#);
    accepts_type("text", r#""text""#);
    accepts_type("jsonb", r#""jsonb""#);
    accepts_type("numeric(10,-2)", r#""pg_catalog"."numeric"(10, -2)"#);
}

#[test]
fn hostile_type_names_are_refused() {
    refuses_type("integer; DROP TABLE x", "is not one statement");
    refuses_type(
        "integer FROM pg_authid",
        "holds clauses besides the expression",
    );
    refuses_type("integer, pg_sleep(1)", "holds more than one expression");
    refuses_type("integer = NULL", "it is not only a type name");
    refuses_type("int COLLATE \"C\"", "it is not only a type name");
    refuses_type("t.col%TYPE", "is not exactly one type name");
    refuses_type("SETOF integer", "names a SETOF type");
    refuses_type(
        "numeric(pg_sleep(1))",
        "type modifier that is not an integer",
    );
    refuses_type("numeric(x)", "type modifier that is not an integer");
    refuses_type("a.b.c", "more parts than schema and name");
    refuses_type("", "is not valid SQL");
}

#[test]
fn collations_are_rebuilt() {
    assert_eq!(
        collation("pg_catalog.\"C\"").as_deref(),
        Ok(r#""pg_catalog"."C""#)
    );
    assert_eq!(
        collation("public.\"de_DE\"").as_deref(),
        Ok(r#""public"."de_DE""#)
    );
    assert_eq!(collation("\"default\"").as_deref(), Ok(r#""default""#));
    assert!(collation("\"C\"; DROP TABLE x").is_err());
    assert!(collation("\"C\" || pg_sleep(1)").is_err());
    assert!(collation("\"C\" FROM pg_authid").is_err());
    assert!(collation("a.b.c").is_err());
}

// ---------------------------------------------------------------- the lists and the printer

#[test]
fn the_function_allow_list_is_sorted_and_holds_no_dangerous_name() {
    assert!(
        ALLOWED_FUNCTIONS.windows(2).all(|w| w[0] < w[1]),
        "ALLOWED_FUNCTIONS must be sorted and without duplicates"
    );
    for f in ALLOWED_FUNCTIONS {
        assert!(crate::functions::allowed(f).is_some(), "{f}");
        for bad in [
            "lo_", "pg_", "set_", "xml", "dblink", "txid", "current", "query", "advisory",
            "nextval", "currval", "lastval",
        ] {
            assert!(!f.starts_with(bad), "{f} looks dangerous");
        }
        for bad in [
            "setval",
            "setseed",
            "repeat",
            "array_fill",
            "to_regclass",
            "version",
        ] {
            assert_ne!(*f, bad, "{f} is dangerous");
        }
    }
    assert!(crate::functions::allowed("pg_sleep").is_none());
}

#[test]
fn the_node_and_method_lists_are_what_the_docs_say() {
    assert_eq!(
        INDEX_METHODS,
        ["btree", "hash", "gist", "gin", "spgist", "brin"]
    );
    for kind in ["A_Const", "FuncCall", "A_Indirection", "SQLValueFunction"] {
        assert!(ALLOWED_NODE_KINDS.contains(&kind));
    }
    assert!(!ALLOWED_NODE_KINDS.contains(&"SubLink"));
}

#[test]
fn regclass_names_are_split_as_postgres_splits_them() {
    use crate::expr::relation_name;
    let v = |parts: &[&str]| Some(parts.iter().map(|p| p.to_string()).collect::<Vec<_>>());
    assert_eq!(relation_name("public.t_id_seq"), v(&["public", "t_id_seq"]));
    assert_eq!(relation_name("Public.T"), v(&["public", "t"]));
    assert_eq!(
        relation_name(r#""My ""S"""."x y""#),
        v(&["My \"S\"", "x y"])
    );
    assert_eq!(relation_name(" a . b "), v(&["a", "b"]));
    assert_eq!(relation_name("seq"), v(&["seq"]));
    assert_eq!(relation_name("a.b.c"), None);
    assert_eq!(relation_name("a;b"), None);
    assert_eq!(relation_name(""), None);
    assert_eq!(relation_name("\"unclosed"), None);
    assert_eq!(relation_name("1abc"), None);
    assert_eq!(relation_name("a."), None);
}

/// Every accepted case of this file, with each prefix, and each one with a hostile character
/// inserted at each place: nothing panics, and whatever is accepted rebuilds to itself.
#[test]
fn mangled_inputs_never_panic_and_accepted_ones_are_idempotent() {
    let texts = [
        "nextval('public.t_id_seq'::regclass)",
        "CHECK ((status = ANY (ARRAY['a'::text, 'b'::text])))",
        "(now() + '1 day'::interval)",
        "CASE WHEN (n > 0) THEN 'p'::text ELSE 'z' END",
        "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
        "CREATE UNIQUE INDEX x ON public.t USING btree (lower((email)::text)) WHERE (deleted_at IS NULL)",
        "FOREIGN KEY (customer_id) REFERENCES public.customers(id) ON DELETE CASCADE",
        "RANGE (created_at)",
        "character varying(20)[]",
        "arr[1:2]",
    ];
    let s = scope();
    let mut checked = 0;
    for text in texts {
        let chars: Vec<char> = text.chars().collect();
        let mut variants = Vec::new();
        for cut in 0..=chars.len() {
            variants.push(chars[..cut].iter().collect::<String>());
            for insert in [
                "'", "\"", ")", "(", ";", "--", "/*", "$$", "\\", ",", "[", "E'",
            ] {
                let mut v: String = chars[..cut].iter().collect();
                v.push_str(insert);
                v.extend(&chars[cut..]);
                variants.push(v);
            }
        }
        for v in variants {
            checked += 1;
            if let Ok(sql) = expression(&v, &s) {
                assert_eq!(expression(&sql, &s).as_deref(), Ok(sql.as_str()), "{v}");
            }
            if let Ok(sql) = constraint(&v, &s) {
                assert_eq!(constraint(&sql, &s).as_deref(), Ok(sql.as_str()), "{v}");
            }
            if let Ok(sql) = partition_bound(&v) {
                assert_eq!(partition_bound(&sql).as_deref(), Ok(sql.as_str()), "{v}");
            }
            if let Ok(sql) = partition_key(&v, &s) {
                assert_eq!(partition_key(&sql, &s).as_deref(), Ok(sql.as_str()), "{v}");
            }
            if let Ok(sql) = type_name(&v) {
                assert_eq!(type_name(&sql).as_deref(), Ok(sql.as_str()), "{v}");
            }
            let _ = collation(&v);
            if let Ok(i) = index(&v, &s) {
                let statement = i.create_statement("x", &TableRef::new("public", "t"));
                assert_eq!(index(&statement, &s), Ok(i), "{v}");
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
}
