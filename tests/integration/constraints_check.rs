//! Constraints are checked, not guessed (issue 54, items 3 and 4): a CHECK's format pattern is
//! no person's value, so its table is served and the constraint created on the target; `policy
//! check` evaluates the target's constraints on each rule's output over the sample and names
//! every conflict with a rule that fits; and it says what the served schema leaves out.

use crate::support::*;

async fn source_with(test: &str, schema: &str) -> TestDatabases {
    let dbs = TestDatabases::create(test, &["src"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(schema)
        .await
        .unwrap();
    dbs
}

fn policy_check(files: &ConfigFiles, dbs: &TestDatabases, policy: &str) -> Run {
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

/// The publisher's sample: an SSN-shaped primary key with a CHECK of its format. The pattern
/// says what an SSN looks like, not whose: the table is served, its rows and the CHECK reach
/// the target, and `policy check` agrees (exit 0).
#[tokio::test]
async fn a_format_check_is_served_created_on_the_target_and_policy_check_agrees() {
    const SCHEMA: &str = r"
        CREATE TABLE authors (
            au_id varchar(11) PRIMARY KEY
                CONSTRAINT authors_au_id_format CHECK (au_id ~ '^[0-9]{3}-[0-9]{2}-[0-9]{4}$'),
            au_lname text NOT NULL
        );
        INSERT INTO authors VALUES
            ('172-32-1176', 'White'), ('213-46-8915', 'Green'), ('238-95-7766', 'Carson'),
            ('267-41-2394', 'OLeary'), ('274-80-9391', 'Straight');
    ";
    const POLICY: &str =
        "[authors]\nau_id = { pseudonym = \"ssn\" }\nau_lname = { pseudonym = \"last_name\" }\n";
    let synced = Synced::start("constraints_format", SCHEMA, POLICY).await;
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &synced.dbs.url("src"),
        "--policy",
        &synced.policy,
    ]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    let run = synced.sync();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dst = connect(&synced.dbs.url("dst")).await;
    let rows: Vec<i64> = first_column(&dst, "SELECT count(*) FROM authors").await;
    assert_eq!(rows, [5]);
    let checks: Vec<String> = first_column(
        &dst,
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint
          WHERE conrelid = 'public.authors'::regclass AND contype = 'c'",
    )
    .await;
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert!(checks[0].contains("~"), "{checks:?}");
    // The masked ids satisfy the format, and none is a real one.
    let ids: Vec<String> = first_column(&dst, "SELECT au_id FROM authors").await;
    assert!(!ids.contains(&"172-32-1176".to_string()), "{ids:?}");
}

/// `zip = "first_letter"` writes `9***`, which `CHECK (zip ~ '^[0-9]{5}$')` refuses: `policy
/// check` exits non-zero naming the column, the constraint and a rule that fits.
#[tokio::test]
async fn a_rule_whose_output_breaks_a_check_is_named_with_a_rule_that_fits() {
    let dbs = source_with(
        "constraints_zip",
        r"
        CREATE TABLE shops (
            id int PRIMARY KEY,
            zip text NOT NULL CONSTRAINT shops_zip_five_digits CHECK (zip ~ '^[0-9]{5}$')
        );
        INSERT INTO shops SELECT i, lpad((10000 + i * 37)::text, 5, '0') FROM generate_series(1, 50) i;
        ",
    )
    .await;
    let files = ConfigFiles::new("constraints_zip");
    let check = policy_check(
        &files,
        &dbs,
        "[shops]\nid = \"keep\"\nzip = \"first_letter\"\n",
    );
    assert_ne!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    let line = check
        .stdout
        .lines()
        .find(|l| l.contains("shops_zip_five_digits"))
        .unwrap_or_else(|| panic!("{}", check.stdout));
    assert!(line.contains("zip"), "{line}");
    assert!(line.contains("pseudonym = \"digits\""), "{line}");
    // With the rule it names, the check passes.
    let fixed = policy_check(
        &files,
        &dbs,
        "[shops]\nid = \"keep\"\nzip = { pseudonym = \"digits\" }\n",
    );
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
}

/// A rule whose output is longer than the column allows (`email` keeps the domain and writes
/// `j***`) is named with the column's type.
#[tokio::test]
async fn a_rule_whose_output_is_too_long_for_the_column_is_named() {
    let dbs = source_with(
        "constraints_length",
        r"
        CREATE TABLE contacts (id int PRIMARY KEY, contact varchar(8));
        INSERT INTO contacts VALUES (1, 'jo@x.io'), (2, 'al@y.io'), (3, NULL);
        ",
    )
    .await;
    let files = ConfigFiles::new("constraints_length");
    let check = policy_check(
        &files,
        &dbs,
        "[contacts]\nid = \"keep\"\ncontact = \"email\"\n",
    );
    assert_ne!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    let line = check
        .stdout
        .lines()
        .find(|l| l.contains("character varying(8)") && l.contains("ERROR"))
        .unwrap_or_else(|| panic!("{}", check.stdout));
    assert!(line.contains("9 characters"), "{line}");
    // Never a value.
    assert!(!check.stdout.contains("jo@x.io"), "{}", check.stdout);
}

/// A trigger runs code, which no served schema carries: `policy check` lists it as left out,
/// by name, with the reason, and still passes.
#[tokio::test]
async fn a_trigger_the_served_schema_leaves_out_is_listed_by_policy_check() {
    let dbs = source_with(
        "constraints_trigger",
        r"
        CREATE TABLE ledger (id int PRIMARY KEY, note text) WITH (fillfactor = 70);
        CREATE FUNCTION ledger_touch() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RETURN NEW; END $$;
        CREATE TRIGGER ledger_stamp BEFORE INSERT ON ledger
            FOR EACH ROW EXECUTE FUNCTION ledger_touch();
        INSERT INTO ledger VALUES (1, 'opened'), (2, 'closed');
        ",
    )
    .await;
    let files = ConfigFiles::new("constraints_trigger");
    let check = policy_check(&files, &dbs, "[ledger]\nid = \"keep\"\nnote = \"redact\"\n");
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    let line = check
        .stdout
        .lines()
        .find(|l| l.contains("ledger_stamp"))
        .unwrap_or_else(|| panic!("{}", check.stdout));
    assert!(
        line.contains("trigger") && line.contains("runs code") && line.contains("ledger_touch"),
        "{line}"
    );
    assert!(
        check
            .stdout
            .lines()
            .any(|l| l.contains("storage option fillfactor")),
        "{}",
        check.stdout
    );
}

/// The consumer's report says the same: the served schema names the trigger, the rule and the
/// storage option it does not carry, and `maskbus status` lists each with the reason, while the
/// table itself syncs (the target has none of them).
#[tokio::test]
async fn what_the_served_schema_leaves_out_is_in_the_consumers_report() {
    const SCHEMA: &str = r"
        CREATE TABLE ledger (id int PRIMARY KEY, note text) WITH (fillfactor = 70);
        CREATE FUNCTION ledger_touch() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RETURN NEW; END $$;
        CREATE TRIGGER ledger_stamp BEFORE INSERT ON ledger
            FOR EACH ROW EXECUTE FUNCTION ledger_touch();
        CREATE RULE ledger_keep AS ON DELETE TO ledger DO INSTEAD NOTHING;
        INSERT INTO ledger VALUES (1, 'opened'), (2, 'closed');
    ";
    let synced = Synced::start(
        "constraints_report",
        SCHEMA,
        "[ledger]\nid = \"keep\"\nnote = \"redact\"\n",
    )
    .await;
    let run = synced.sync();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let status = maskbus(&["status", "--config", &synced.consumer]);
    for needle in [
        "not served trigger ledger_stamp (runs function public.ledger_touch) on public.ledger: \
         not created: it runs code",
        "not served rule ledger_keep on public.ledger: not created: it runs code",
        "not served storage option fillfactor on public.ledger: not created: it tunes",
    ] {
        assert!(
            status.stdout.contains(needle),
            "{needle:?} not in\n{}\n{}",
            status.stdout,
            status.stderr
        );
    }
    let dst = connect(&synced.dbs.url("dst")).await;
    let rows: Vec<i64> = first_column(&dst, "SELECT count(*) FROM ledger").await;
    assert_eq!(rows, [2]);
    let triggers: Vec<i64> = first_column(
        &dst,
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.ledger'::regclass AND NOT tgisinternal",
    )
    .await;
    assert_eq!(triggers, [0]);
}
