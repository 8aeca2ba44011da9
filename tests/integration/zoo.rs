//! The schema zoo (tests/fixtures/zoo): every shape of table a real schema has, in two schemas,
//! synced through the bus and checked column by column against the policy applied to the
//! source; then changed and synced again. And `policy check` on the shapes the sync refuses.

use crate::support::*;
use maskbus_mask::{Policy, PseudonymKey};
use maskbus_pg::tokio_postgres::Client;
use maskbus_pg::{Database, TableRef};

pub(crate) const SCHEMA: &str = include_str!("../fixtures/zoo/schema.sql");
pub(crate) const DATA: &str = include_str!("../fixtures/zoo/data.sql");
pub(crate) const POLICY_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/zoo/policy.toml"
);

pub(crate) fn zoo_policy() -> Policy {
    let text = std::fs::read_to_string(POLICY_PATH).unwrap();
    Policy::from_toml(POLICY_PATH, &text)
        .unwrap()
        .with_key(PseudonymKey::new(TEST_KEY.as_bytes()))
}

/// A connection that prints values the way the producer reads them (ISO dates, UTC, ...).
pub(crate) async fn canonical(url: &str) -> Client {
    let mut target = Database::parse("test", url).unwrap();
    target.config.options(maskbus_pg::READ_ONLY_CANONICAL);
    target.connect().await.unwrap()
}

/// Every table of `policy`: the target equals the source with the policy applied, row by row and
/// column by column, in key order. Returns the rows compared.
pub(crate) async fn assert_target_is_masked_source_by(
    dbs: &TestDatabases,
    policy: &Policy,
) -> usize {
    // Whatever a bulk load lifted is back, validated, exactly as the schema defines it.
    assert_eq!(
        schema_objects(&dbs.url("dst")).await,
        schema_objects(&dbs.url("src")).await
    );
    assert_eq!(lifted_count(&dbs.url("dst")).await, 0);
    let src = canonical(&dbs.url("src")).await;
    let dst = canonical(&dbs.url("dst")).await;
    let mut compared = 0;
    for (entity, rules) in policy.entities() {
        let table = TableRef::parse(entity);
        let source_target = Database::parse("source", &dbs.url("src")).unwrap();
        let info = maskbus_pg::catalog::table(&source_target, &src, &table)
            .await
            .unwrap()
            .unwrap();
        let key = info.key(policy.key_columns(entity)).unwrap();
        let columns: Vec<String> = rules.columns().map(|(c, _)| c.to_string()).collect();
        let select = format!(
            "SELECT {} FROM {} t ORDER BY {}",
            maskbus_pg::statements::select_text(&columns),
            table.sql(),
            maskbus_pg::statements::key_row(&key, "t")
        );
        let shapes = columns
            .iter()
            .map(|c| {
                info.column(c).map_or_else(Default::default, |c| {
                    maskbus_mask::CellShape::of(&c.data_type, c.max_length)
                })
            })
            .collect();
        let masker = policy.masker(entity, &columns).unwrap().with_shapes(shapes);
        let expected: Vec<Vec<Option<String>>> = src
            .query(&select, &[])
            .await
            .unwrap()
            .iter()
            .map(|r| {
                masker
                    .mask((0..columns.len()).map(|i| r.get(i)).collect())
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        let actual: Vec<Vec<Option<String>>> = dst
            .query(&select, &[])
            .await
            .unwrap()
            .iter()
            .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
            .collect();
        // A table without a key (synced whole, as a multiset) has no order both sides share:
        // its rows are compared sorted.
        let (mut actual, mut expected) = (actual, expected);
        if key.is_keyless() {
            actual.sort();
            expected.sort();
        }
        assert_eq!(actual.len(), expected.len(), "{entity}: row counts differ");
        for (a, e) in actual.iter().zip(&expected) {
            for ((column, a), e) in columns.iter().zip(a).zip(e) {
                // JSON compares as documents: jsonb prints its own spacing and key order.
                let as_json = |v: &Option<String>| {
                    v.as_deref()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
                };
                if a != e && as_json(a).is_some() && as_json(a) == as_json(e) {
                    continue;
                }
                assert_eq!(
                    a, e,
                    "{entity}.{column}: the target differs from the masked source"
                );
            }
        }
        compared += actual.len();
    }
    compared
}

/// The wire audit over the bus, with the exact match over the source's real values (source and
/// policy from the producer's config): no finding.
pub(crate) fn assert_audit_clean(dbs: &TestDatabases, producer_config: &str) {
    let audit = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--config",
        producer_config,
    ]);
    assert_eq!(audit.code, 0, "{}\n{}", audit.stdout, audit.stderr);
    assert!(audit.stdout.contains(": 0 findings"), "{}", audit.stdout);
    assert!(audit.stderr.contains("exact match:"), "{}", audit.stderr);
}

