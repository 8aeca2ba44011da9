//! The side doors of issue 25, tried as the attacker would: a participant shadowing the catalog
//! to make itself superuser, a role outside the bus listening in, replies aimed at a mailbox
//! nobody drains, a flood of requests, a 1 MB correlation id, and an error reply carrying the
//! server's text (which quotes real values).

use crate::roles::{configs, deployed, Deployment};
use crate::support::*;
use maskbus_pg::tokio_postgres::error::SqlState;

/// Every catalog relation the bus's functions read, and every table of the bus by its bare
/// name: what a participant would shadow with a temporary object.
const SHADOWS: &[&str] = &[
    "CREATE TEMP VIEW pg_roles AS SELECT session_user::name AS rolname, true AS rolsuper, \
     0::oid AS oid",
    "CREATE TEMP VIEW pg_authid AS SELECT session_user::name AS rolname, true AS rolsuper",
    "CREATE TEMP VIEW pg_namespace AS SELECT 'mq'::name AS nspname",
    "CREATE TEMP VIEW pg_proc AS SELECT 'x'::name AS proname",
    "CREATE TEMP TABLE mailboxes (mailbox text, owner name)",
    "CREATE TEMP TABLE duties (role name, duty text)",
    "CREATE TEMP TABLE mail (id bigint, mailbox text, sender text, acked_at timestamptz)",
    "CREATE TEMP TABLE messages (id bigint, mailbox text)",
    "CREATE TEMP TABLE limits (max_pending_per_mailbox integer)",
    "CREATE TEMP TABLE audit_state (scanned_through bigint)",
];

fn bus_name(dbs: &TestDatabases) -> String {
    dbs.names()
        .iter()
        .find(|n| n.ends_with("_bus"))
        .unwrap()
        .clone()
}

async fn expect_refused(client: &maskbus_pg::tokio_postgres::Client, sql: &str, code: &SqlState) {
    let error = client
        .batch_execute(sql)
        .await
        .expect_err(&format!("must be refused: {sql}"));
    assert_eq!(
        error.code(),
        Some(code),
        "{sql}: {}",
        maskbus_pg::bus_error_text(&error)
    );
}

