//! `maskbus wire-audit` against a real bus: zero findings on a real sync, every planted leak
//! found, the evidence never revealing a value.

use crate::support::*;

#[tokio::test]
async fn a_real_sync_audits_clean_and_moves_the_audit_watermark() {
    let dbs = bank_databases("audit_clean").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "80"]).success();
    let files = ConfigFiles::new("audit_clean");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    let run = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
        "--compare-sql",
    ])
    .success();
    let summary = run.stdout.lines().last().unwrap();
    assert!(
        summary.starts_with("scanned ") && summary.ends_with(": 0 findings"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("design's SQL one-liner: 0 messages match"),
        "{}",
        run.stdout
    );
    // The eleven columns the bank's policy masks; it keeps none that the audit's own judgement
    // holds personal (the ZIP code it once kept is redacted), so the audit has no such note.
    assert!(
        run.stderr.contains("real values from 11 columns")
            && !run
                .stderr
                .contains("columns personal that the policy keeps"),
        "{}",
        run.stderr
    );

    let json = maskbus(&["wire-audit", "--bus", &dbs.url("bus"), "--json"]).success();
    let last: serde_json::Value =
        serde_json::from_str(json.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["findings"], 0);
    // Every message of the sync was scanned: a request and at least one reply per table.
    let bus = connect(&dbs.url("bus")).await;
    let mail: i64 = bus
        .query_one("SELECT count(*) FROM mq.mail", &[])
        .await
        .unwrap()
        .get(0);
    assert!(mail >= 10, "{mail} messages");
    assert!(last["scanned"].as_u64().unwrap() >= mail as u64, "{last}");

    // A clean audit moves the watermark, so purge can now delete what it scanned.
    let purge = maskbus(&[
        "bus",
        "purge",
        "--bus",
        &dbs.url("bus"),
        "--older-than",
        "0s",
    ])
    .success();
    assert!(
        !purge.stdout.contains("no wire audit has scanned"),
        "{}",
        purge.stdout
    );
}

#[tokio::test]
async fn planted_leaks_are_all_found_and_never_shown() {
    let dbs = bank_databases("audit_leaks").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    let bus = dbs.url("bus");
    let src = connect(&dbs.url("src")).await;
    let last_name: String = src
        .query_one("SELECT last_name FROM customers ORDER BY id LIMIT 1", &[])
        .await
        .unwrap()
        .get(0);
    let leaks = [
        r#"{"note": "224-30-8280"}"#.to_string(),
        r#"{"note": "２２４ ３０ ８２８０"}"#.to_string(),
        "{\"pan\": \"4111\u{200B}1111\u{200B}1111\u{200B}1111\"}".to_string(),
        r#"{"a": "4111 1111", "b": "1111 1111"}"#.to_string(),
        r#"{"224308280": "in a key"}"#.to_string(),
        r#"{"x": "\u0032\u0032\u0034-30-8280"}"#.to_string(),
        r#"{"deep": [[{"v": ["dave@yahoo.com"]}]]}"#.to_string(),
        format!(r#"{{"note": "Dear Mr {}"}}"#, last_name.to_uppercase()),
    ];
    for body in &leaks {
        maskbus(&[
            "bus", "send", "--bus", &bus, "--to", "planted", "--body", body,
        ])
        .success();
    }
    // The bus keeps bodies as text, so a participant can send one that is not JSON at all: the
    // audit reads it as text.
    connect(&bus)
        .await
        .execute(
            "SELECT mq.send('planted', 'request', ARRAY['x'], NULL, ARRAY[$1])",
            &[&r#"{"cut": "ssn 224-30-8280, then"#],
        )
        .await
        .unwrap();
    let run = maskbus(&[
        "wire-audit",
        "--bus",
        &bus,
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
        "--compare-sql",
        "--json",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let findings = &lines[..lines.len() - 1];
    let mut messages: Vec<i64> = findings
        .iter()
        .map(|f| f["message"].as_i64().unwrap())
        .collect();
    messages.dedup();
    assert_eq!(
        messages.len(),
        leaks.len() + 1,
        "every planted message is flagged: {findings:?}"
    );
    assert!(
        findings.iter().any(|f| f["detector"] == "source_value"),
        "the real surname is found"
    );
    // The one-liner sees only the three dashed ASCII SSNs (`bus send` decoded the escaped one
    // on the way in); full-width, zero-width, split, keyed-in, email and surname leaks pass it.
    assert_eq!(lines.last().unwrap()["sql_one_liner"], 3);
    for secret in [
        "224-30-8280",
        "224308280",
        "4111111111111111",
        "dave@yahoo.com",
        last_name.as_str(),
    ] {
        assert!(!run.stdout.contains(secret), "the report reveals {secret}");
        assert!(!run.stderr.contains(secret), "the log reveals {secret}");
    }

    // Without the source, the surname is not a pattern: eight of nine messages.
    let run = maskbus(&["wire-audit", "--bus", &bus]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("scanned 9 messages"),
        "{}",
        run.stdout
    );
    // Each finding is recorded once, open until an auditor acknowledges it.
    assert!(run.stdout.contains("open findings"), "{}", run.stdout);

    // The report a CI job publishes: counts by detector and mailbox, not a character of a value.
    let run = maskbus(&[
        "wire-audit",
        "--bus",
        &bus,
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
        "--format",
        "markdown",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("**PII found on the bus**"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("| messages scanned | 9 |"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("| ssn | `planted` |"), "{}", run.stdout);
    assert!(
        run.stdout.contains("| source_value | `planted` | 1 |"),
        "{}",
        run.stdout
    );
    for secret in ["8280", "4111", "dave", last_name.as_str()] {
        assert!(!run.stdout.contains(secret), "the report reveals {secret}");
    }
}

#[tokio::test]
async fn an_unreachable_bus_is_an_error_not_a_clean_bill() {
    let run = maskbus(&["wire-audit", "--bus", "postgres://postgres@127.0.0.1:1/bus"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bus database"), "{}", run.stderr);
}
