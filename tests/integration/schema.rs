//! The schema crosses the boundary: an empty target is created from the schema the producer
//! serves (no `pg_dump` of production on the test side), and what of the schema may carry
//! personal data (comments, defaults, checks, enum labels) stays on the producer.

use crate::support::*;
use crate::zoo::{
    assert_target_is_masked_source_by, zoo_policy, zoo_urls, DATA, POLICY_PATH, SCHEMA,
};

/// Every column of the non-maskbus tables, as the catalog describes it.
pub(crate) async fn columns(url: &str) -> Vec<String> {
    connect(url)
        .await
        .query(
            "SELECT format('%s.%s.%s %s null=%s default=%s identity=%s generated=%s collation=%s',
                           table_schema, table_name, column_name, data_type || coalesce('(' || udt_name || ')', ''),
                           is_nullable, coalesce(column_default, '-'), coalesce(identity_generation, '-'),
                           coalesce(generation_expression, '-'), coalesce(collation_name, '-'))
               FROM information_schema.columns
              WHERE table_schema NOT IN ('pg_catalog', 'information_schema', 'maskbus')
              ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Types, partitions and extensions of the non-maskbus schemas.
pub(crate) async fn types_and_partitions(url: &str) -> Vec<String> {
    connect(url)
        .await
        .query(
            "SELECT format('type %s.%s %s %s', n.nspname, t.typname, t.typtype,
                           coalesce((SELECT string_agg(enumlabel, ',' ORDER BY enumsortorder) FROM pg_enum WHERE enumtypid = t.oid), ''))
               FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
              WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'maskbus', 'pg_toast')
                AND t.typtype IN ('e', 'd', 'r') 
             UNION ALL
             SELECT format('partition %s of %s %s', c.oid::regclass, i.inhparent::regclass, pg_get_expr(c.relpartbound, c.oid))
               FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid WHERE c.relispartition
             UNION ALL
             SELECT format('extension %s', extname) FROM pg_extension WHERE extname <> 'plpgsql'
             ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// `pg_dump --schema-only` of `url` without maskbus' own schema, owners, grants and comments,
/// normalised: its statements only (no `SET`, no comment lines, no blank lines).
pub(crate) fn dumped_schema(url: &str) -> Vec<String> {
    let out = std::process::Command::new("pg_dump")
        .args([
            "--schema-only",
            "--no-owner",
            "--no-privileges",
            "--no-comments",
            "--exclude-schema=maskbus",
            url,
        ])
        .output()
        .expect("pg_dump runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            !l.trim().is_empty()
                && !l.starts_with("--")
                && !l.starts_with("SET ")
                && !l.starts_with("SELECT pg_catalog.set_config")
                && !l.starts_with("\\restrict")
                && !l.starts_with("\\unrestrict")
        })
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn an_empty_target_is_made_from_the_served_schema_and_equals_the_source_on_the_zoo() {
    let test = "schema_zoo";
    let dbs = TestDatabases::create(test, &["src", "dst", "bus", "dump"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(SCHEMA).await.unwrap();
    src.batch_execute(DATA).await.unwrap();
    // Indexes of a partitioned table: made on the parent, they reach every partition (one made
    // `ON ONLY` the parent would be invalid, its partitions without it); and an exclusion
    // constraint.
    src.batch_execute(
        "CREATE INDEX events_kind ON zoo.events (lower(kind)) WHERE kind IS NOT NULL;
         CREATE UNIQUE INDEX events_id_at ON zoo.events (id, at);
         ALTER TABLE zoo.keepers ADD CONSTRAINT keepers_no_overlap
             EXCLUDE USING gist (availability WITH &&) WHERE (id < 0);",
    )
    .await
    .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let (producer, consumer) = write_agent_configs(
        &files,
        &zoo_urls(&dbs),
        &format!("policy = \"{POLICY_PATH}\"\n"),
        "all_or_nothing = true\n",
    );
    assert!(
        !std::fs::read_to_string(&consumer)
            .unwrap()
            .contains(&dbs.url("src")),
        "the consumer holds no production URL"
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Constraints and indexes (compared inside), columns, types, partitions, extensions: the
    // same as the source's; and every row the masked source's.
    let compared = assert_target_is_masked_source_by(&dbs, &zoo_policy()).await;
    assert!(compared > 20_000, "{compared}");
    assert_eq!(
        columns(&dbs.url("dst")).await,
        columns(&dbs.url("src")).await
    );
    assert_eq!(
        types_and_partitions(&dbs.url("dst")).await,
        types_and_partitions(&dbs.url("src")).await
    );
    // And as pg_dump prints them, against the target `pg_dump --schema-only | psql` makes:
    // the same statements (comments left out).
    restore_schema(&dbs.url("src"), &dbs.url("dump"));
    assert_dumps_equal(&dbs.url("dst"), &dbs.url("dump"));
    // A second run finds the tables there, creates nothing and moves no row.
    let again = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout.trim(), "synced 0 rows");
}

/// `pg_dump --schema-only SOURCE | psql COPY`: the target as the old way made it.
pub(crate) fn restore_schema(source: &str, copy: &str) {
    let dump = std::process::Command::new("pg_dump")
        .args(["--schema-only", "--no-owner", "--no-privileges", source])
        .output()
        .expect("pg_dump runs");
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let mut psql = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", copy])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("psql runs");
    use std::io::Write;
    psql.stdin.take().unwrap().write_all(&dump.stdout).unwrap();
    assert!(psql.wait().unwrap().success());
}

/// The schema made through the bus and the one `pg_dump --schema-only | psql` makes dump the
/// same, line by line.
fn assert_dumps_equal(made: &str, restored: &str) {
    let (made, restored) = (dumped_schema(made), dumped_schema(restored));
    let first = made.iter().zip(&restored).position(|(a, b)| a != b);
    assert_eq!(
        made,
        restored,
        "first difference at line {first:?}: {:?} vs {:?}",
        first.map(|i| &made[i]),
        first.map(|i| &restored[i])
    );
}

#[tokio::test]
async fn the_bank_made_through_the_bus_dumps_as_one_made_by_pg_dump() {
    let test = "schema_bank";
    let dbs = TestDatabases::create(test, &["src", "dst", "bus", "dump"]).await;
    maskbus(&["bank", "init", "--source", &dbs.url("src")]).success();
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "20"]).success();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    restore_schema(&dbs.url("src"), &dbs.url("dump"));
    assert_dumps_equal(&dbs.url("dst"), &dbs.url("dump"));
    crate::zoo::assert_audit_clean(&dbs, &producer);
}

const PII_SCHEMA: &str = "
    CREATE TYPE public.tier AS ENUM ('gold', '219-09-9999');
    CREATE TYPE public.colour AS ENUM ('red', 'blue');
    CREATE TABLE public.staff (
        id int PRIMARY KEY,
        name text NOT NULL,
        colour public.colour NOT NULL DEFAULT 'red'
    );
    COMMENT ON TABLE public.staff IS 'manager SSN 219-09-9999';
    COMMENT ON COLUMN public.staff.name IS 'ask dave.smith@yahoo.com';
    CREATE TABLE public.defaults (id int PRIMARY KEY, contact text DEFAULT 'dave.smith@yahoo.com');
    CREATE TABLE public.checks (id int PRIMARY KEY, ssn text CHECK (ssn <> '078-05-1120'));
    CREATE TABLE public.tiers (id int PRIMARY KEY, tier public.tier);
    CREATE TABLE public.secret (id int PRIMARY KEY);
    INSERT INTO public.staff VALUES (1, 'Ann', 'blue');
    INSERT INTO public.defaults VALUES (1, 'x');
    INSERT INTO public.checks VALUES (1, '1');
    INSERT INTO public.tiers VALUES (1, 'gold');
";

const PII_POLICY: &str = "
[staff]
id = \"keep\"
name = \"keep\"
colour = \"keep\"
[defaults]
id = \"keep\"
contact = \"keep\"
[checks]
id = \"keep\"
ssn = \"keep\"
[tiers]
id = \"keep\"
tier = \"keep\"
";

#[tokio::test]
async fn pii_in_comments_defaults_checks_and_enum_labels_reaches_neither_the_bus_nor_the_target() {
    let test = "schema_pii";
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(PII_SCHEMA)
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let policy = files.write("policy.toml", PII_POLICY);
    let (producer, consumer) = write_agent_configs(
        &files,
        &zoo_urls(&dbs),
        &format!("policy = \"{policy}\"\n"),
        "",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    // Three tables fail closed, by name; staff is created (without its comments) and synced.
    assert_ne!(run.code, 0, "{}", run.stderr);
    for (table, reason) in [
        (
            "public.defaults",
            "the default of column contact looks like email",
        ),
        ("public.checks", "looks like ssn"),
        ("public.tiers", "type public.tier"),
    ] {
        assert!(
            run.stderr.contains(table) && run.stderr.contains(reason),
            "{table}: {reason}\n{}",
            run.stderr
        );
    }
    let dst = connect(&dbs.url("dst")).await;
    let staff: i64 = dst
        .query_one("SELECT count(*) FROM public.staff", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(staff, 1);
    let leaks: Vec<String> = first_column(
        &dst,
        "SELECT x FROM (
                 SELECT description AS x FROM pg_description
                 UNION ALL SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
                 UNION ALL SELECT pg_get_constraintdef(oid) FROM pg_constraint
                 UNION ALL SELECT enumlabel::text FROM pg_enum) o
              WHERE x ~ '9999|1120|dave'",
    )
    .await;
    assert!(leaks.is_empty(), "{leaks:?}");
    let missing: i64 = dst
        .query_one(
            "SELECT count(*) FROM unnest(ARRAY['defaults', 'checks', 'tiers', 'secret']) t
              WHERE to_regclass('public.' || t) IS NOT NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        missing, 0,
        "no table left out (or outside the policy) was created"
    );
    let bus: i64 = connect(&dbs.url("bus"))
        .await
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE body::text ~ '9999|1120|dave' OR body::text ~ 'secret'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(bus, 0, "nothing of it crossed the bus");
    // The wire audit scans the schema reply like any message: clean.
    crate::zoo::assert_audit_clean(&dbs, &producer);
}

/// Every row of every table of `tables`, as text, in key order: the same query on both sides.
async fn rows_of(url: &str, tables: &[&str]) -> Vec<String> {
    let client = connect(url).await;
    let mut out = Vec::new();
    for table in tables {
        for row in client
            .query(&format!("SELECT t::text FROM {table} t ORDER BY 1"), &[])
            .await
            .unwrap()
        {
            out.push(format!("{table} {}", row.get::<_, String>(0)));
        }
    }
    out
}

/// The configs and producer of a migration test (a source with `MIGRATION_START`, every rule
/// `keep`, an empty target, a bus): the producer restarted on each policy.
struct Migrating {
    files: ConfigFiles,
    consumer: String,
    producer_config: String,
    producer: Option<Background>,
}

impl Migrating {
    async fn start(test: &str, stream: bool) -> (TestDatabases, Self) {
        let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
        let src = connect(&dbs.url("src")).await;
        // The dev cluster commits asynchronously; a slot decodes flushed WAL only (stream.rs).
        src.batch_execute("SET synchronous_commit = on")
            .await
            .unwrap();
        src.batch_execute(MIGRATION_START).await.unwrap();
        maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
        let files = ConfigFiles::new(test);
        let policy = files.write("policy.toml", "");
        let (producer_extra, consumer_extra) = if stream {
            (
                format!("policy = \"{policy}\"\nslot = \"maskbus_{test}\"\n"),
                "mode = \"stream\"\nrequest_timeout = \"3s\"\n".to_string(),
            )
        } else {
            (format!("policy = \"{policy}\"\n"), String::new())
        };
        let (producer_config, consumer) =
            write_agent_configs(&files, &zoo_urls(&dbs), &producer_extra, &consumer_extra);
        let mut migrating = Self {
            files,
            consumer,
            producer_config,
            producer: None,
        };
        migrating.policy(&migration_policy("", "name = \"keep\"", false));
        (dbs, migrating)
    }

    /// Writes the policy and restarts the producer on it.
    fn policy(&mut self, text: &str) {
        self.files.write("policy.toml", text);
        self.producer = None;
        self.producer = Some(Background::spawn(&[
            "run",
            "--config",
            &self.producer_config,
        ]));
    }
}

/// A connection to the source that commits synchronously (a slot decodes flushed WAL only).
pub(crate) async fn source_of(dbs: &TestDatabases) -> maskbus_pg::tokio_postgres::Client {
    let src = connect(&dbs.url("src")).await;
    src.batch_execute("SET synchronous_commit = on")
        .await
        .unwrap();
    src
}

const MIGRATION_START: &str = "
    CREATE TYPE public.mood AS ENUM ('calm', 'grumpy');
    CREATE TABLE public.people (id int PRIMARY KEY, name text NOT NULL);
    CREATE TABLE public.pets (id int PRIMARY KEY, owner_id int REFERENCES public.people,
                              name text, mood public.mood, weight int);
    INSERT INTO public.people SELECT i, 'person ' || i FROM generate_series(1, 50) i;
    INSERT INTO public.pets SELECT i, 1 + i % 50, 'pet ' || i, 'calm', i FROM generate_series(1, 120) i;
";

fn migration_policy(people: &str, pets: &str, toys: bool) -> String {
    format!(
        "[people]\nid = \"keep\"\nname = \"keep\"\n{people}\n[pets]\nid = \"keep\"\nowner_id = \"keep\"\nmood = \"keep\"\nweight = \"keep\"\n{pets}\n{}",
        if toys { "[toys]\nid = \"keep\"\npet_id = \"keep\"\nlabel = \"keep\"\n" } else { "" }
    )
}

#[tokio::test]
async fn a_migration_sequence_is_followed_in_watermark_mode_and_a_column_without_a_rule_fails_only_its_table(
) {
    migration_sequence("schema_migrate", false).await;
}

#[tokio::test]
async fn a_migration_sequence_is_followed_in_stream_mode_each_change_after_its_schema() {
    migration_sequence("schema_migrate_stream", true).await;
}

/// Each step of a migration on the source, a sync after each: the target equals the source
/// (every rule is `keep`) in rows, columns, constraints, indexes and types. A column without a
/// rule fails its table only, by name; in stream mode its changes are left out meanwhile, and
/// the table is copied again and repaired once the rule is in.
async fn migration_sequence(test: &str, stream: bool) {
    let (dbs, mut step) = Migrating::start(test, stream).await;
    let src = source_of(&dbs).await;
    let consumer = step.consumer.clone();
    let sync = |expect: i32| {
        let run = maskbus_with_env(
            &["run", "--config", &consumer, "--once"],
            &[("MASKBUS_LOG", "info")],
        );
        assert_eq!(run.code, expect, "{}\n{}", run.stdout, run.stderr);
        run
    };
    let equal = |tables: &'static [&'static str]| {
        let (src, dst) = (dbs.url("src"), dbs.url("dst"));
        async move {
            assert_eq!(rows_of(&dst, tables).await, rows_of(&src, tables).await);
            assert_eq!(columns(&dst).await, columns(&src).await);
            assert_eq!(schema_objects(&dst).await, schema_objects(&src).await);
            assert_eq!(
                types_and_partitions(&dst).await,
                types_and_partitions(&src).await
            );
        }
    };
    sync(0);
    equal(&["people", "pets"]).await;

    // A column without a rule: people fails closed, by name, with the fix; pets goes on.
    src.batch_execute(
        "ALTER TABLE people ADD COLUMN nickname text DEFAULT 'nick';
         UPDATE pets SET weight = weight + 1 WHERE id = 1;",
    )
    .await
    .unwrap();
    let run = sync(3);
    assert!(
        run.stderr.contains("public.people") && run.stderr.contains("column nickname has no rule"),
        "{}",
        run.stderr
    );
    assert_eq!(
        rows_of(&dbs.url("dst"), &["pets"]).await,
        rows_of(&dbs.url("src"), &["pets"]).await,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    // `status` says so, with the reason, and is not caught up.
    let status = maskbus(&["status", "--config", &consumer]);
    assert_ne!(status.code, 0, "{}", status.stdout);
    assert!(
        status.stdout.contains("public.people FAILS CLOSED") && status.stdout.contains("nickname"),
        "{}",
        status.stdout
    );
    if stream {
        // A change of the table itself, and a delete: left out of the stream (the others go
        // on), and the table is copied again and repaired once its rule is in.
        src.batch_execute(
            "UPDATE people SET name = name || '!' WHERE id = 1;
             DELETE FROM pets WHERE owner_id = 50; DELETE FROM people WHERE id = 50;
             UPDATE pets SET weight = weight + 1 WHERE id = 2;",
        )
        .await
        .unwrap();
        let run = sync(3);
        assert!(
            run.stderr.contains("public.people") && run.stderr.contains("nickname"),
            "{}",
            run.stderr
        );
        assert_eq!(
            rows_of(&dbs.url("dst"), &["pets"]).await,
            rows_of(&dbs.url("src"), &["pets"]).await,
            "the other table goes on"
        );
    }
    let has_nickname: bool = connect(&dbs.url("dst"))
        .await
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE column_name = 'nickname')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(!has_nickname, "nothing of the new column crosses");

    // Its rule: the column is made and the rows (their default, which gave no row a new
    // version) follow.
    step.policy(&migration_policy(
        "nickname = \"keep\"",
        "name = \"keep\"",
        false,
    ));
    sync(0);
    equal(&["people", "pets"]).await;
    let status = maskbus(&["status", "--config", &consumer]);
    assert!(!status.stdout.contains("FAILS CLOSED"), "{}", status.stdout);

    // A new table with a rule, an index, an enum value in use.
    src.batch_execute(
        "CREATE TABLE public.toys (id int PRIMARY KEY, pet_id int REFERENCES public.pets, label text);
         INSERT INTO public.toys SELECT i, i, 'toy ' || i FROM generate_series(1, 30) i;
         CREATE INDEX pets_name ON public.pets (lower(name)) WHERE weight > 10;
         ALTER TYPE public.mood ADD VALUE 'sleepy';",
    )
    .await
    .unwrap();
    src.batch_execute("UPDATE pets SET mood = 'sleepy' WHERE id <= 3")
        .await
        .unwrap();
    step.policy(&migration_policy(
        "nickname = \"keep\"",
        "name = \"keep\"",
        true,
    ));
    sync(0);
    equal(&["people", "pets", "toys"]).await;

    // A renamed column (its rule renamed too) and a widened type.
    src.batch_execute(
        "ALTER TABLE pets RENAME COLUMN name TO pet_name;
         ALTER TABLE pets ALTER COLUMN weight TYPE bigint;",
    )
    .await
    .unwrap();
    step.policy(&migration_policy(
        "nickname = \"keep\"",
        "pet_name = \"keep\"",
        true,
    ));
    sync(0);
    equal(&["people", "pets", "toys"]).await;

    // A dropped column and a dropped table, their rules gone.
    src.batch_execute("ALTER TABLE people DROP COLUMN nickname; DROP TABLE toys;")
        .await
        .unwrap();
    step.policy(&migration_policy("", "pet_name = \"keep\"", false));
    sync(0);
    equal(&["people", "pets"]).await;
}

#[tokio::test]
async fn policy_init_update_keeps_the_reviewed_lines_and_proposes_only_what_the_migration_added() {
    let test = "schema_init_update";
    let dbs = TestDatabases::create(test, &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE people (id int PRIMARY KEY, name text, old text);
         INSERT INTO people SELECT i, 'n' || i, 'o' FROM generate_series(1, 20) i;",
    )
    .await
    .unwrap();
    let files = ConfigFiles::new(test);
    let path = files.write("policy.toml", "");
    maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--output",
        &path,
    ])
    .success();
    // A reviewer's own line.
    let reviewed: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("name ") {
                "name = \"redact\"   # reviewed: free text at times".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, &reviewed).unwrap();
    src.batch_execute(
        "ALTER TABLE people ADD COLUMN email text, DROP COLUMN old;
         UPDATE people SET email = 'person' || id || '@example.org';
         CREATE TABLE pets (id int PRIMARY KEY, owner_id int REFERENCES people, nickname text);",
    )
    .await
    .unwrap();
    let run = maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--update",
        &path,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("new column: public.people.email"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("new table: public.pets"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("gone column (its rule marked): public.people.old"),
        "{}",
        run.stderr
    );
    let updated = std::fs::read_to_string(&path).unwrap();
    // Every reviewed line is still there, as it was.
    for line in reviewed.lines().filter(|l| !l.trim().is_empty()) {
        assert!(updated.contains(line), "lost {line:?}:\n{updated}");
    }
    assert!(
        updated.contains("# new in the source: column email"),
        "{updated}"
    );
    assert!(
        updated.contains("# new in the source: table public.pets"),
        "{updated}"
    );
    assert!(
        updated.contains("# gone from the source: column old"),
        "{updated}"
    );
    // With the gone rule removed, the policy fits the migrated schema.
    let fixed: String = updated
        .lines()
        .filter(|l| !l.starts_with("old "))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, fixed).unwrap();
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &path,
    ]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
}

