//! The producer's egress guard (issue 52): whatever the policy says, what a rule leaves of a
//! value, and every text of the schema, passes the audit's detectors and the exact matcher of
//! production's real values before it goes in a reply. A hit fails the table (or the schema
//! object) closed, named with the column and the detector, never the value.

use crate::support::*;

/// What the bank's demo policy keeps, with the cards and SSNs a wrong `keep` lets through.
const LEAK: &str = "paid by 4532 0151 1283 0366, ssn 219-09-9999";

/// Bus bodies holding any of `needles`.
async fn bodies_holding(bus: &str, needles: &[&str]) -> i64 {
    let client = connect(bus).await;
    let mut n = 0;
    for needle in needles {
        let count: i64 = client
            .query_one(
                "SELECT count(*) FROM mq.mail WHERE body LIKE '%' || $1 || '%'",
                &[needle],
            )
            .await
            .unwrap()
            .get(0);
        n += count;
    }
    n
}

/// The bank case: rows updated after the seed (at the end of the heap) hold cards and SSNs in a
/// kept column. `policy check` reads them and names the column; the sync puts none of them on
/// the bus or in the target, and says which column and detector held the table back.
#[tokio::test]
async fn a_kept_column_holding_cards_and_ssns_is_held_back_by_the_guard() {
    let dbs = seeded("egress_bank", "40").await;
    let src = connect(&dbs.url("src")).await;
    let updated = src
        .execute(
            "UPDATE transactions SET description = $1 WHERE id % 3 = 0",
            &[&LEAK],
        )
        .await
        .unwrap();
    assert!(updated > 10, "{updated}");

    // Before: `policy check` read the first 200 rows in physical order and said ok.
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
    ]);
    assert_eq!(check.code, 1, "{}\n{}", check.stdout, check.stderr);
    let line = check
        .stdout
        .lines()
        .find(|l| l.contains("transactions") && l.contains("description") && l.contains("ERROR"))
        .unwrap_or_else(|| panic!("{}", check.stdout));
    assert!(
        line.contains("ERROR") && (line.contains("card") || line.contains("ssn")),
        "{line}"
    );
    assert!(check.stdout.contains("rows: read"), "{}", check.stdout);
    assert!(!check.stdout.contains("9999") && !check.stdout.contains("0366"));

    let files = ConfigFiles::new("egress_bank");
    let port = free_port();
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("metrics_addr = \"127.0.0.1:{port}\"\n"),
        "",
    );
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let sync = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(sync.code, 3, "{}\n{}", sync.stdout, sync.stderr);
    assert!(
        sync.stderr.contains("transactions")
            && sync.stderr.contains("description")
            && (sync.stderr.contains("detector card") || sync.stderr.contains("detector ssn")),
        "{}",
        sync.stderr
    );
    assert!(!sync.stderr.contains("9999") && !sync.stderr.contains("0366"));

    // Nothing of it crossed: not on the bus, not in the target.
    assert_eq!(
        bodies_holding(&dbs.url("bus"), &["219-09-9999", "4532 0151", "0151 1283"]).await,
        0
    );
    let dst = connect(&dbs.url("dst")).await;
    let landed: i64 = dst
        .query_one(
            "SELECT count(*) FROM transactions WHERE description LIKE '%9999%'",
            &[],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(0);
    assert_eq!(landed, 0);
    // The other tables synced.
    let customers: i64 = dst
        .query_one("SELECT count(*) FROM customers", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(customers, 40);

    // The producer's /health names the table held back, its metric counts the refusals.
    let (code, health) = http_get(port, "/health").unwrap();
    assert_eq!(code, 503, "{health}");
    assert!(
        health.contains("egress guard") && health.contains("public.transactions"),
        "{health}"
    );
    let (_, metrics) = http_get(port, "/metrics").unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("maskbus_guarded_total{")
                && l.contains("table=\"public.transactions\"")
                && l.contains("column=\"description\"")),
        "{metrics}"
    );

    // `status` says which table fails and why, by column and detector.
    let status = maskbus(&["status", "--config", &consumer]);
    assert!(
        status.stdout.contains("transactions") && status.stdout.contains("detector"),
        "{}\n{}",
        status.stdout,
        status.stderr
    );

    // The way out: the reviewed-columns file, shared with the audit, or a rule.
    let reviewed = files.write(
        "reviewed.toml",
        "[columns]\n\"public.transactions.description\" = \"test fixture: reviewed\"\n",
    );
    let recheck = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
        "--reviewed",
        &reviewed,
    ]);
    assert!(
        !recheck
            .stdout
            .lines()
            .any(|l| l.contains("description") && l.contains("ERROR")),
        "{}",
        recheck.stdout
    );
}

