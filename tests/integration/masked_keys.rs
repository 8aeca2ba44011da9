//! Masked key columns (issue 28), end to end: primary and foreign keys that carry a bijective
//! pseudonym sync, page, follow deltas and the change stream, verify and repair, all by the
//! masked key. The target never holds a real key, its links hold, and its integer keys stay
//! integers of their type (the least and greatest `integer` included).

use crate::support::*;
use std::collections::HashSet;

const SCHEMA: &str = "
    CREATE TABLE customers (ssn text PRIMARY KEY, name text NOT NULL);
    CREATE TABLE accounts (
        number bigint PRIMARY KEY,
        customer_ssn text NOT NULL REFERENCES customers (ssn),
        balance numeric(12, 2) NOT NULL
    );
    CREATE TABLE notes (
        id integer PRIMARY KEY,
        account bigint REFERENCES accounts (number),
        body text
    );
    CREATE FUNCTION ssn_of(i int) RETURNS text IMMUTABLE LANGUAGE sql
        AS $$ SELECT lpad((101 + i / 9999)::text, 3, '0') || '-45-' || lpad((1 + i % 9999)::text, 4, '0') $$;
    INSERT INTO customers SELECT ssn_of(i), 'Customer ' || i FROM generate_series(0, 2999) i;
    INSERT INTO accounts SELECT 4000000000 + i * 7, ssn_of(i / 2), i * 1.5 FROM generate_series(0, 5999) i;
    INSERT INTO notes SELECT i, 4000000000 + (i % 6000) * 7, 'about ' || i FROM generate_series(1, 3000) i;
    INSERT INTO notes VALUES (2147483647, NULL, 'the greatest'), (-2147483648, NULL, 'the least'), (0, NULL, 'zero');";

const POLICY: &str = r#"
[customers]
ssn = { pseudonym = "ssn" }
name = { pseudonym = "last_name" }

[accounts]
number = { pseudonym = "digits" }
customer_ssn = { pseudonym = "ssn" }
balance = "keep"

[notes]
id = { pseudonym = "digits" }
account = { pseudonym = "digits" }
body = "scrub"
"#;

/// The source, an empty target and a bus, the policy, a running producer (with `producer_extra`)
/// and the consumer's config (with `consumer_extra`).
struct Keyed {
    dbs: TestDatabases,
    producer: String,
    consumer: String,
    policy: String,
    files: ConfigFiles,
    _running: Background,
}

impl Keyed {
    async fn start(test: &str, producer_extra: &str, consumer_extra: &str) -> Self {
        let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
        connect(&dbs.url("src"))
            .await
            .batch_execute(SCHEMA)
            .await
            .unwrap();
        maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
        let files = ConfigFiles::new(test);
        let policy = files.write("policy.toml", POLICY);
        let (producer, consumer) = write_agent_configs(
            &files,
            &crate::zoo::zoo_urls(&dbs),
            &format!("policy = \"{policy}\"\n{producer_extra}\n"),
            consumer_extra,
        );
        let running = Background::spawn(&["run", "--config", &producer]);
        Keyed {
            dbs,
            producer,
            consumer,
            policy,
            files,
            _running: running,
        }
    }

    fn sync(&self) {
        maskbus(&["run", "--config", &self.consumer, "--once"]).success();
    }

    fn verify_equal(&self) {
        let run = maskbus(&["verify", "--config", &self.consumer]).success();
        assert!(
            run.stdout.contains("the target equals the masked source"),
            "{}",
            run.stdout
        );
    }

