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
    INSERT INTO notes VALUES (2147483647, NULL, 'the greatest'), (-2147483648, NULL, 'the least'), (0, NULL, 'zero'),
                             (-9, NULL, 'minus nine');
    CREATE TABLE emp (id integer PRIMARY KEY, boss integer REFERENCES emp (id));
    INSERT INTO emp SELECT i, CASE WHEN i > 1 THEN i / 2 END FROM generate_series(1, 1200) i;
    CREATE TABLE taxpayers (tin bigint PRIMARY KEY, name text NOT NULL);
    CREATE TABLE returns (year int, tin bigint REFERENCES taxpayers (tin), PRIMARY KEY (year, tin));
    INSERT INTO taxpayers SELECT replace(ssn_of(i), '-', '')::bigint, 'Payer ' || i FROM generate_series(0, 499) i;
    INSERT INTO returns SELECT 2024, tin FROM taxpayers;";

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

[emp]
id = { pseudonym = "digits" }
boss = { pseudonym = "digits" }

[taxpayers]
tin = { pseudonym = "ssn" }
name = { pseudonym = "last_name" }

[returns]
year = "keep"
tin = { pseudonym = "ssn" }
"#;

/// What the tests here add to a [`Synced`] source: the checks of a masked target.
trait Keyed {
    fn verify_equal(&self);
    async fn assert_masked(&self);
}

