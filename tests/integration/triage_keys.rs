//! Triage and keys (issue 52, item 5 and the triage complaints of item 6), tried against a real
//! bus: a reason must say why in words and hold no finding, on the CLI and in the bus's own SQL;
//! findings are acknowledged several at once (by id, by detector and path, by detector and
//! column); `wire-audit --config` takes the bus and the pseudonym key from the producer's
//! config; a guessable key is refused where `maskbus key new`'s pass; the rules fingerprint on
//! the bus holds no trace of the key; mail to a mailbox without an owner is refused.

use crate::support::*;
use maskbus_pg::tokio_postgres::error::SqlState;

/// Bodies an operator's notes and a producer's pages might carry: SSN findings at `$.note`, and
/// in the `ssn` column of `public.users` (at two places of the row) and of `public.orders`.
const NOTES: &[&str] = &[
    r#"{"note":"SSN 536-22-1471"}"#,
    r#"{"note":"SSN 401-52-7788"}"#,
    r#"{"note":"SSN 523-41-9987"}"#,
    r#"{"note":"SSN 536-22-1481"}"#,
    r#"{"note":"SSN 401-52-7798"}"#,
];
const PAGES: &[&str] = &[
    r#"{"entity":"public.users","columns":["id","ssn"],"rows":[["1","536-22-1472"],["2","401-52-7789"]]}"#,
    r#"{"entity":"users","columns":["ssn","id"],"rows":[["536-22-1473","3"]]}"#,
    r#"{"entity":"public.orders","columns":["ssn","id"],"rows":[["523-41-9988","1"]]}"#,
];

/// A bus (made and audited by the cluster's superuser, who holds every part) whose audit
/// recorded an SSN finding for each body of [`NOTES`] and each SSN cell of [`PAGES`].
async fn bus_with_findings(test: &str) -> TestDatabases {
    let dbs = TestDatabases::create(test, &["bus"]).await;
    let bus = dbs.url("bus");
    maskbus(&["bus", "init", "--bus", &bus]).success();
    for body in NOTES.iter().chain(PAGES) {
        maskbus(&[
            "bus", "send", "--bus", &bus, "--to", "notes", "--body", body,
        ])
        .success();
    }
    let audit = maskbus(&["wire-audit", "--bus", &bus]);
    assert_eq!(audit.code, 1, "{}\n{}", audit.stdout, audit.stderr);
    dbs
}