/// A consumer killed with `kill -9` between two tables' schema changes (the second table held
/// by a lock, so the first is changed and committed): the next run changes only what is left,
/// and the target equals the source.
#[tokio::test]
async fn kill_9_between_two_tables_schema_changes_then_the_next_run_completes_the_migration() {
    let (dbs, mut step) = Migrating::start("schema_kill", false).await;
    let src = source_of(&dbs).await;
    let consumer = step.consumer.clone();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    src.batch_execute(
        "ALTER TABLE people ADD COLUMN nickname text DEFAULT 'nick';
         ALTER TABLE pets ADD COLUMN colour text DEFAULT 'brown';",
    )
    .await
    .unwrap();
    step.policy(&migration_policy(
        "nickname = \"keep\"",
        "name = \"keep\"\ncolour = \"keep\"",
        false,
    ));
    // pets is held: people's change commits, pets' waits on the lock.
    let holder = connect(&dbs.url("dst")).await;
    holder
        .batch_execute("BEGIN; LOCK TABLE public.pets IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let mut doomed = Background::spawn(&["run", "--config", &consumer, "--once"]);
    let dst = connect(&dbs.url("dst")).await;
    wait_until(
        "people changed and pets' change waiting on its lock",
        || async {
            let changed: bool = dst
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                                 WHERE table_name = 'people' AND column_name = 'nickname')",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            let waiting: bool = dst
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                                 WHERE datname = current_database() AND wait_event_type = 'Lock'
                                   AND query LIKE 'ALTER TABLE%pets%')",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            changed && waiting
        },
    )
    .await;
    doomed.kill9();
    holder.batch_execute("ROLLBACK").await.unwrap();
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        columns(&dbs.url("dst")).await,
        columns(&dbs.url("src")).await
    );
    assert_eq!(
        rows_of(&dbs.url("dst"), &["people", "pets"]).await,
        rows_of(&dbs.url("src"), &["people", "pets"]).await
    );
    assert_eq!(
        schema_objects(&dbs.url("dst")).await,
        schema_objects(&dbs.url("src")).await
    );
}