#[tokio::test]
async fn no_participant_shadows_the_catalog_and_no_outsider_reaches_the_channel() {
    let deployment = deployed("shadow", "5", &["intruder", "outsider"]).await;
    let Deployment { dbs, roles } = &deployment;
    maskbus(&[
        "bus",
        "grant",
        "--bus",
        &dbs.url("bus"),
        "--consumer",
        roles.name("intruder"),
        "--consumer-mailbox",
        "intruder.box",
    ])
    .success();
    // A request of the real consumer's, pending in the producer's mailbox: what the attacker wants.
    let consumer = connect(&roles.url_as(&dbs.url("bus"), "consumer")).await;
    consumer
        .execute(
            "SELECT mq.send('maskbus.producer', 'request', ARRAY['c1'], 'maskbus.consumer', ARRAY['{}'])",
            &[],
        )
        .await
        .unwrap();

    // No participant may create a temporary object on the bus at all.
    for label in ["producer", "consumer", "auditor", "operator", "intruder"] {
        let client = connect(&roles.url_as(&dbs.url("bus"), label)).await;
        expect_refused(&client, SHADOWS[0], &SqlState::INSUFFICIENT_PRIVILEGE).await;
    }

    // And should a DBA give TEMP back by mistake, the shadows change nothing: pg_temp is
    // searched last and the catalogs are schema-qualified. Each participant in turn shadows
    // every catalog relation and bus table, claims every right in its shadows, and tries every
    // door that is not its own.
    let admin = connect(&dbs.url("bus")).await;
    let denied = SqlState::INSUFFICIENT_PRIVILEGE;
    let doors: &[(&str, &[&str])] = &[
        ("SELECT * FROM mq.claim('maskbus.producer', 10, 30, 5)", &["producer"]),
        ("SELECT * FROM mq.claim('maskbus.consumer', 10, 30, 5)", &["consumer"]),
        ("SELECT mq.record_audit(1000000)", &["auditor"]),
        ("SELECT mq.audit_horizon()", &["auditor"]),
        ("SELECT mq.ack_finding(1, 'mine now')", &["auditor"]),
        ("SELECT count(*) FROM mq.mail", &["auditor"]),
        ("SELECT * FROM mq.purge(0, true)", &["operator"]),
        ("SELECT mq.redrive('maskbus.consumer')", &["operator"]),
        (
            "SELECT mq.send('maskbus.producer', 'request', ARRAY['x'], 'maskbus.consumer', ARRAY['{}'])",
            &["consumer"],
        ),
        ("SELECT mq.grant_participant(session_user, 'auditor')", &[]),
        ("UPDATE mq.limits SET max_pending_per_mailbox = 1000000000", &[]),
    ];
    for label in ["producer", "consumer", "auditor", "operator", "intruder"] {
        admin
            .batch_execute(&format!(
                "GRANT TEMPORARY ON DATABASE \"{}\" TO {}",
                bus_name(dbs),
                roles.name(label)
            ))
            .await
            .unwrap();
        let client = connect(&roles.url_as(&dbs.url("bus"), label)).await;
        for shadow in SHADOWS {
            client.batch_execute(shadow).await.unwrap();
        }
        client
            .batch_execute(&format!(
                "INSERT INTO pg_temp.mailboxes VALUES ('maskbus.producer', '{0}'), ('maskbus.consumer', '{0}');
                 INSERT INTO pg_temp.duties VALUES ('{0}', 'auditor'), ('{0}', 'operator')",
                roles.name(label)
            ))
            .await
            .unwrap();
        for (door, owners) in doors {
            if !owners.contains(&label) {
                expect_refused(&client, door, &denied).await;
            }
        }
    }
    // The consumer's request is still pending, unclaimed.
    let pending: i64 = connect(&dbs.url("bus"))
        .await
        .query_one(
            "SELECT count(*) FROM mq.messages WHERE mailbox = 'maskbus.producer' AND attempts = 0",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(pending, 1, "the intruder claimed the producer's request");

    // A role outside the bus cannot connect, so it can neither LISTEN nor NOTIFY there.
    let outside = maskbus_pg::tokio_postgres::connect(
        &roles.url_as(&dbs.url("bus"), "outsider"),
        maskbus_pg::tokio_postgres::NoTls,
    )
    .await
    .err()
    .expect("an outsider must not connect to the bus");
    assert_eq!(outside.code(), Some(&denied));
}

#[tokio::test]
async fn the_bus_bounds_names_ids_reply_addresses_and_volume_per_sender() {
    let deployment = deployed("limits", "5", &["intruder"]).await;
    let Deployment { dbs, roles } = &deployment;
    maskbus(&[
        "bus",
        "grant",
        "--bus",
        &dbs.url("bus"),
        "--consumer",
        roles.name("intruder"),
        "--consumer-mailbox",
        "intruder.box",
    ])
    .success();
    let intruder = connect(&roles.url_as(&dbs.url("bus"), "intruder")).await;
    let limit = SqlState::PROGRAM_LIMIT_EXCEEDED;
    let send = "SELECT mq.send($1, 'request', $2, $3, $4)";
    let body = vec!["{}".to_string()];
    // A 1 MB correlation id, a 1 MB mailbox name.
    let huge = "x".repeat(1 << 20);
    let error = intruder
        .execute(
            send,
            &[
                &"maskbus.producer",
                &vec![huge.clone()],
                &Some("intruder.box"),
                &body,
            ],
        )
        .await
        .unwrap_err();
    assert_eq!(
        error.code(),
        Some(&limit),
        "{}",
        maskbus_pg::bus_error_text(&error)
    );
    let error = intruder
        .execute(send, &[&huge, &vec!["c".to_string()], &None::<&str>, &body])
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&limit));
    // Replies aimed at someone else's mailbox, or at a mailbox nobody owns.
    for elsewhere in ["maskbus.consumer", "nobody.drains.this"] {
        let error = intruder
            .execute(
                send,
                &[
                    &"maskbus.producer",
                    &vec!["c".to_string()],
                    &Some(elsewhere),
                    &body,
                ],
            )
            .await
            .unwrap_err();
        assert_eq!(error.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE));
        assert!(
            maskbus_pg::bus_error_text(&error).contains("replies may go only to a mailbox"),
            "{}",
            maskbus_pg::bus_error_text(&error)
        );
    }
    // More messages in one send than the bus takes.
    let many: Vec<String> = (0..300).map(|n| format!("c{n}")).collect();
    let bodies: Vec<String> = (0..300).map(|_| "{}".to_string()).collect();
    let error = intruder
        .execute(send, &[&"intruder.box", &many, &None::<&str>, &bodies])
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&limit));
    // A quota of unacked messages per sender (lowered here to keep the test small).
    connect(&dbs.url("bus"))
        .await
        .batch_execute("UPDATE mq.limits SET max_pending_per_mailbox = 10")
        .await
        .unwrap();
    let ten: Vec<String> = (0..10).map(|n| format!("c{n}")).collect();
    let ten_bodies: Vec<String> = (0..10).map(|_| "{}".to_string()).collect();
    intruder
        .execute(send, &[&"intruder.box", &ten, &None::<&str>, &ten_bodies])
        .await
        .unwrap();
    let error = intruder
        .execute(send, &[&"intruder.box", &body, &None::<&str>, &body])
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&limit));
    assert!(maskbus_pg::bus_error_text(&error).contains("unacked messages"));
    // The quota is per mailbox: the same sender may still write to another one.
    intruder
        .execute(send, &[&"maskbus.producer", &body, &None::<&str>, &body])
        .await
        .unwrap();
    // Bodies and kinds are bounded too.
    let admin = connect(&dbs.url("bus")).await;
    admin
        .batch_execute(
            "UPDATE mq.limits SET max_body_bytes = 1024, max_pending_per_mailbox = 20000",
        )
        .await
        .unwrap();
    let big = vec![serde_json::json!({ "pad": "x".repeat(2000) }).to_string()];
    let error = intruder
        .execute(send, &[&"maskbus.producer", &body, &None::<&str>, &big])
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&limit));
    let error = intruder
        .execute(
            "SELECT mq.send('maskbus.producer', $1, ARRAY['c'], NULL, ARRAY['{}'])",
            &[&"k".repeat(65)],
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&limit));
    // Nobody can stop the bus by holding a lock: the old advisory key, held by a participant,
    // stops no send (the sender gives up after 5 s if it did).
    let holder = connect(&roles.url_as(&dbs.url("bus"), "intruder")).await;
    holder
        .batch_execute("SELECT pg_advisory_lock(7361029384756102938)")
        .await
        .unwrap();
    let sender = connect(&roles.url_as(&dbs.url("bus"), "consumer")).await;
    sender
        .batch_execute(
            "SET statement_timeout = '5s';
             SELECT mq.send('maskbus.producer', 'request', ARRAY['c'], 'maskbus.consumer', ARRAY['{}'])",
        )
        .await
        .unwrap();
    let error = holder
        .batch_execute("BEGIN; LOCK TABLE mq.send_gate IN EXCLUSIVE MODE; COMMIT")
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE));
    // PUBLIC is never a participant (GRANT ... TO "public" would reopen CONNECT to everyone).
    for name in ["public", "PUBLIC", "no_such_role_at_all"] {
        assert!(
            admin
                .execute(
                    "SELECT mq.grant_participant($1::text::name, 'auditor')",
                    &[&name]
                )
                .await
                .is_err(),
            "{name} was granted a part of the bus"
        );
    }
}