/// The open SSN findings: id and path, in id order.
async fn open_ssn_findings(bus: &str) -> Vec<(i64, String)> {
    connect(bus)
        .await
        .query(
            "SELECT id, path FROM mq.audit_findings WHERE detector = 'ssn' AND acked_at IS NULL ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// The SSN finding of the note with `digits`.
async fn note_finding(bus: &str, digits: &str) -> i64 {
    connect(bus)
        .await
        .query_one(
            "SELECT f.id FROM mq.audit_findings f JOIN mq.mail m ON m.id = f.message_id
              WHERE f.detector = 'ssn' AND f.path = '$.note' AND m.body LIKE '%' || $1 || '%'",
            &[&digits],
        )
        .await
        .unwrap()
        .get(0)
}

const BLANKS: &[(&str, &str)] = &[
    ("U+200B", "\u{200B}"),
    ("U+3000", "\u{3000}"),
    ("U+00A0", "\u{00A0}"),
    ("U+2800", "\u{2800}"),
    ("all four", "\u{200B}\u{3000}\u{00A0}\u{2800}"),
    ("Hangul fillers", "\u{3164}\u{3164}\u{FFA0}"),
];

#[tokio::test]
async fn a_reason_that_shows_no_words_is_refused_by_the_cli_and_by_the_bus() {
    let dbs = bus_with_findings("tk_blank").await;
    let bus = dbs.url("bus");
    let id = note_finding(&bus, "536-22-1471").await;
    for (name, blank) in BLANKS {
        let run = maskbus(&[
            "wire-audit",
            "--bus",
            &bus,
            "--ack",
            &id.to_string(),
            "--reason",
            blank,
        ]);
        assert_eq!(run.code, 2, "{name}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.contains("in words"), "{name}: {}", run.stderr);
    }
    // A participant calling the bus's SQL by hand meets the same rule, in both functions.
    let client = connect(&bus).await;
    for (name, blank) in BLANKS {
        for sql in [
            "SELECT mq.ack_finding($1, $2)",
            "SELECT mq.ack_findings(ARRAY[$1::bigint], $2)",
        ] {
            let error = client.query(sql, &[&id, blank]).await.unwrap_err();
            assert_eq!(
                error.code(),
                Some(&SqlState::PROGRAM_LIMIT_EXCEEDED),
                "{name}: {sql}"
            );
            let said = maskbus_pg::bus_error_text(&error);
            assert!(said.contains("in words"), "{name}: {said}");
        }
    }
    assert_eq!(
        open_ssn_findings(&bus).await.len(),
        NOTES.len() + 4,
        "nothing was acknowledged"
    );
    // Words in any script pass.
    maskbus(&[
        "wire-audit",
        "--bus",
        &bus,
        "--ack",
        &id.to_string(),
        "--reason",
        "测试数据：运营者的示例",
    ])
    .success();
}

#[tokio::test]
async fn a_reason_holding_an_ssn_is_refused_and_never_echoed() {
    let dbs = bus_with_findings("tk_pii_reason").await;
    let bus = dbs.url("bus");
    let id = note_finding(&bus, "401-52-7788").await.to_string();
    for reason in [
        "the operator's test note, 224-30-8280 is a published example number",
        "a card of ours, 4111 1111 1111 1111",
    ] {
        let run = maskbus(&[
            "wire-audit",
            "--bus",
            &bus,
            "--ack",
            &id,
            "--reason",
            reason,
        ]);
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("write it without the value"),
            "{}",
            run.stderr
        );
        for value in ["224-30-8280", "4111 1111"] {
            assert!(!run.stderr.contains(value), "{}", run.stderr);
            assert!(!run.stdout.contains(value), "{}", run.stdout);
        }
    }
    let stored: i64 = connect(&bus)
        .await
        .query_one(
            "SELECT count(*) FROM mq.audit_findings WHERE ack_reason IS NOT NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(stored, 0, "a reason holding an SSN was stored");
    maskbus(&[
        "wire-audit",
        "--bus",
        &bus,
        "--ack",
        &id,
        "--reason",
        "the operator's test note; the number is a published example",
    ])
    .success();
}

#[tokio::test]
async fn findings_are_acknowledged_several_at_once_by_id_path_or_column() {
    let dbs = bus_with_findings("tk_batch").await;
    let bus = dbs.url("bus");
    let reason = "seeded test data of the issue 52 suite";
    let ack = |extra: &[&str]| {
        let mut args = vec!["wire-audit", "--bus", &bus, "--reason", reason];
        args.extend_from_slice(extra);
        maskbus(&args)
    };
    let n: Vec<String> = {
        let mut ids = Vec::new();
        for digits in ["536-22-1471", "401-52-7788", "523-41-9987"] {
            ids.push(note_finding(&bus, digits).await.to_string());
        }
        ids
    };
    // Several ids, one reason.
    let two = ack(&["--ack", &n[0], "--ack", &n[1]]).success();
    assert!(
        two.stdout.contains("2 findings acknowledged"),
        "{}",
        two.stdout
    );
    // A list, one of which is acknowledged already: the other is, and the first is named.
    let again = ack(&["--ack", &format!("{},{}", n[1], n[2])]);
    assert_eq!(again.code, 1, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again
            .stdout
            .contains(&format!("finding {} acknowledged", n[2])),
        "{}",
        again.stdout
    );
    assert!(
        again.stderr.contains(&format!("no open finding {}", n[1])),
        "{}",
        again.stderr
    );
    // A detector and a path: the two notes left.
    let notes = ack(&["--ack-detector", "ssn", "--ack-path", "$.note"]).success();
    assert!(
        notes.stdout.contains("2 findings acknowledged"),
        "{}",
        notes.stdout
    );
    let open = open_ssn_findings(&bus).await;
    assert_eq!(open.len(), 4, "{open:?}");
    // A detector and a column: users.ssn wherever the page puts it, not orders.ssn.
    let users = ack(&["--ack-detector", "ssn", "--ack-column", "public.users.ssn"]).success();
    assert!(
        users.stdout.contains("3 findings acknowledged"),
        "{}",
        users.stdout
    );
    let open = open_ssn_findings(&bus).await;
    assert_eq!(open.len(), 1, "{open:?}");
    // A path with any index: the orders' cell.
    ack(&["--ack-detector", "ssn", "--ack-path", "$.rows[*][0]"]).success();
    assert!(open_ssn_findings(&bus).await.is_empty());
    // Nothing left to match: said, exit 1.
    let none = ack(&["--ack-detector", "ssn", "--ack-column", "orders.ssn"]);
    assert_eq!(none.code, 1, "{}\n{}", none.stdout, none.stderr);
    assert!(
        none.stderr
            .contains("no open ssn finding in public.orders.ssn"),
        "{}",
        none.stderr
    );
    let reasons: Vec<String> = first_column(
        &connect(&bus).await,
        "SELECT DISTINCT ack_reason FROM mq.audit_findings WHERE detector = 'ssn'",
    )
    .await;
    assert_eq!(reasons, vec![reason.to_string()]);
}

/// One table whose SSNs (UNIQUE) are masked by the bijective `ssn` pseudonym: its fakes look
/// like real SSNs, and only the pseudonym key tells them apart.
const SSN_SCHEMA: &str = "
    CREATE TABLE people (id int PRIMARY KEY, ssn text NOT NULL UNIQUE);
    INSERT INTO people SELECT i, '536-' || lpad((10 + i % 80)::text, 2, '0') || '-' || lpad((1000 + i)::text, 4, '0')
      FROM generate_series(1, 200) i;";
const SSN_POLICY: &str = "[people]\nid = \"keep\"\nssn = { pseudonym = \"ssn\" }\n";

#[tokio::test]
async fn wire_audit_takes_the_bus_and_the_pseudonym_key_from_the_producer_config() {
    let synced = Synced::start("tk_config", SSN_SCHEMA, SSN_POLICY).await;
    synced.sync().success();
    // The producer's config alone: the bus, the source, the policy and the key.
    let audit = maskbus(&["wire-audit", "--config", &synced.producer]);
    assert_eq!(audit.code, 0, "{}\n{}", audit.stdout, audit.stderr);
    // README's step 7 before: the source and the policy without the key flag every fake.
    let dbs = &synced.dbs;
    let keyless = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--source",
        &dbs.url("src"),
        "--policy",
        &synced.policy,
    ]);
    assert_eq!(keyless.code, 1, "{}\n{}", keyless.stdout, keyless.stderr);
    let flagged = keyless
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == "ssn"))
        .count();
    assert!(flagged >= 200, "every fake is flagged: {}", keyless.stdout);
    assert!(
        keyless.stderr.contains("--config <the producer's config>"),
        "{}",
        keyless.stderr
    );
}