#[tokio::test]
async fn a_changed_rule_rewrites_its_table_alone_on_the_next_pass() {
    let (dbs, mut step) = Migrating::start("schema_rules", false).await;
    let consumer = step.consumer.clone();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    // Nothing changed on the source; pets' name is masked another way now.
    step.policy(&migration_policy("", "name = \"redact\"", false));
    let run = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(
        run.stdout.trim(),
        "synced 120 rows",
        "pets only: {}",
        run.stderr
    );
    let names: Vec<String> = connect(&dbs.url("dst"))
        .await
        .query("SELECT DISTINCT name FROM pets", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, vec!["[REDACTED]"]);
    let again = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(again.stdout.trim(), "synced 0 rows");
}

/// The producer killed with `kill -9` after a migration, while the consumer asks for the new
/// schema: the consumer's run fails by name and changes nothing; with the producer back, the
/// next run completes the migration.
#[tokio::test]
async fn kill_9_of_the_producer_during_a_migration_then_the_next_run_completes_it() {
    let (dbs, mut step) = Migrating::start("schema_kill_producer", false).await;
    let src = source_of(&dbs).await;
    let consumer = step.consumer.clone();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    src.batch_execute("ALTER TABLE people ADD COLUMN nickname text DEFAULT 'nick'")
        .await
        .unwrap();
    let policy = migration_policy("nickname = \"keep\"", "name = \"keep\"", false);
    step.policy(&policy);
    if let Some(producer) = step.producer.as_mut() {
        producer.kill9();
    }
    let short = step.files.write(
        "short.toml",
        &format!(
            "{}request_timeout = \"1s\"\n",
            std::fs::read_to_string(&consumer).unwrap()
        ),
    );
    let run = maskbus(&["run", "--config", &short, "--once"]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("no reply from the producer"),
        "{}",
        run.stderr
    );
    assert_ne!(
        columns(&dbs.url("dst")).await,
        columns(&dbs.url("src")).await
    );
    step.policy(&policy);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(
        columns(&dbs.url("dst")).await,
        columns(&dbs.url("src")).await
    );
    assert_eq!(
        rows_of(&dbs.url("dst"), &["people", "pets"]).await,
        rows_of(&dbs.url("src"), &["people", "pets"]).await
    );
}

