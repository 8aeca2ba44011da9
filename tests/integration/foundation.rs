//! The foundation: `maskbus bus init`, `maskbus bank init` and `maskbus seed` against a real
//! Postgres.

use crate::support::{bank_databases, connect, maskbus, table_fingerprint, TestDatabases};
use maskbus_pii::{is_aba_routing_text, is_issuable_ssn_text, luhn_valid};

#[tokio::test]
async fn bus_init_sets_up_the_bus_alone_and_a_second_run_changes_nothing() {
    let dbs = TestDatabases::create("businit", &["src", "bus"]).await;
    let admin = connect(&maskbus_pg::testing::url_with_dbname(
        &dbs.url("src"),
        "postgres",
    ))
    .await;
    // Drop the pre-created bus so bus init has to create it.
    let bus_name = dbs
        .names()
        .iter()
        .find(|n| n.ends_with("_bus"))
        .unwrap()
        .clone();
    admin
        .batch_execute(&format!("DROP DATABASE \"{bus_name}\""))
        .await
        .unwrap();
    let args = ["bus", "init", "--bus", &dbs.url("bus")];
    let first = maskbus(&args).success();
    assert!(first.stdout.contains("created"), "{}", first.stdout);
    let second = maskbus(&args).success();
    assert!(second.stdout.contains("nothing to do"), "{}", second.stdout);
    let bus = connect(&dbs.url("bus")).await;
    let has_messages: bool = bus
        .query_one("SELECT to_regclass('mq.messages') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0);
    assert!(has_messages);
    // Nothing else was touched: the source database holds no table and no maskbus schema.
    let src = connect(&dbs.url("src")).await;
    let objects: i64 = src
        .query_one(
            "SELECT count(*) FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
              WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(objects, 0);
}

#[tokio::test]
async fn the_bank_is_created_only_where_asked_by_name() {
    let dbs = TestDatabases::create("bankinit", &["src", "dst"]).await;
    let args = ["bank", "init", "--source", &dbs.url("src")];
    let first = maskbus(&args).success();
    assert!(first.stdout.contains("0001_schema.sql"), "{}", first.stdout);
    assert!(maskbus(&args).success().stdout.contains("nothing to do"));
    let count = |client: maskbus_pg::tokio_postgres::Client| async move {
        client
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    assert_eq!(count(connect(&dbs.url("src")).await).await, 5);
    assert_eq!(
        count(connect(&dbs.url("dst")).await).await,
        0,
        "the target was not named"
    );
}

#[tokio::test]
async fn init_names_the_database_that_failed() {
    let dbs = TestDatabases::create("init_err", &["src"]).await;
    let run = maskbus(&[
        "bus",
        "init",
        "--bus",
        "postgres://postgres@127.0.0.1:1/bus",
    ]);
    assert_eq!(run.code, 2);
    let error = run.stderr.trim();
    assert_eq!(error.lines().count(), 1, "one line: {error}");
    assert!(error.contains("bus database"), "{error}");

    let run = maskbus(&["bank", "init", "--source", "not a url"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("source database URL"), "{}", run.stderr);

    let run = maskbus(&[
        "bank",
        "init",
        "--source",
        &dbs.url("src"),
        "--target",
        &dbs.url("src"),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("same database"), "{}", run.stderr);
}

#[tokio::test]
async fn seeded_bank_is_realistic_and_consistent() {
    let dbs = bank_databases("seed_real").await;
    let run = maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "300"]).success();
    assert!(run.stdout.contains("customers"), "{}", run.stdout);
    let db = connect(&dbs.url("src")).await;

    let customers = db
        .query(
            "SELECT ssn, email, date_of_birth, created_at FROM customers",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(customers.len(), 300);
    let mut emails = std::collections::HashSet::new();
    for row in &customers {
        let ssn: String = row.get(0);
        assert!(
            is_issuable_ssn_text(&ssn),
            "SSN {ssn} could not have been issued"
        );
        let email: String = row.get(1);
        assert!(emails.insert(email.clone()), "duplicate email {email}");
    }
    let minors: i64 = db
        .query_one("SELECT count(*) FROM customers WHERE date_of_birth > DATE '2026-01-01' - INTERVAL '18 years'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(minors, 0);

    for row in db
        .query("SELECT card_number FROM cards", &[])
        .await
        .unwrap()
    {
        let card: String = row.get(0);
        assert_eq!(card.len(), 16, "{card}");
        assert!(luhn_valid(&card), "card {card} fails Luhn");
    }
    for row in db
        .query("SELECT account_number, routing_number FROM accounts", &[])
        .await
        .unwrap()
    {
        let account: String = row.get(0);
        let routing: String = row.get(1);
        assert!(
            account.len() == 9 && account.bytes().all(|b| b.is_ascii_digit()),
            "{account}"
        );
        assert!(
            is_aba_routing_text(&routing),
            "routing number {routing} fails the ABA checksum"
        );
    }
    let per_customer = db
        .query("SELECT count(a.id) FROM customers c LEFT JOIN accounts a ON a.customer_id = c.id GROUP BY c.id", &[])
        .await
        .unwrap();
    assert!(per_customer
        .iter()
        .all(|r| (1..=3).contains(&r.get::<_, i64>(0))));

    // Cards used by a transaction belong to that transaction's account.
    let mismatched: i64 = db
        .query_one(
            "SELECT count(*) FROM transactions t JOIN cards c ON c.id = t.card_id WHERE c.account_id <> t.account_id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(mismatched, 0);
    let counts = db
        .query_one("SELECT (SELECT count(*) FROM transactions), (SELECT count(*) FROM cards), (SELECT count(*) FROM transactions WHERE card_id IS NULL)", &[])
        .await
        .unwrap();
    assert_eq!(counts.get::<_, i64>(0), 300 * 25);
    assert!(counts.get::<_, i64>(1) > 0);
    assert!(
        counts.get::<_, i64>(2) > 0,
        "some transactions are not card payments"
    );

    // The seeder lifts keys and indexes for a fresh load; they must all be back.
    let constraints = db
        .query_one(
            "SELECT (SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace),
                    (SELECT count(*) FROM pg_indexes WHERE schemaname = 'public')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (constraints.get::<_, i64>(0), constraints.get::<_, i64>(1)),
        (5, 11)
    );

    // The sequences were moved past the seeded ids: a plain insert works.
    db.execute(
        "INSERT INTO customers (first_name, last_name, email, ssn, date_of_birth, created_at)
         VALUES ('A', 'B', 'a@b.c', '123-45-6789', '1990-01-01', now())",
        &[],
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn same_seed_gives_the_same_bytes_and_another_seed_other_data() {
    let a = bank_databases("seed_same_a").await;
    let b = TestDatabases::create("seed_same_b", &["src", "src2"]).await;
    for url in [b.url("src"), b.url("src2")] {
        maskbus(&["bank", "init", "--source", &url]).success();
    }
    maskbus(&["seed", "--source", &a.url("src"), "--seed", "42"]).success();
    maskbus(&["seed", "--source", &b.url("src"), "--seed", "42"]).success();
    maskbus(&["seed", "--source", &b.url("src2"), "--seed", "43"]).success();
    let (one, two, other) = (
        connect(&a.url("src")).await,
        connect(&b.url("src")).await,
        connect(&b.url("src2")).await,
    );
    for table in maskbus_bank::TABLES {
        let fingerprint = table_fingerprint(&one, table).await;
        assert_eq!(
            fingerprint,
            table_fingerprint(&two, table).await,
            "{table} differs for the same seed"
        );
        assert_ne!(
            fingerprint,
            table_fingerprint(&other, table).await,
            "{table} is the same for another seed"
        );
    }
}

#[tokio::test]
async fn seed_refuses_a_seeded_database_unless_told_to_append_or_reset() {
    let dbs = bank_databases("seed_again").await;
    let src = dbs.url("src");
    maskbus(&["seed", "--source", &src, "--customers", "10"]).success();
    let again = maskbus(&["seed", "--source", &src, "--customers", "10"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--append"), "{}", again.stderr);

    maskbus(&["seed", "--source", &src, "--customers", "5", "--append"]).success();
    let db = connect(&src).await;
    let row = db
        .query_one(
            "SELECT count(*), max(id), count(DISTINCT email) FROM customers",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            row.get::<_, i64>(0),
            row.get::<_, i64>(1),
            row.get::<_, i64>(2)
        ),
        (15, 15, 15)
    );

    maskbus(&["seed", "--source", &src, "--customers", "7", "--reset"]).success();
    let row = db
        .query_one("SELECT count(*), max(id) FROM customers", &[])
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (7, 7));
}

#[tokio::test]
async fn seed_without_a_schema_says_to_run_bank_init() {
    let dbs = TestDatabases::create("seed_noschema", &["src"]).await;
    let run = maskbus(&["seed", "--source", &dbs.url("src")]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("maskbus bank init"), "{}", run.stderr);
}