#[tokio::test]
async fn a_bus_from_the_config_whose_role_is_not_the_auditor_is_said_with_the_fix() {
    let roles = TestRoles::create("tk_notaud", &["producer"]).await;
    let dbs = TestDatabases::create("tk_notaud", &["bus"]).await;
    let bus = dbs.url("bus");
    maskbus(&["bus", "init", "--bus", &bus]).success();
    maskbus(&[
        "bus",
        "grant",
        "--bus",
        &bus,
        "--producer",
        roles.name("producer"),
    ])
    .success();
    let files = ConfigFiles::new("tk_notaud");
    let config = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{bus}\"\npolicy = \"{BANK_POLICY_PATH}\"\n",
            roles.url_as(&bus, "producer")
        ),
    );
    let run = maskbus(&["wire-audit", "--config", &config, "--findings"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("pass --bus with the auditor's role"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_guessable_key_is_refused_and_keys_from_key_new_pass() {
    let dbs = TestDatabases::create("tk_keys", &["src", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute("CREATE TABLE people (id int PRIMARY KEY, ssn text); INSERT INTO people VALUES (1, '536-22-1471')")
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("tk_keys");
    let policy = files.write("policy.toml", SSN_POLICY);
    let config = |name: &str, key: &str| {
        files.write(
            name,
            &format!(
                "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{policy}\"\npseudonym_key = \"{key}\"\n",
                dbs.url("bus"),
                dbs.url("src")
            ),
        )
    };
    for (i, typed) in [
        "0123456789abcdef0123456789abcdef01",
        "integration-test-key-0123456789-abcdef",
        "passwordpasswordpasswordpassword",
        "correct horse battery staple and more words",
    ]
    .iter()
    .enumerate()
    {
        let weak = config(&format!("weak{i}.toml"), typed);
        let audit = maskbus(&["wire-audit", "--config", &weak]);
        assert_eq!(audit.code, 2, "{typed}: {}\n{}", audit.stdout, audit.stderr);
        assert!(audit.stderr.contains("guessable"), "{}", audit.stderr);
        assert!(audit.stderr.contains("maskbus key new"), "{}", audit.stderr);
        assert!(
            !audit.stderr.contains(typed),
            "the key shows: {}",
            audit.stderr
        );
    }
    // The producer refuses it at start, before it serves anything.
    let weak = config("weak.toml", "0123456789abcdef0123456789abcdef01");
    let mut producer = Background::spawn(&["run", "--config", &weak]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let code = loop {
        if let Some(status) = producer.child.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the producer started with a guessable key"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(2));
    for i in 0..3 {
        let key = maskbus(&["key", "new"]).success().stdout.trim().to_string();
        assert_eq!(key.len(), 64, "{key}");
        assert!(maskbus_mask::estimate_key_bits(&key) >= f64::from(maskbus_mask::MIN_KEY_BITS));
        let good = config(&format!("good{i}.toml"), &key);
        let audit = maskbus(&["wire-audit", "--config", &good]);
        assert_eq!(audit.code, 0, "{}\n{}", audit.stdout, audit.stderr);
    }
}

#[tokio::test]
async fn the_rules_fingerprint_on_the_bus_holds_no_trace_of_the_key() {
    let synced = Synced::start("tk_fingerprint", SSN_SCHEMA, SSN_POLICY).await;
    synced.sync().success();
    let recorded: Vec<(String, String)> = connect(&synced.dbs.url("dst"))
        .await
        .query("SELECT entity, fingerprint FROM maskbus.table_rules", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let unkeyed = maskbus_mask::Policy::from_toml("p", SSN_POLICY).unwrap();
    let keyed = maskbus_mask::Policy::from_toml("p", SSN_POLICY)
        .unwrap()
        .with_key(maskbus_mask::PseudonymKey::new(TEST_KEY.as_bytes()));
    let people = unkeyed.rules_fingerprint("public.people").unwrap();
    assert_eq!(keyed.rules_fingerprint("public.people").unwrap(), people);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(
        recorded[0].1, people,
        "the fingerprint the producer served is a function of the key"
    );
}

#[tokio::test]
async fn mail_to_a_mailbox_without_an_owner_is_refused() {
    let roles = TestRoles::create("tk_owner", &["consumer", "operator"]).await;
    let dbs = TestDatabases::create("tk_owner", &["bus"]).await;
    let bus = dbs.url("bus");
    maskbus(&["bus", "init", "--bus", &bus]).success();
    maskbus(&[
        "bus",
        "grant",
        "--bus",
        &bus,
        "--consumer",
        roles.name("consumer"),
        "--operator",
        roles.name("operator"),
    ])
    .success();
    let operator = roles.url_as(&bus, "operator");
    let parked = maskbus(&[
        "bus",
        "send",
        "--bus",
        &operator,
        "--to",
        "nobody.owns.this",
        "--body",
        "{}",
    ]);
    assert_eq!(parked.code, 2, "{}\n{}", parked.stdout, parked.stderr);
    assert!(parked.stderr.contains("has no owner"), "{}", parked.stderr);
    assert!(
        parked.stderr.contains("maskbus bus grant"),
        "{}",
        parked.stderr
    );
    // A mailbox someone owns takes mail as before.
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &operator,
        "--to",
        "maskbus.consumer",
        "--body",
        "{}",
    ])
    .success();
    // By hand, as a participant: refused by the bus itself.
    let consumer = connect(&roles.url_as(&bus, "consumer")).await;
    let error = consumer
        .execute(
            "SELECT mq.send('nobody.owns.this', 'note', ARRAY[NULL::text], NULL, ARRAY['{}'])",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE));
    let parked: i64 = connect(&bus)
        .await
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE mailbox = 'nobody.owns.this'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(parked, 0, "mail was parked where nobody reads it");
}