/// A consumer that lags behind a migration: rows changed in the old shape, then the columns
/// changed (a rename, an added column with a default, a column changed and its rows in one
/// transaction), and only then a sync. The changes made in the old shape are not followed
/// forever: the target ends equal to the source.
#[tokio::test]
async fn changes_made_before_a_migration_the_consumer_has_not_followed_yet_reach_the_target() {
    let (dbs, mut step) = Migrating::start("schema_lag", true).await;
    let src = source_of(&dbs).await;
    let consumer = step.consumer.clone();
    let sync = || {
        let run = maskbus_with_env(
            &["run", "--config", &consumer, "--once"],
            &[("MASKBUS_LOG", "info")],
        );
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    };
    let equal = || {
        let (src, dst) = (dbs.url("src"), dbs.url("dst"));
        async move {
            assert_eq!(
                rows_of(&dst, &["people", "pets"]).await,
                rows_of(&src, &["people", "pets"]).await
            );
            assert_eq!(columns(&dst).await, columns(&src).await);
        }
    };
    sync();
    equal().await;
    src.batch_execute("UPDATE pets SET weight = weight + 1 WHERE id <= 5")
        .await
        .unwrap();
    src.batch_execute("ALTER TABLE pets RENAME COLUMN name TO pet_name")
        .await
        .unwrap();
    step.policy(&migration_policy("", "pet_name = \"keep\"", false));
    sync();
    equal().await;
    src.batch_execute(
        "UPDATE pets SET weight = weight + 1 WHERE id <= 5;
         ALTER TABLE pets ADD COLUMN colour text DEFAULT 'brown';
         UPDATE pets SET colour = 'black' WHERE id = 7;",
    )
    .await
    .unwrap();
    step.policy(&migration_policy(
        "",
        "pet_name = \"keep\"\ncolour = \"keep\"",
        false,
    ));
    sync();
    equal().await;
}