    /// Every table as many rows as the source, no real SSN or account number in the target,
    /// and few notes with their own key (a keyed permutation has fixed points).
    async fn assert_masked(&self) {
        let (src, dst) = (
            connect(&self.dbs.url("src")).await,
            connect(&self.dbs.url("dst")).await,
        );
        for (sql, fixed) in [
            ("SELECT ssn FROM customers", 0),
            ("SELECT customer_ssn FROM accounts", 0),
            ("SELECT number::text FROM accounts", 0),
            // The same note by its text (short numbers are not scrubbed), with its key: a
            // dense range of small integers is permuted among itself, so compare row by row.
            ("SELECT id || ' ' || body FROM notes", 10),
        ] {
            let column = |rows: Vec<maskbus_pg::tokio_postgres::Row>| -> HashSet<String> {
                rows.iter().map(|r| r.get::<_, String>(0)).collect()
            };
            let real = column(src.query(sql, &[]).await.unwrap());
            let masked = column(dst.query(sql, &[]).await.unwrap());
            assert_eq!(real.len(), masked.len(), "{sql}: as many distinct values");
            let kept = real.intersection(&masked).count();
            assert!(kept <= fixed, "{sql}: {kept} real values in the target");
        }
        // Integer keys stay in their type: the least and greatest integer kept their sign and
        // range, and every link of the target points at a row (the target has the same keys).
        let ends: i64 = dst
            .query_one(
                "SELECT count(*) FROM notes WHERE body IN ('the greatest', 'the least', 'zero')",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(ends, 3);
        let orphans: i64 = dst
            .query_one(
                "SELECT count(*) FROM notes n WHERE account IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.number = n.account)",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(orphans, 0);
    }
}

#[tokio::test]
async fn masked_keys_sync_follow_deltas_and_verify_and_repair_by_the_masked_key() {
    let keyed = Keyed::start("masked_keys_watermark", "", "").await;
    let dbs = &keyed.dbs;
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &keyed.policy,
    ])
    .success();
    // policy init proposes the same for a key made of SSNs: a bijective fake, and the same
    // rule on the foreign key to it; its proposal passes policy check.
    let proposed = keyed.files.write("proposed.toml", "");
    maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--output",
        &proposed,
    ])
    .success();
    let text = std::fs::read_to_string(&proposed).unwrap();
    let init = maskbus_mask::Policy::from_toml("init", &text).unwrap();
    for (table, column) in [("customers", "ssn"), ("accounts", "customer_ssn")] {
        let rule = init.entity(table).and_then(|e| e.rule(column)).unwrap();
        assert_eq!(rule.name(), "pseudonym ssn", "{table}.{column}:\n{text}");
    }
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &proposed,
    ])
    .success();

    keyed.sync();
    keyed.assert_masked().await;
    keyed.verify_equal();

    // A delta in the source: new customers with accounts and notes, changed balances.
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "INSERT INTO customers SELECT ssn_of(i), 'Late ' || i FROM generate_series(3000, 3009) i;
         INSERT INTO accounts SELECT 4000000000 + i * 7, ssn_of(3000 + i % 10), 0 FROM generate_series(6000, 6019) i;
         INSERT INTO notes SELECT i, 4000000000 + (6000 + i % 20) * 7, 'late ' || i FROM generate_series(3001, 3050) i;
         UPDATE accounts SET balance = balance + 1 WHERE number % 1000 = 0;",
    )
    .await
    .unwrap();
    keyed.sync();
    keyed.assert_masked().await;
    keyed.verify_equal();

    // Drift made by hand in the target, by masked keys: a lost note, a changed balance, an
    // extra note.
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(
        "DELETE FROM notes WHERE id = (SELECT min(id) FROM notes WHERE body LIKE 'about%');
         UPDATE accounts SET balance = -1 WHERE number = (SELECT min(number) FROM accounts);
         INSERT INTO notes SELECT coalesce(max(id), 0) + 1, NULL, 'extra' FROM notes WHERE id < 2147483647;",
    )
    .await
    .unwrap();
    let drift = maskbus(&["verify", "--config", &keyed.consumer, "--json"]);
    assert_eq!(drift.code, 4, "{}{}", drift.stdout, drift.stderr);
    let report: serde_json::Value = serde_json::from_str(&drift.stdout).unwrap();
    let count = |entity: &str, what: &str| {
        report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["entity"] == entity)
            .map(|t| t[what].as_array().unwrap().len())
            .unwrap()
    };
    assert_eq!(count("public.notes", "missing"), 1, "{}", drift.stdout);
    assert_eq!(count("public.notes", "extra"), 1, "{}", drift.stdout);
    assert_eq!(count("public.accounts", "different"), 1, "{}", drift.stdout);
    assert_eq!(count("public.customers", "missing"), 0, "{}", drift.stdout);
    maskbus(&["verify", "--config", &keyed.consumer, "--repair"]).success();
    keyed.assert_masked().await;
    keyed.verify_equal();
    // The bus carried masked keys only; the audit, holding the key, tells the fakes apart.
    crate::zoo::assert_audit_clean(dbs, &keyed.producer);
}

#[tokio::test]
async fn masked_keys_stream_updates_key_changes_and_deletes_by_the_masked_key() {
    let keyed = Keyed::start(
        "masked_keys_stream",
        "slot = \"maskbus_masked_keys\"",
        "mode = \"stream\"\nrequest_timeout = \"3s\"",
    )
    .await;
    keyed.sync();
    keyed.assert_masked().await;
    let src = connect(&keyed.dbs.url("src")).await;
    src.batch_execute(
        "INSERT INTO customers VALUES (ssn_of(5000), 'Streamed');
         INSERT INTO accounts VALUES (4100000000, ssn_of(5000), 10);
         INSERT INTO notes VALUES (5000, 4100000000, 'streamed');
         UPDATE accounts SET balance = 99 WHERE number = 4000000007;
         UPDATE notes SET id = 900000 WHERE id = 5;
         DELETE FROM notes WHERE id IN (7, 3000);
         UPDATE accounts SET customer_ssn = ssn_of(5000) WHERE number = 4000000014;",
    )
    .await
    .unwrap();
    keyed.sync();
    keyed.assert_masked().await;
    keyed.verify_equal();
}