#[tokio::test]
async fn a_flood_of_page_requests_is_held_to_the_requesters_quota_of_replies() {
    let deployment = deployed("flood", "40", &["intruder"]).await;
    let Deployment { dbs, roles } = &deployment;
    maskbus(&[
        "bus",
        "grant",
        "--bus",
        &dbs.url("bus"),
        "--consumer",
        roles.name("intruder"),
        "--consumer-mailbox",
        "intruder.box",
    ])
    .success();
    let files = ConfigFiles::new("flood");
    let (producer, _) = configs(&files, dbs, roles);
    let _producer = Background::spawn(&["run", "--config", &producer]);
    // 250 requests of 10 one-row pages each, in one send: 2,500 replies without a quota, and
    // the intruder never claims them.
    let request = serde_json::json!({
        "type": "page", "v": maskbus_protocol::VERSION, "entity": "public.customers",
        "limit": 1, "pages": 10
    })
    .to_string();
    let ids: Vec<String> = (0..250).map(|n| format!("flood-{n}")).collect();
    let bodies: Vec<String> = (0..250).map(|_| request.clone()).collect();
    let intruder = connect(&roles.url_as(&dbs.url("bus"), "intruder")).await;
    intruder
        .execute(
            "SELECT mq.send('maskbus.producer', 'request', $1, 'intruder.box', $2)",
            &[&ids, &bodies],
        )
        .await
        .unwrap();
    let bus = connect(&dbs.url("bus")).await;
    wait_until("the producer to answer the flood", || async {
        let left: i64 = bus
            .query_one(
                "SELECT count(*) FROM mq.mail WHERE mailbox = 'maskbus.producer' AND acked_at IS NULL",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        left == 0
    })
    .await;
    let pages: i64 = bus
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE mailbox = 'intruder.box' AND kind = 'page'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let refused: i64 = bus
        .query_one(
            "SELECT count(*) FROM mq.dead_letters WHERE mailbox = 'maskbus.producer' AND error LIKE 'quota_exceeded:%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let quota = maskbus_protocol::MAX_PENDING_REPLIES;
    assert!(pages <= quota, "{pages} page replies stand unacked");
    assert!(refused > 0, "no request was refused over the quota");
    assert_eq!(
        pages / 10 + refused,
        250,
        "every request answered or refused"
    );
}

/// Whether `text` holds the SSN `ssn` (`AAA-GG-SSSS`) written with any separators of up to three
/// characters between its groups, or none.
fn holds_ssn(text: &str, ssn: &str) -> bool {
    let groups: Vec<&str> = ssn.split('-').collect();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(groups[0]) {
        let start = from + at;
        let mut pos = start + groups[0].len();
        let mut all = true;
        for group in &groups[1..] {
            let mut found = false;
            for gap in 0..=3 {
                let at = pos + gap;
                let between_ok = bytes[pos..(at).min(bytes.len())]
                    .iter()
                    .all(|b| !b.is_ascii_digit());
                if between_ok && text.get(at..).is_some_and(|rest| rest.starts_with(group)) {
                    pos = at + group.len();
                    found = true;
                    break;
                }
            }
            if !found {
                all = false;
                break;
            }
        }
        if all {
            return true;
        }
        from = start + 1;
    }
    false
}

#[tokio::test]
async fn an_error_on_a_row_holding_a_real_ssn_carries_no_value_to_the_bus_or_either_log() {
    let dbs = seeded("errleak", "20").await;
    let src = connect(&dbs.url("src")).await;
    // A real-looking SSN, issued-shaped, on one customer.
    src.batch_execute(
        "UPDATE customers SET ssn = '219-09-9999' WHERE id = (SELECT min(id) FROM customers)",
    )
    .await
    .unwrap();
    let files = ConfigFiles::new("errleak");
    // A subset condition that fails at run time on the first row it casts: the server's message
    // quotes the value (`invalid input syntax for type bigint: "219-09-9999"`).
    let subsets = files.write(
        "subsets.toml",
        "[subsets.broken]\nwhere = { customers = \"ssn::bigint > 0\" }\n",
    );
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("subsets = \"{subsets}\"\n"),
        "subset = \"broken\"\n",
    );
    let producer_log = files.write("producer.log", "");
    let mut producer_run = Background::spawn_logged(&["run", "--config", &producer], &producer_log);
    let run = maskbus_with_env(
        &["run", "--config", &consumer, "--once"],
        &[("MASKBUS_LOG", "debug")],
    );
    assert_ne!(run.code, 0, "the sync cannot succeed: {}", run.stderr);
    producer_run.kill9();
    let producer_text = std::fs::read_to_string(&producer_log).unwrap();
    assert!(
        producer_text.contains("22P02"),
        "the producer's log names the SQLSTATE: {producer_text}"
    );
    let ssns: Vec<String> = src
        .query("SELECT ssn FROM customers", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    let bus = connect(&dbs.url("bus")).await;
    let bus_text: String = bus
        .query_one(
            "SELECT coalesce(string_agg(concat_ws(' ', body, last_error, correlation_id), ' '), '')
               FROM mq.mail",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let dead_text: String = bus
        .query_one(
            "SELECT coalesce(string_agg(concat_ws(' ', body, error), ' '), '') FROM mq.dead_letters",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(bus_text.contains("source_failed"), "{bus_text}");
    for (what, text) in [
        ("the bus", &bus_text),
        ("the dead letters", &dead_text),
        ("the producer's log", &producer_text),
        ("the consumer's log", &run.stderr),
    ] {
        for ssn in &ssns {
            assert!(!holds_ssn(text, ssn), "{what} holds the SSN {ssn}");
        }
    }
}

/// The `|` of a Markdown table row that are not backslash-escaped.
fn unescaped_pipes(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
    }
    count
}

#[tokio::test]
async fn hostile_table_and_column_names_write_no_policy_line_and_break_no_table() {
    let dbs = TestDatabases::create("hostile_names", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        r#"CREATE SCHEMA hr;
           CREATE TABLE hr.employees (id int PRIMARY KEY, full_name text);
           CREATE TABLE people (id int PRIMARY KEY, name text);
           CREATE TABLE "x
[hr.employees]
id=""keep""
full_name=""keep""" (id int PRIMARY KEY);
           CREATE TABLE "odd#table" (id int PRIMARY KEY);
           CREATE TABLE shapes (id int PRIMARY KEY, "a#b" text, "c=d" text, "e[f]" text, "g""h" text,
                                "line
break" text, "pipe|cell" text);
           CREATE TABLE maskbus (id int PRIMARY KEY);
           INSERT INTO people VALUES (1, 'a');"#,
    )
    .await
    .unwrap();
    let files = ConfigFiles::new("hostile_names");
    let out = files.write("policy.toml", "");
    maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--output",
        &out,
    ])
    .success();
    let text = std::fs::read_to_string(&out).unwrap();
    // The file parses, and holds exactly the sections the schema public has (writable ones).
    let parsed: toml::Table = toml::from_str(&text).expect("policy init wrote valid TOML");
    let sections: Vec<&str> = parsed.keys().map(String::as_str).collect();
    assert_eq!(sections, ["people"], "{text}");
    let people = parsed["people"].as_table().unwrap();
    let columns: Vec<&str> = people.keys().map(String::as_str).collect();
    assert_eq!(columns, ["id", "name"], "{text}");
    // Each table left out is said in one comment line; no line of the file starts a section or
    // a key but the ones parsed above.
    for line in text.lines() {
        let line = line.trim_start();
        assert!(
            line.is_empty()
                || line.starts_with('#')
                || line == "[people]"
                || line.starts_with("id ")
                || line.starts_with("name "),
            "a line policy init did not mean to write: {line:?}\n{text}"
        );
    }
    for hostile in [
        "x\\u{a}[hr.employees]",
        "odd#table",
        "shapes",
        "public.maskbus",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("# left out:") && l.contains(hostile)),
            "{hostile} is not said to be left out:\n{text}"
        );
    }
    // policy check of that file: every row of its Markdown table has its six cell borders.
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &out,
    ]);
    for line in check.stdout.lines().filter(|l| l.starts_with('|')) {
        assert_eq!(
            unescaped_pipes(line),
            6,
            "a broken row: {line:?}\n{}",
            check.stdout
        );
    }
    assert!(
        check.stdout.contains("columns checked"),
        "{}{}",
        check.stdout,
        check.stderr
    );
}

const LARGE_SCHEMA: &str = "
    CREATE TABLE blobs (id int PRIMARY KEY, body text);
    CREATE TABLE longkeys (k text PRIMARY KEY, n int);
    CREATE TABLE huge (id int PRIMARY KEY, body text);
    CREATE TABLE unkeyed (k text NOT NULL, n int);";

const LARGE_POLICY: &str = "
[blobs]
id = \"keep\"
body = \"keep\"

[longkeys]
k = \"keep\"
n = \"keep\"

[huge]
id = \"keep\"
body = \"keep\"

[unkeyed]
k = \"keep\"
n = \"keep\"

[maskbus.keys]
unkeyed = [\"k\"]
";

#[tokio::test]
async fn legal_rows_of_any_size_and_long_keys_all_arrive_and_what_cannot_travel_never_exits_0() {
    let dbs = TestDatabases::create("large", &["src", "dst", "bus"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(LARGE_SCHEMA).await.unwrap();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(LARGE_SCHEMA)
        .await
        .unwrap();
    // Ten 7 MB rows (73 MB in one page before), and 40 text keys of 9,600 bytes each (over
    // the 8,192 a cursor carried before: 32 of 40 arrived, and the run exited 0).
    src.batch_execute(
        "INSERT INTO blobs SELECT i, repeat(md5(i::text), 229376) FROM generate_series(1, 10) i;
         INSERT INTO longkeys SELECT repeat(md5(i::text), 300), i FROM generate_series(1, 40) i;
         INSERT INTO unkeyed VALUES ('a', 1);",
    )
    .await
    .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("large");
    let policy = files.write("policy.toml", LARGE_POLICY);
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("policy = \"{policy}\""),
        "page_size = 200\npages_per_request = 32",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let dst = connect(&dbs.url("dst")).await;
    for (table, rows) in [("blobs", 10i64), ("longkeys", 40)] {
        let sql = format!("SELECT count(*) FROM {table}");
        let fingerprint =
            format!("SELECT md5(string_agg(t::text, '' ORDER BY t::text)) FROM {table} t");
        let count: i64 = dst.query_one(&sql, &[]).await.unwrap().get(0);
        assert_eq!(count, rows, "{table}");
        let (a, b): (String, String) = (
            src.query_one(&fingerprint, &[]).await.unwrap().get(0),
            dst.query_one(&fingerprint, &[]).await.unwrap().get(0),
        );
        assert_eq!(a, b, "{table}: the target differs from the source");
    }
    let bus = connect(&dbs.url("bus")).await;
    let (largest, dead): (i32, i64) = {
        let row = bus
            .query_one(
                "SELECT (SELECT max(octet_length(body)) FROM mq.mail), (SELECT count(*) FROM mq.dead_letters)",
                &[],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert!(largest < 32 << 20, "a reply of {largest} bytes");
    assert_eq!(dead, 0, "nothing is dead-lettered");

    // A row no reply can carry, and a key no cursor can: named by policy check, and the run
    // that cannot move them exits non-zero, naming the table.
    src.batch_execute(
        "INSERT INTO huge VALUES (1, repeat(md5('x'), 1100000));
         INSERT INTO unkeyed VALUES (repeat(md5('y'), 40000), 2);",
    )
    .await
    .unwrap();
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &policy,
    ]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check.stdout.contains("public.unkeyed | (key)"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("limits: a row crosses the bus"),
        "{}",
        check.stdout
    );
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_ne!(run.code, 0, "a run that could not move a row exited 0");
    for expected in [
        "public.huge",
        "row_too_large",
        "public.unkeyed",
        "key_too_long",
    ] {
        assert!(run.stderr.contains(expected), "{expected}: {}", run.stderr);
    }
}

#[tokio::test]
async fn one_finding_is_triaged_not_a_dam_and_a_stale_audit_is_said() {
    let deployment = deployed("triage", "10", &[]).await;
    let Deployment { dbs, roles } = &deployment;
    let files = ConfigFiles::new("triage");
    let (producer, consumer) = configs(&files, dbs, roles);
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let admin = connect(&dbs.url("bus")).await;
    // A mailbox the operator reads (mail to a mailbox without an owner is refused).
    admin
        .execute(
            "SELECT mq.grant_participant($1::text::name, 'consumer', 'notes')",
            &[&roles.name("operator")],
        )
        .await
        .unwrap();
    // Any participant can send a note that looks like an SSN.
    let note = maskbus(&[
        "bus",
        "send",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "operator"),
        "--to",
        "notes",
        "--body",
        r#"{"note":"SSN 224-30-8280"}"#,
    ])
    .success();
    let note_id: i64 = note
        .stdout
        .split_whitespace()
        .nth(2)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{}", note.stdout));
    // Handled and archived, like any message.
    admin
        .execute(
            "UPDATE mq.mail SET acked_at = now(), visible_at = 'infinity' WHERE id = $1",
            &[&note_id],
        )
        .await
        .unwrap();
    let auditor = roles.url_as(&dbs.url("bus"), "auditor");
    let audit = maskbus(&["wire-audit", "--bus", &auditor]);
    assert_eq!(audit.code, 1, "{}", audit.stdout);
    assert!(audit.stdout.contains("open findings"), "{}", audit.stdout);
    assert!(!audit.stdout.contains("224-30-8280"), "{}", audit.stdout);
    // The watermark moved all the same: the finding is recorded, not a dam.
    let (through, horizon): (i64, i64) = {
        let row = admin
            .query_one(
                "SELECT (SELECT scanned_through FROM mq.audit_state), (SELECT max(id) FROM mq.mail)",
                &[],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(through, horizon, "the watermark stopped at the finding");
    // More traffic, then purge: every audited message goes but the evidence.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    maskbus(&["wire-audit", "--bus", &auditor]);
    let purge = maskbus(&[
        "bus",
        "purge",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "operator"),
        "--older-than",
        "0s",
    ])
    .success();
    assert!(
        purge.stdout.contains("as the evidence of open findings"),
        "{}",
        purge.stdout
    );
    let left: Vec<i64> = admin
        .query("SELECT id FROM mq.mail WHERE acked_at IS NOT NULL", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        left,
        vec![note_id],
        "purge kept more (or less) than the evidence"
    );
    let stats = maskbus(&["bus", "stats", "--bus", &dbs.url("bus")]).success();
    assert!(stats.stdout.contains("1 open findings"), "{}", stats.stdout);
    // Only the auditor acknowledges, and only with a reason.
    let id = {
        let listed = maskbus(&["wire-audit", "--bus", &auditor, "--findings"]);
        assert_eq!(listed.code, 1);
        listed
            .stdout
            .lines()
            .find(|l| l.contains("OPEN"))
            .and_then(|l| l.split_whitespace().next())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{}", listed.stdout))
    };
    let wrong = maskbus(&[
        "wire-audit",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "operator"),
        "--ack",
        &id,
        "--reason",
        "not mine to say",
    ]);
    assert_ne!(wrong.code, 0);
    let empty = maskbus(&[
        "wire-audit",
        "--bus",
        &auditor,
        "--ack",
        &id,
        "--reason",
        " ",
    ]);
    assert_ne!(empty.code, 0);
    maskbus(&[
        "wire-audit",
        "--bus",
        &auditor,
        "--ack",
        &id,
        "--reason",
        "a note of the operator's test; the number is a published example",
    ])
    .success();
    maskbus(&["wire-audit", "--bus", &auditor]).success();
    maskbus(&[
        "bus",
        "purge",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "operator"),
        "--older-than",
        "0s",
    ])
    .success();
    let left: i64 = admin
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE acked_at IS NOT NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        left, 0,
        "an acknowledged finding's message is purged like any other"
    );

    // A message waiting longer than audit_max_age: bus stats and status say STALE.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let stale = maskbus(&[
        "bus",
        "stats",
        "--bus",
        &dbs.url("bus"),
        "--audit-max-age",
        "1ms",
    ])
    .success();
    assert!(stale.stdout.contains("STALE"), "{}", stale.stdout);
    let strict = files.write(
        "strict.toml",
        &format!(
            "{}audit_max_age = \"1ms\"\n",
            std::fs::read_to_string(&consumer).unwrap()
        ),
    );
    let status = maskbus(&["status", "--config", &strict]);
    assert!(status.stdout.contains("STALE"), "{}", status.stdout);
    let status = maskbus(&["status", "--config", &consumer]);
    assert!(!status.stdout.contains("STALE"), "{}", status.stdout);
}

#[tokio::test]
async fn a_constraint_the_target_refuses_is_logged_by_sqlstate_and_name_not_by_the_failing_row() {
    let dbs = seeded("errrow", "5").await;
    // The target refuses every customer: the server's DETAIL would quote the whole row.
    connect(&dbs.url("dst"))
        .await
        .batch_execute("ALTER TABLE customers ADD CONSTRAINT only_nobody CHECK (first_name = '')")
        .await
        .unwrap();
    let files = ConfigFiles::new("errrow");
    let (producer, consumer) = agent_configs(&files, &dbs, "bulk_load = false");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus_with_env(
        &["run", "--config", &consumer, "--once"],
        &[("MASKBUS_LOG", "debug")],
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("23514"), "{}", run.stderr);
    assert!(run.stderr.contains("only_nobody"), "{}", run.stderr);
    for server_text in ["Failing row contains", "violates check constraint"] {
        assert!(!run.stderr.contains(server_text), "{}", run.stderr);
    }
}