impl Keyed for Synced {
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
            ("SELECT tin::text FROM returns", 0),
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
                "SELECT count(*) FROM notes WHERE body IN ('the greatest', 'the least', 'zero', 'minus nine')",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(ends, 4);
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
    let keyed = Synced::start("masked_keys_watermark", SCHEMA, POLICY).await;
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
    for (table, column) in [
        ("customers", "ssn"),
        ("accounts", "customer_ssn"),
        ("taxpayers", "tin"),
        ("returns", "tin"),
    ] {
        let rule = init.entity(table).and_then(|e| e.rule(column)).unwrap();
        assert_eq!(rule.name(), "pseudonym ssn", "{table}.{column}:\n{text}");
    }
    // An account number is a key here, and a foreign key that holds it says what it is.
    for (table, column) in [("accounts", "number"), ("notes", "account")] {
        let rule = init.entity(table).and_then(|e| e.rule(column)).unwrap();
        assert_eq!(rule.name(), "pseudonym digits", "{table}.{column}:\n{text}");
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

    keyed.sync().success();
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
    keyed.sync().success();
    keyed.assert_masked().await;
    keyed.verify_equal();

    // Drift made by hand in the target, by masked keys: a lost note, a changed balance, an
    // extra note.
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(
        "DELETE FROM notes WHERE id = (SELECT min(id) FROM notes WHERE body LIKE 'about%');
         UPDATE accounts SET balance = -1 WHERE number = (SELECT min(number) FROM accounts);
         INSERT INTO notes SELECT coalesce(max(id), 0) + 1, NULL, 'extra' FROM notes WHERE id < 2147483647;
         UPDATE emp SET boss = NULL WHERE id IN (SELECT id FROM emp WHERE boss IS NOT NULL ORDER BY id LIMIT 2);",
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
    assert_eq!(count("public.emp", "different"), 2, "{}", drift.stdout);
    maskbus(&["verify", "--config", &keyed.consumer, "--repair"]).success();
    keyed.assert_masked().await;
    keyed.verify_equal();
    // The bus carried masked keys only; the audit, holding the key, tells the fakes apart.
    crate::zoo::assert_audit_clean(dbs, &keyed.producer);
}

#[tokio::test]
async fn masked_keys_stream_updates_key_changes_and_deletes_by_the_masked_key() {
    let keyed = Synced::start_with(
        "masked_keys_stream",
        SCHEMA,
        POLICY,
        "slot = \"maskbus_masked_keys\"",
        "mode = \"stream\"\nrequest_timeout = \"3s\"",
    )
    .await;
    keyed.sync().success();
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
    keyed.sync().success();
    keyed.assert_masked().await;
    keyed.verify_equal();
}

/// A foreign key to a masked UNIQUE column of a table whose key is kept: a missing parent is
/// fetched by the masked value the child holds, and a lookup by a real value (a guess) finds
/// nothing.
#[tokio::test]
async fn a_lookup_by_a_masked_column_finds_the_masked_value_and_never_the_real_one() {
    let dbs = TestDatabases::create("masked_keys_lookup", &["src", "dst", "bus"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE u (id int PRIMARY KEY, code text UNIQUE NOT NULL);
         CREATE TABLE uc (id int PRIMARY KEY, code text REFERENCES u (code));
         INSERT INTO u SELECT i, '203-45-' || lpad(i::text, 4, '0') FROM generate_series(1, 100) i;
         INSERT INTO uc SELECT i, '203-45-' || lpad(i::text, 4, '0') FROM generate_series(1, 100) i;",
    )
    .await
    .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("masked_keys_lookup");
    // A pseudonym of digits on values without any would pass them as they are: refused.
    src.batch_execute(
        "CREATE TABLE logins (login text PRIMARY KEY);
         INSERT INTO logins SELECT 'user.' || chr(97 + i % 26) || chr(97 + i / 26) || '@yahoo.com'
           FROM generate_series(0, 99) i;",
    )
    .await
    .unwrap();
    let digitless = files.write(
        "digitless.toml",
        "[logins]\nlogin = { pseudonym = \"digits\" }\n",
    );
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &digitless,
    ]);
    assert_ne!(check.code, 0, "{}", check.stdout);
    assert!(
        check.stdout.contains("changes digits only"),
        "{}",
        check.stdout
    );
    src.batch_execute("DROP TABLE logins").await.unwrap();
    let policy = files.write(
        "policy.toml",
        "[u]\nid = \"keep\"\ncode = { pseudonym = \"ssn\" }\n[uc]\nid = \"keep\"\ncode = { pseudonym = \"ssn\" }\n",
    );
    let (producer, consumer) = write_agent_configs(
        &files,
        &crate::zoo::zoo_urls(&dbs),
        &format!("policy = \"{policy}\"\n"),
        "",
    );
    let _running = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    // The child's row and its parent lost in the target, the child changed in the source: the
    // next pass brings the child, and its parent by the masked code.
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute("DELETE FROM uc WHERE id = 50; DELETE FROM u WHERE id = 50;")
        .await
        .unwrap();
    src.batch_execute("UPDATE uc SET code = code WHERE id = 50;")
        .await
        .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let masked: String = dst
        .query_one("SELECT code FROM u WHERE id = 50", &[])
        .await
        .unwrap()
        .get(0);
    assert_ne!(masked, "203-45-0050");

    // Rows asked by code on the bus: the masked value finds its row, the real one nothing.
    let bus = connect(&dbs.url("bus")).await;
    for (n, code) in [(1, masked.as_str()), (2, "203-45-0050")] {
        let body = format!(
            r#"{{"type":"rows","v":2,"entity":"public.u","columns":["code"],"keys":[["{code}"]]}}"#
        );
        let reply_to = format!("lookup.{n}");
        maskbus(&[
            "bus",
            "send",
            "--bus",
            &dbs.url("bus"),
            "--to",
            "maskbus.producer",
            "--kind",
            "request",
            "--reply-to",
            &reply_to,
            "--body",
            &body,
        ])
        .success();
        let answer = "SELECT body FROM mq.mail WHERE mailbox = $1";
        wait_until("the producer's answer", || {
            let (bus, reply_to) = (&bus, &reply_to);
            async move { bus.query_opt(answer, &[reply_to]).await.unwrap().is_some() }
        })
        .await;
        let reply: String = bus.query_one(answer, &[&reply_to]).await.unwrap().get(0);
        let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
        let rows = reply["rows"].as_array().map_or(0, Vec::len);
        assert_eq!(rows, if n == 1 { 1 } else { 0 }, "{code}: {reply}");
        assert!(!reply.to_string().contains("203-45-0050"), "{reply}");
    }
}