fn synced_rows(run: &Run) -> u64 {
    run.stdout
        .trim()
        .strip_prefix("synced ")
        .and_then(|s| s.strip_suffix(" rows"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no 'synced N rows' in {:?}", run.stdout))
}

/// The test databases' URLs, every agent as the cluster's own user.
pub(crate) fn zoo_urls(dbs: &TestDatabases) -> AgentUrls {
    AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: dbs.url("src"),
        target: dbs.url("dst"),
    }
}

/// The zoo in a source, its empty schema in a target, a bus, and agent configs (the consumer's
/// with `consumer_extra`).
pub(crate) async fn zoo(
    test: &str,
    consumer_extra: &str,
) -> (TestDatabases, ConfigFiles, String, String) {
    zoo_with(test, "", consumer_extra).await
}

/// [`zoo`] with extra lines in the producer's config too.
pub(crate) async fn zoo_with(
    test: &str,
    producer_extra: &str,
    consumer_extra: &str,
) -> (TestDatabases, ConfigFiles, String, String) {
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(SCHEMA).await.unwrap();
    src.batch_execute(DATA).await.unwrap();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(SCHEMA)
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let (producer, consumer) = write_agent_configs(
        &files,
        &zoo_urls(&dbs),
        &format!("policy = \"{POLICY_PATH}\"\n{producer_extra}"),
        &format!("all_or_nothing = true\n{consumer_extra}"),
    );
    (dbs, files, producer, consumer)
}

#[tokio::test]
async fn the_schema_zoo_syncs_exactly_first_pass_and_delta() {
    let (dbs, _files, producer, consumer) = zoo("zoo", "").await;
    let src = connect(&dbs.url("src")).await;
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        POLICY_PATH,
    ])
    .success();
    assert!(
        check.stdout.contains(" 0 errors, 0 warnings"),
        "{}",
        check.stdout
    );

    let _producer = Background::spawn(&["run", "--config", &producer]);
    let first = maskbus(&["run", "--config", &consumer, "--once"]).success();
    let policy = zoo_policy();
    let compared = assert_target_is_masked_source_by(&dbs, &policy).await;
    assert_eq!(synced_rows(&first) as usize, compared);
    assert!(compared > 20_000, "{compared}");

    // The wire audit, with the exact match over the zoo's real values (source and policy from
    // the producer's config), finds nothing on a correctly masked sync of a schema not the bank.
    assert_audit_clean(&dbs, &producer);

    let dst = connect(&dbs.url("dst")).await;
    // The deferred links were set: the 10,000-deep chain and the cycles are whole.
    let chain: i64 = dst
        .query_one(
            "WITH RECURSIVE up(id, depth) AS (SELECT id, 1 FROM zoo.staff WHERE id = 1
               UNION ALL SELECT s.manager_id, depth + 1 FROM up JOIN zoo.staff s ON s.id = up.id WHERE s.manager_id IS NOT NULL)
             SELECT max(depth)::bigint FROM up",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(chain, 10_000);
    let pending: i64 = dst
        .query_one("SELECT count(*) FROM maskbus.pending_links", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(pending, 0);
    // Free text: the SSN inside the note is replaced, the words around it kept.
    let note: String = dst
        .query_one("SELECT note FROM zoo.keepers WHERE id = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(note, "called about SSN ###-##-####");
    // JSON: the email by its path, every other string leaf scrubbed, the rest intact.
    let contact: serde_json::Value = dst
        .query_one("SELECT contact::text FROM zoo.keepers WHERE id = 1", &[])
        .await
        .unwrap()
        .get::<_, String>(0)
        .parse()
        .unwrap();
    assert_eq!(contact["email"], "k***@zoo-mail.org");
    assert_eq!(contact["phones"][0], "(###) ###-####");
    assert_eq!(contact["emergency"]["note"], "SSN ###-##-####");
    assert_eq!(contact["emergency"]["name"], "Kin 1");
    assert_eq!(contact["shifts"], 1);
    // The generated column was computed by the target from the masked name.
    let upper: String = dst
        .query_one("SELECT name_upper FROM zoo.staff WHERE id = 7", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(upper, "S***");
    // Sequences and identities were moved past the synced keys: the target's own inserts work.
    dst.batch_execute(
        "INSERT INTO zoo.keepers (name) VALUES ('mine'); INSERT INTO zoo.staff (name) VALUES ('mine');
         DELETE FROM zoo.keepers WHERE name = 'mine'; DELETE FROM zoo.staff WHERE name = 'mine';",
    )
    .await
    .unwrap();

    // Change the source: new rows, updates of kept and masked columns, new links in and out of
    // cycles, rows in both partitions, a row in the policy-keyed table.
    src.batch_execute(
        "INSERT INTO zoo.keepers (name, email, ssn, note) VALUES ('New Keeper', 'new@zoo-mail.org', '321-54-9876', 'fresh');
         UPDATE zoo.keepers SET email = 'changed' || id || '@zoo-mail.org', tags = ARRAY['x'] WHERE id IN (2, 3, 4);
         UPDATE zoo.species SET latin = 'Renamed' WHERE code = 'émeu';
         INSERT INTO zoo.staff (manager_id, name) VALUES (NULL, 'new boss');
         UPDATE zoo.staff SET manager_id = (SELECT max(id) FROM zoo.staff) WHERE id = 10000;
         UPDATE zoo.enclosures SET head_caretaker_id = NULL WHERE id = 1;
         UPDATE zoo.enclosures SET head_caretaker_id = 7 WHERE id = 5;
         INSERT INTO zoo.events VALUES (5001, '2025-02-02', 'new', NULL), (5002, '2026-02-02', 'new', NULL);
         INSERT INTO zoo.visits VALUES ('T-new', '2025-05-05', 'someone@example.org');
         UPDATE zoo.visits SET visitor_email = 'other@example.org' WHERE ticket = 'T-1' AND day = '2025-03-01';",
    )
    .await
    .unwrap();
    src.batch_execute(
        "BEGIN; SET CONSTRAINTS ALL DEFERRED;
         INSERT INTO zoo.nests VALUES (2001, 2001); INSERT INTO zoo.eggs VALUES (2001, 2001);
         COMMIT;",
    )
    .await
    .unwrap();
    let delta = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source_by(&dbs, &policy).await;
    let moved = synced_rows(&delta);
    // Only the changed rows move (the update of T-1 touches one row of the keyless table).
    assert!((12..=20).contains(&moved), "the delta moved {moved} rows");
}

#[tokio::test]
async fn kill_9_while_links_are_staged_then_a_restart_finishes_the_zoo_exactly() {
    let (dbs, _files, producer, consumer) =
        zoo("zoo_kill", "page_size = 50\npages_per_request = 1").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let mut doomed = Background::spawn(&["run", "--config", &consumer, "--once"]);
    let dst = connect(&dbs.url("dst")).await;
    // zoo.staff's manager links are staged while its 10,000 rows land, and set after the pass.
    wait_until("the consumer to be inside the staff chain", || async {
        let ready: bool = dst
            .query_one(
                "SELECT to_regclass('maskbus.pending_links') IS NOT NULL",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        ready
            && dst
                .query_one("SELECT count(*) FROM maskbus.pending_links", &[])
                .await
                .unwrap()
                .get::<_, i64>(0)
                >= 1000
    })
    .await;
    doomed.kill9();
    // The first pass loads the empty tables in bulk: their indexes and foreign keys are off.
    assert!(lifted_count(&dbs.url("dst")).await > 0);
    let linked: i64 = dst
        .query_one(
            "SELECT count(*) FROM zoo.staff WHERE manager_id IS NOT NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(linked < 9_999, "the kill came before the links were set");
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source_by(&dbs, &zoo_policy()).await;
    let pending: i64 = dst
        .query_one("SELECT count(*) FROM maskbus.pending_links", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(pending, 0);
}

/// Runs `policy check` on a source holding `ddl` with a policy for it; returns the output.
async fn check_shape(test: &str, ddl: &str, policy: &str) -> Run {
    let dbs = TestDatabases::create(test, &["src"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(ddl)
        .await
        .unwrap();
    let files = ConfigFiles::new(test);
    let path = files.write("policy.toml", policy);
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &path,
    ])
}

#[tokio::test]
async fn policy_check_is_red_precisely_on_each_unsupported_shape() {
    let cases = [
        (
            "jsonkey",
            "CREATE TABLE docs (body json NOT NULL, n int);",
            "[docs]\nbody = \"keep\"\nn = \"keep\"\n[maskbus.keys]\ndocs = [\"body\"]",
            "key column body is of type json, which has no btree ordering",
        ),
        (
            "cycle",
            "CREATE TABLE a (id int PRIMARY KEY, b_id int NOT NULL);
             CREATE TABLE b (id int PRIMARY KEY, a_id int NOT NULL REFERENCES a);
             ALTER TABLE a ADD CONSTRAINT a_to_b FOREIGN KEY (b_id) REFERENCES b;
             CREATE TABLE c (id int PRIMARY KEY, a_id int REFERENCES a);",
            "[a]\nid = \"keep\"\nb_id = \"keep\"\n[b]\nid = \"keep\"\na_id = \"keep\"\n[c]\nid = \"keep\"\na_id = \"keep\"",
            "cycle that cannot be broken among public.a, public.b: every one of its constraints (a_to_b on public.a, b_a_id_fkey on public.b) is NOT NULL and not DEFERRABLE",
        ),
        (
            "outside",
            "CREATE TABLE parent (id int PRIMARY KEY);
             CREATE TABLE child (id int PRIMARY KEY, parent_id int REFERENCES parent);",
            "[child]\nid = \"keep\"\nparent_id = \"keep\"",
            "foreign key child_parent_id_fkey references public.parent, which the policy does not serve",
        ),
        (
            "maskedkey",
            "CREATE TABLE people (email text PRIMARY KEY);",
            "[people]\nemail = { pseudonym = \"email\" }",
            "key column email has rule pseudonym email",
        ),
        (
            "keptpii",
            "CREATE TABLE notes (id int PRIMARY KEY, body text);
             INSERT INTO notes SELECT i, 'write to person' || i || '@gmail.com' FROM generate_series(1, 50) i;",
            "[notes]\nid = \"keep\"\nbody = \"keep\"",
            "public.notes | body | text | keep | **ERROR**: keep on a column whose values look like PII (50 of 50 sampled values look like email)",
        ),
        (
            "dupkey",
            "CREATE TABLE d (a int NOT NULL, b int NOT NULL); INSERT INTO d VALUES (1, 1), (1, 2);",
            "[d]\na = \"keep\"\nb = \"keep\"\n[maskbus.keys]\nd = [\"a\"]",
            "rows of public.d share a value of the key (a) named in [maskbus.keys]",
        ),
        (
            "nullkeyed",
            "CREATE TABLE w (a int, b int);",
            "[w]\na = \"keep\"\nb = \"keep\"\n[maskbus.keys]\nw = [\"a\"]",
            "key column a is nullable",
        ),
    ];
    for (test, ddl, policy, needle) in cases {
        let run = check_shape(test, ddl, policy).await;
        assert_eq!(
            run.code, 1,
            "{test}: policy check must fail\n{}",
            run.stdout
        );
        assert!(
            run.stdout.contains(needle),
            "{test}: expected {needle:?} in\n{}",
            run.stdout
        );
    }
    // A table without a key syncs whole, as a multiset (issue 54): green.
    let run = check_shape(
        "nokey",
        "CREATE TABLE logs (line text, at timestamptz);",
        "[logs]\nline = \"keep\"\nat = \"keep\"",
    )
    .await;
    assert_eq!(run.code, 0, "nokey: {}", run.stdout);
    // The same cycle made syncable, by a nullable link or a deferrable one, is green.
    for (test, b_id) in [("nullable", "int"), ("deferrable", "int NOT NULL")] {
        let run = check_shape(
            test,
            &format!(
                "CREATE TABLE a (id int PRIMARY KEY, b_id {b_id});
                 CREATE TABLE b (id int PRIMARY KEY, a_id int NOT NULL REFERENCES a);
                 ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b DEFERRABLE;"
            ),
            "[a]\nid = \"keep\"\nb_id = \"keep\"\n[b]\nid = \"keep\"\na_id = \"keep\"",
        )
        .await;
        assert_eq!(run.code, 0, "{test}: {}", run.stdout);
    }
}

#[tokio::test]
async fn a_table_that_cannot_sync_fails_fast_by_name_and_the_others_still_sync() {
    let dbs = TestDatabases::create("partial", &["src", "dst", "bus"]).await;
    // The target differs from the source the way drifted schemas do: a column type, and a
    // foreign key to a table the policy leaves out.
    let ddl = |n_type: &str, orphan_fk: &str| {
        format!(
            "CREATE SCHEMA shop;
             CREATE TABLE shop.good (id int PRIMARY KEY, label text);
             CREATE TABLE shop.bad (id int PRIMARY KEY, n {n_type});
             CREATE TABLE shop.bad_child (id int PRIMARY KEY, bad_id int REFERENCES shop.bad);
             CREATE TABLE shop.outside (id int PRIMARY KEY);
             CREATE TABLE shop.orphan (id int PRIMARY KEY, outside_id int {orphan_fk});"
        )
    };
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(&ddl("text", "")).await.unwrap();
    src.batch_execute(
        "INSERT INTO shop.good SELECT i, 'g' || i FROM generate_series(1, 300) i;
         INSERT INTO shop.bad VALUES (1, 'not a number');
         INSERT INTO shop.bad_child VALUES (1, 1);
         INSERT INTO shop.outside VALUES (1);
         INSERT INTO shop.orphan VALUES (1, 1);",
    )
    .await
    .unwrap();
    // The target's column is an integer: the value cannot be cast, for good.
    connect(&dbs.url("dst"))
        .await
        .batch_execute(&ddl("integer", "REFERENCES shop.outside"))
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("partial");
    let policy = files.write(
        "policy.toml",
        "[shop.good]\nid = \"keep\"\nlabel = \"keep\"\n[shop.bad]\nid = \"keep\"\nn = \"keep\"\n\
         [shop.bad_child]\nid = \"keep\"\nbad_id = \"keep\"\n[shop.orphan]\nid = \"keep\"\noutside_id = \"keep\"\n",
    );
    let producer = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{policy}\"\n",
            dbs.url("bus"),
            dbs.url("src")
        ),
    );
    let consumer_config = |extra: &str| {
        format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\n{extra}",
            dbs.url("bus"),
            writer_url(&dbs.url("dst"))
        )
    };
    let strict = files.write("strict.toml", &consumer_config("all_or_nothing = true\n"));
    let lenient = files.write("lenient.toml", &consumer_config(""));
    let _producer = Background::spawn(&["run", "--config", &producer]);

    // All or nothing: the first permanent error stops the run, at once, naming the table.
    let run = maskbus(&["run", "--config", &strict, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Whichever of the two broken tables the fill order reaches first is named, with its reason.
    let bad_named = run.stderr.contains("shop.bad")
        && run.stderr.contains("invalid input syntax for type integer");
    let orphan_named = run
        .stderr
        .contains("foreign key orphan_outside_id_fkey references shop.outside");
    assert!(bad_named || orphan_named, "{}", run.stderr);
    // Retries log a warning each ("transient failure; retrying"): a permanent error has none.
    assert!(
        !run.stderr.contains("transient"),
        "a permanent error is not retried: {}",
        run.stderr
    );

    // By default the others sync; the exit code says some did not.
    let run = maskbus(&["run", "--config", &lenient, "--once"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("3 of 4 tables could not be synced"),
        "{}",
        run.stderr
    );
    // A foreign key to a table left out of the policy is named, with its parent, not retried.
    assert!(
        run.stderr
            .contains("foreign key orphan_outside_id_fkey references shop.outside"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("shop.bad_child (its parent shop.bad could not be synced)"),
        "{}",
        run.stderr
    );
    let dst = connect(&dbs.url("dst")).await;
    let good: i64 = dst
        .query_one("SELECT count(*) FROM shop.good", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(good, 300);
}

/// `policy init` on `dbs`' source, then check, sync and audit with the policy it wrote.
pub(crate) async fn init_check_sync_audit(
    dbs: &TestDatabases,
    test: &str,
    schemas: &[&str],
) -> String {
    let files = ConfigFiles::new(test);
    let policy = files.write("policy.toml", "");
    let src = dbs.url("src");
    let mut args = vec!["policy", "init", "--source", &src];
    for schema in schemas {
        args.push("--schema");
        args.push(schema);
    }
    args.push("--output");
    args.push(&policy);
    maskbus(&args).success();
    let written = std::fs::read_to_string(&policy).unwrap();
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &policy,
    ]);
    assert_eq!(
        check.code, 0,
        "policy init wrote a policy that does not check:\n{written}\n{}",
        check.stdout
    );
    let (producer, consumer) = write_agent_configs(
        &files,
        &zoo_urls(dbs),
        &format!("policy = \"{policy}\""),
        "all_or_nothing = true",
    );
    let producer_run = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    drop(producer_run);
    assert_audit_clean(dbs, &producer);
    let text = std::fs::read_to_string(&policy).unwrap();
    let policy = maskbus_mask::Policy::from_toml("init", &text)
        .unwrap()
        .with_key(PseudonymKey::new(TEST_KEY.as_bytes()));
    assert_target_is_masked_source_by(dbs, &policy).await;
    text
}

#[tokio::test]
async fn policy_init_on_the_zoo_checks_syncs_and_audits_clean() {
    let (dbs, _files, _producer, _consumer) = zoo("zoo_init", "").await;
    let policy = init_check_sync_audit(&dbs, "zoo_init", &["zoo", "annex"]).await;
    // It judged what a reviewer would: free text about a keeper (a person) redacted, the
    // keyless table's key.
    assert!(policy.contains("note         = \"redact\""), "{policy}");
    assert!(
        policy.contains("\"zoo.visits\" = [\"ticket\", \"day\"]"),
        "{policy}"
    );
}

#[tokio::test]
async fn policy_init_on_the_bank_checks_syncs_and_audits_clean() {
    let dbs = seeded("bank_init", "30").await;
    let policy = init_check_sync_audit(&dbs, "bank_init", &[]).await;
    assert!(policy.contains("ssn           = \"ssn\""), "{policy}");
    assert!(policy.contains("card_number = \"card\""), "{policy}");
}

/// The catalog names a column's type and length as `information_schema.columns` does (it
/// computes them from `pg_type` with the view's expressions, without the view): on the zoo's
/// every column and on the types a masker tells apart by them (domains over domains, arrays of
/// a sized type, `bit`, `char` without a length).
#[tokio::test]
async fn the_catalog_names_every_type_as_the_information_schema_does() {
    let dbs = TestDatabases::create("catalog_types", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(SCHEMA).await.unwrap();
    src.batch_execute(
        "CREATE SCHEMA types;
         CREATE TYPE types.mood AS ENUM ('a', 'b');
         CREATE TYPE types.pair AS (x int, y text);
         CREATE DOMAIN types.short AS varchar(10);
         CREATE DOMAIN types.shorter AS types.short CHECK (length(VALUE) < 5);
         CREATE DOMAIN types.ints AS int[];
         CREATE DOMAIN types.code AS char(3);
         CREATE TABLE types.t (a int, b varchar(20), c char(4), e numeric(10,2), f bit(3),
             g varbit(5), h timestamptz(3), j types.mood, k types.pair, l int4range, m int[],
             n varchar(5)[], o types.short, p types.shorter, q types.ints, r types.code,
             s types.mood[], u time(2) with time zone, v bpchar, w character varying, x \"char\",
             y name, z money, aa xml, ab regclass, ac bit varying)",
    )
    .await
    .unwrap();
    let target = Database::parse("source", &dbs.url("src")).unwrap();
    let schemas: Vec<String> = first_column(
        &src,
        "SELECT nspname::text FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'",
    )
    .await;
    let mut compared = 0;
    for info in maskbus_pg::catalog::tables(&target, &src, &schemas)
        .await
        .unwrap()
    {
        for column in &info.columns {
            let row = src
                .query_one(
                    "SELECT CASE WHEN c.data_type = 'USER-DEFINED' THEN format_type(a.atttypid, NULL)
                                 ELSE c.data_type::text END,
                            c.character_maximum_length::int
                       FROM information_schema.columns c
                       JOIN pg_attribute a ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
                                          AND a.attname = c.column_name
                      WHERE c.table_schema = $1 AND c.table_name = $2 AND c.column_name = $3",
                    &[&info.table.schema, &info.table.name, &column.name],
                )
                .await
                .unwrap();
            let expected: (String, Option<i32>) = (row.get(0), row.get(1));
            assert_eq!(
                (
                    column.data_type.clone(),
                    column.max_length.map(|n| n as i32)
                ),
                expected,
                "{}.{}",
                info.table,
                column.name
            );
            compared += 1;
        }
    }
    assert!(compared > 60, "compared {compared} columns");
}