/// Production's schema carries no personal data across: a customer's surname as an enum
/// label, an SSN as a domain constraint's name and as a sequence's START leave their tables
/// out (named, with the detector), while an index name with a framework's hash suffix is a
/// name, not an account number, and its table syncs.
#[tokio::test]
async fn schema_texts_holding_real_values_leave_their_objects_out() {
    let schema = r#"
        CREATE TABLE people (id int PRIMARY KEY, last_name text NOT NULL, ssn text);
        INSERT INTO people VALUES (1, 'Lockmanova', '219-09-9999'), (2, 'Quigleyson', '078-05-1120');
        CREATE TYPE mood AS ENUM ('happy', 'Lockmanova');
        CREATE TABLE visits (id int PRIMARY KEY, m mood);
        INSERT INTO visits VALUES (1, 'happy');
        CREATE DOMAIN code AS text CONSTRAINT "chk_078051120" CHECK (VALUE <> '');
        CREATE TABLE codes (id int PRIMARY KEY, c code);
        CREATE TABLE counters (id bigint PRIMARY KEY);
        CREATE SEQUENCE counters_id_seq START 219099999 MINVALUE 1 OWNED BY counters.id;
        ALTER TABLE counters ALTER COLUMN id SET DEFAULT nextval('counters_id_seq');
        CREATE TABLE accounts (id int PRIMARY KEY, user_id int NOT NULL, email text);
        CREATE INDEX account_emailaddress_user_id_2c513194 ON accounts (user_id);
        INSERT INTO accounts VALUES (1, 7, 'a@example.com');
        CREATE TABLE hotel_accounts (id serial PRIMARY KEY, tier text);
        INSERT INTO hotel_accounts (tier) VALUES ('gold');
    "#;
    let policy = r#"
[people]
id = "keep"
last_name = "redact"
ssn = "ssn"

[visits]
id = "keep"
m = "keep"

[codes]
id = "keep"
c = "keep"

[counters]
id = "keep"

[accounts]
id = "keep"
user_id = "keep"
email = "email"

[hotel_accounts]
id = "keep"
tier = "keep"
"#;
    let synced = Synced::start("egress_schema", schema, policy).await;
    let sync = synced.sync();
    let everything = format!("{}\n{}", sync.stdout, sync.stderr);
    for table in ["visits", "codes", "counters"] {
        assert!(everything.contains(table), "{table}: {everything}");
    }
    assert!(!everything.contains("Lockmanova") && !everything.contains("219099999"));
    assert_eq!(
        bodies_holding(
            &synced.dbs.url("bus"),
            &["Lockmanova", "219099999", "078051120"]
        )
        .await,
        0
    );
    let dst = connect(&synced.dbs.url("dst")).await;
    let objects: Vec<String> = first_column(
        &dst,
        "SELECT t.typname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE n.nspname = 'public' AND t.typtype IN ('c', 'e', 'd') AND t.typrelid = 0
         UNION ALL
         SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S')",
    )
    .await;
    // A sequence made with the defaults (its MAXVALUE is 2147483647, a phone number's digits
    // under a name with `tel` in it) says nothing: its table syncs.
    for synced in [
        "people",
        "accounts",
        "hotel_accounts",
        "hotel_accounts_id_seq",
    ] {
        assert!(
            objects.contains(&synced.to_string()),
            "{synced}: {objects:?}"
        );
    }
    for left_out in [
        "visits",
        "codes",
        "counters",
        "mood",
        "code",
        "counters_id_seq",
    ] {
        assert!(
            !objects.contains(&left_out.to_string()),
            "{left_out}: {objects:?}"
        );
    }
    let index: i64 = dst
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'account_emailaddress_user_id_2c513194'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(index, 1, "an identifier's hash suffix is no account number");
}

/// The change stream goes through the same guard: an update that writes cards and SSNs into a
/// kept column closes that table (nothing of it crosses), and the other tables' changes go on.
#[tokio::test]
async fn a_streamed_change_the_guard_refuses_closes_its_table_and_the_rest_streams() {
    let (dbs, _files, producer, consumer) = stream_bank_with("egress_stream", "30", "", "").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    let src = connect(&dbs.url("src")).await;
    src.batch_execute("SET synchronous_commit = on")
        .await
        .unwrap();
    src.execute(
        "UPDATE transactions SET description = $1 WHERE id IN (SELECT id FROM transactions ORDER BY id LIMIT 3)",
        &[&LEAK],
    )
    .await
    .unwrap();
    src.batch_execute(
        "INSERT INTO customers (id, first_name, last_name, email, ssn, date_of_birth, phone, created_at)
              VALUES (100001, 'Zed', 'Stream', 'zed@example.com', '123-45-6789', '1980-02-03', '555-0100', now())",
    )
    .await
    .unwrap();
    let follow = maskbus(&["run", "--config", &consumer, "--once"]);
    let said = format!("{}\n{}", follow.stdout, follow.stderr);
    assert!(!said.contains("9999") && !said.contains("0366"), "{said}");
    assert_eq!(
        bodies_holding(&dbs.url("bus"), &["219-09-9999", "4532 0151", "0151 1283"]).await,
        0
    );
    let dst = connect(&dbs.url("dst")).await;
    let landed: i64 = dst
        .query_one(
            "SELECT count(*) FROM transactions WHERE description LIKE '%9999%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(landed, 0);
    let zed: i64 = dst
        .query_one("SELECT count(*) FROM customers WHERE id = 100001", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(zed, 1, "the other tables' changes streamed: {said}");
}
