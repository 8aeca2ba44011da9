//! Least privilege, tried as the attacker would: the whole sync, the audit and purge under roles
//! that hold only what they need; every door of the bus tried as the wrong role; forged replies
//! and poison bodies on the bus.

use crate::support::*;
use maskbus_pg::tokio_postgres::error::SqlState;

const BANK_TABLES: &str =
    "public.customers, public.addresses, public.accounts, public.cards, public.transactions";

/// Source and bus as `bank_databases` makes them, but a target made the way a user makes one:
/// the schema applied by hand (as `pg_dump --schema-only | psql` would), no maskbus schema.
async fn databases(test: &str, customers: &str) -> TestDatabases {
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    maskbus(&["bank", "init", "--source", &dbs.url("src")]).success();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(maskbus_bank::MIGRATIONS[0].sql)
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    maskbus(&[
        "seed",
        "--source",
        &dbs.url("src"),
        "--customers",
        customers,
    ])
    .success();
    dbs
}

fn grant_bus(dbs: &TestDatabases, roles: &TestRoles, parts: &[(&str, &str)]) {
    let mut args = vec![
        "bus".to_string(),
        "grant".into(),
        "--bus".into(),
        dbs.url("bus"),
    ];
    for (part, label) in parts {
        args.push(format!("--{part}"));
        args.push(roles.name(label).to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    maskbus(&args).success();
}

pub(crate) fn configs(
    files: &ConfigFiles,
    dbs: &TestDatabases,
    roles: &TestRoles,
) -> (String, String) {
    let urls = AgentUrls {
        producer_bus: roles.url_as(&dbs.url("bus"), "producer"),
        consumer_bus: roles.url_as(&dbs.url("bus"), "consumer"),
        source: roles.url_as(&dbs.url("src"), "reader"),
        target: roles.url_as(&dbs.url("dst"), "writer"),
    };
    write_agent_configs(files, &urls, "", "")
}

/// What the README's "Deploying with least privilege" tells a DBA to grant on the source and
/// the target.
async fn grant_databases(dbs: &TestDatabases, roles: &TestRoles) {
    connect(&dbs.url("src"))
        .await
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA public TO {reader}; GRANT SELECT ON {BANK_TABLES} TO {reader};",
            reader = roles.name("reader")
        ))
        .await
        .unwrap();
    let dst_name = dbs
        .names()
        .iter()
        .find(|n| n.ends_with("_dst"))
        .unwrap()
        .clone();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA public TO {writer};
             GRANT SELECT, INSERT, UPDATE, DELETE ON {BANK_TABLES} TO {writer};
             GRANT SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {writer};
             GRANT CREATE ON DATABASE \"{dst_name}\" TO {writer};",
            writer = roles.name("writer")
        ))
        .await
        .unwrap();
}

/// Databases and roles deployed as the README says: each agent its own role on each database.
/// Fields drop in order: the databases (holding the roles' grants) before the roles.
pub(crate) struct Deployment {
    pub(crate) dbs: TestDatabases,
    pub(crate) roles: TestRoles,
}

/// The bank in source and target, the six parts of a deployment (plus `extra` roles with no
/// grant at all), each granted what the README grants it.
pub(crate) async fn deployed(test: &str, customers: &str, extra: &[&str]) -> Deployment {
    let mut labels = vec![
        "reader", "writer", "producer", "consumer", "auditor", "operator",
    ];
    labels.extend_from_slice(extra);
    let roles = TestRoles::create(test, &labels).await;
    let dbs = databases(test, customers).await;
    grant_databases(&dbs, &roles).await;
    grant_bus(
        &dbs,
        &roles,
        &[
            ("producer", "producer"),
            ("consumer", "consumer"),
            ("auditor", "auditor"),
            ("operator", "operator"),
        ],
    );
    Deployment { dbs, roles }
}

#[tokio::test]
async fn the_sync_the_audit_and_purge_run_under_least_privilege_roles() {
    let deployment = deployed("lp", "20", &[]).await;
    let (dbs, roles) = (&deployment.dbs, &deployment.roles);
    let files = ConfigFiles::new("lp");
    let (producer, consumer) = configs(&files, dbs, roles);
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(dbs).await;
    // Status reads the target and asks the producer with the consumer's grants only.
    let status = maskbus(&["status", "--config", &consumer]);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    // Subsets are planned, checked and counted with the reader's SELECT only.
    let subsets = files.write(
        "subsets.toml",
        "[subsets.some]\nwhere = { customers = \"id <= 10\" }\n",
    );
    let planner = files.write(
        "planner.toml",
        &format!(
            "{}subsets = \"{subsets}\"\n",
            std::fs::read_to_string(&producer).unwrap()
        ),
    );
    let plan = maskbus(&["subset", "plan", "--config", &planner]);
    assert_eq!(plan.code, 0, "{}{}", plan.stdout, plan.stderr);
    assert!(plan.stdout.contains("public.customers"), "{}", plan.stdout);

    // CREATE on the target database is needed for the first run only.
    let dst_name = dbs
        .names()
        .iter()
        .find(|n| n.ends_with("_dst"))
        .unwrap()
        .clone();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(&format!(
            "REVOKE CREATE ON DATABASE \"{dst_name}\" FROM {}",
            roles.name("writer")
        ))
        .await
        .unwrap();
    maskbus(&[
        "seed",
        "--source",
        &dbs.url("src"),
        "--customers",
        "3",
        "--append",
        "--seed",
        "9",
    ])
    .success();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(dbs).await;

    // Following deletes, verify and repair need no more: the reader hashes the source, the
    // writer deletes. A pass follows a delete itself.
    let delete_one = || async {
        connect(&dbs.url("src"))
            .await
            .batch_execute("DELETE FROM transactions WHERE id = (SELECT min(id) FROM transactions)")
            .await
            .unwrap();
    };
    delete_one().await;
    maskbus(&["run", "--config", &consumer, "--once", "--verify"]).success();
    assert_target_is_masked_source(dbs).await;
    // Without the pass's delete check, verify finds it and repair deletes it.
    let unchecked = files.write(
        "unchecked.toml",
        &format!(
            "{}follow_deletes = false\n",
            std::fs::read_to_string(&consumer).unwrap()
        ),
    );
    delete_one().await;
    let drift = maskbus(&["run", "--config", &unchecked, "--once", "--verify"]);
    assert_eq!(drift.code, 4, "{}{}", drift.stdout, drift.stderr);
    maskbus(&["run", "--config", &unchecked, "--once", "--repair"]).success();
    assert_target_is_masked_source(dbs).await;

    // The auditor reads every message and records the watermark; the operator purges.
    let audit = maskbus(&[
        "wire-audit",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "auditor"),
        "--source",
        &roles.url_as(&dbs.url("src"), "reader"),
        "--policy",
        BANK_POLICY_PATH,
    ])
    .success();
    assert!(audit.stdout.contains(": 0 findings"), "{}", audit.stdout);
    let purge = maskbus(&[
        "bus",
        "purge",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "operator"),
        "--older-than",
        "0s",
    ])
    .success();
    assert!(purge.stdout.starts_with("purged "), "{}", purge.stdout);
    let archived: i64 = connect(&dbs.url("bus"))
        .await
        .query_one("SELECT count(*) FROM mq.archive", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(archived, 0, "what the audit scanned was purged");
}

/// How many messages on the bus were sent to `mailbox`, with replies asked on `reply_to` when
/// it is given.
async fn messages_between(dbs: &TestDatabases, mailbox: &str, reply_to: Option<&str>) -> i64 {
    connect(&dbs.url("bus"))
        .await
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE mailbox = $1 \
                AND ($2::text IS NULL OR reply_to = $2)",
            &[&mailbox, &reply_to],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn verify_beside_a_running_follower_takes_its_replies_on_a_mailbox_of_its_own() {
    let deployment = deployed("vbf", "20", &[]).await;
    let (dbs, roles) = (&deployment.dbs, &deployment.roles);
    let files = ConfigFiles::new("vbf");
    let (producer, consumer) = configs(&files, dbs, roles);
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let follower = Background::spawn(&["run", "--config", &consumer]);
    let verify_mailbox = "maskbus.consumer.verify";
    // The follower is claiming from the consumer's mailbox: it has asked the producer.
    let synced = messages_between(dbs, "maskbus.producer", Some("maskbus.consumer")).await;
    wait_until("the follower asks the producer", || async {
        messages_between(dbs, "maskbus.producer", Some("maskbus.consumer")).await > synced
    })
    .await;

    // Granted by `bus grant --consumer`: verify asks with replies to its own mailbox, where
    // the follower (claiming `maskbus.consumer`) never takes them.
    let verified = maskbus(&["verify", "--config", &consumer]);
    assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);
    let asked = messages_between(dbs, "maskbus.producer", Some(verify_mailbox)).await;
    let answered = messages_between(dbs, verify_mailbox, None).await;
    assert!(asked > 0, "verify asked with replies to {verify_mailbox}");
    assert!(answered >= asked, "{answered} replies to {asked} requests");
    drop(follower);
    let asked_on_ours = messages_between(dbs, "maskbus.producer", Some("maskbus.consumer")).await;

    // A bus granted before that mailbox existed: verify takes its replies on the consumer's
    // mailbox, still right, and says how to grant the other.
    connect(&dbs.url("bus"))
        .await
        .execute(
            "DELETE FROM mq.mailboxes WHERE mailbox = $1",
            &[&verify_mailbox],
        )
        .await
        .unwrap();
    let fallback = maskbus(&["verify", "--config", &consumer]);
    assert_eq!(fallback.code, 0, "{}{}", fallback.stdout, fallback.stderr);
    assert!(
        fallback.stderr.contains("bus grant --consumer"),
        "{}",
        fallback.stderr
    );
    assert!(
        messages_between(dbs, "maskbus.producer", Some("maskbus.consumer")).await > asked_on_ours,
        "verify asked with replies to the consumer's own mailbox"
    );
}

/// Runs `sql` as the role `label` on the bus and returns the SQLSTATE it failed with.
pub(crate) async fn refused(
    dbs: &TestDatabases,
    roles: &TestRoles,
    label: &str,
    sql: &str,
) -> String {
    let client = connect(&roles.url_as(&dbs.url("bus"), label)).await;
    let error = client
        .batch_execute(sql)
        .await
        .expect_err(&format!("{label} must not be able to run {sql}"));
    let code = error.code().cloned().unwrap_or(SqlState::INTERNAL_ERROR);
    assert_eq!(
        code,
        SqlState::INSUFFICIENT_PRIVILEGE,
        "{label}: {sql}: {}",
        maskbus_pg::bus_error_text(&error)
    );
    maskbus_pg::bus_error_text(&error)
}

#[tokio::test]
async fn every_door_of_the_bus_refuses_the_wrong_role() {
    let deployment = deployed("doors", "5", &["intruder", "nobody"]).await;
    let (dbs, roles) = (&deployment.dbs, &deployment.roles);
    // The intruder holds a consumer's grants, on a mailbox of its own.
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

    let error = refused(
        dbs,
        roles,
        "intruder",
        "SELECT * FROM mq.claim('maskbus.producer', 10, 30, 5)",
    )
    .await;
    assert!(error.contains("is not owned by"), "{error}");
    refused(dbs, roles, "intruder", "SELECT count(*) FROM mq.messages").await;
    refused(dbs, roles, "intruder", "SELECT mq.record_audit(1000000)").await;
    refused(
        dbs,
        roles,
        "intruder",
        "UPDATE mq.audit_state SET scanned_through = 1000000",
    )
    .await;
    refused(dbs, roles, "intruder", "SELECT * FROM mq.purge(0, true)").await;
    refused(
        dbs,
        roles,
        "intruder",
        "SELECT mq.redrive('maskbus.consumer')",
    )
    .await;
    refused(dbs, roles, "consumer", "SELECT * FROM mq.purge(0, true)").await;
    refused(dbs, roles, "consumer", "SELECT mq.audit_horizon()").await;
    refused(dbs, roles, "operator", "SELECT mq.record_audit(1000000)").await;
    refused(dbs, roles, "auditor", "SELECT * FROM mq.purge(0, true)").await;
    // A role the bus never granted cannot even connect (PUBLIC has no CONNECT on the bus).
    let error = maskbus_pg::tokio_postgres::connect(
        &roles.url_as(&dbs.url("bus"), "nobody"),
        maskbus_pg::tokio_postgres::NoTls,
    )
    .await
    .err()
    .expect("a role outside the bus must not connect to it");
    assert_eq!(error.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE));
    // As the operator tool, the consumer cannot purge either.
    let run = maskbus(&[
        "bus",
        "purge",
        "--bus",
        &roles.url_as(&dbs.url("bus"), "consumer"),
        "--older-than",
        "0s",
    ]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("permission denied"), "{}", run.stderr);

    // Forged replies, sent before the consumer asks anything: the sender is the intruder's
    // role whatever the body says, and the consumer refuses them and changes nothing.
    let forged = serde_json::json!({
        "type": "page", "v": maskbus_protocol::VERSION, "entity": "public.customers",
        "key": ["id"], "columns": ["id", "first_name"], "rows": [["999999", "Forged"]],
        "next_after": ["999999"], "more": false, "since": null, "until": "1:1:", "part": 0, "parts": 1
    });
    let intruder = connect(&roles.url_as(&dbs.url("bus"), "intruder")).await;
    for n in 0..5 {
        intruder
            .execute(
                "SELECT mq.send('maskbus.consumer', 'page', ARRAY[$1], NULL, ARRAY[$2::text])",
                &[&format!("guess-{n}"), &forged.to_string()],
            )
            .await
            .unwrap();
    }
    let files = ConfigFiles::new("doors");
    let (producer, consumer) = configs(&files, dbs, roles);
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(dbs).await;
    let bus = connect(&dbs.url("bus")).await;
    let refused_replies: i64 = bus
        .query_one(
            "SELECT count(*) FROM mq.dead_letters WHERE sender = $1 AND error LIKE 'refused: a reply from role%'",
            &[&roles.name("intruder")],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(refused_replies, 5);
    let senders: Vec<String> = bus
        .query("SELECT DISTINCT sender FROM mq.archive ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut expected = vec![
        roles.name("consumer").to_string(),
        roles.name("producer").to_string(),
    ];
    expected.sort();
    assert_eq!(
        senders, expected,
        "every message carries its session's role"
    );
}

#[tokio::test]
async fn poison_bodies_are_dead_lettered_and_the_agents_keep_working() {
    let dbs = databases("poison", "5").await;
    let files = ConfigFiles::new("poison");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let bus = connect(&dbs.url("bus")).await;
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let huge = serde_json::json!({ "pad": "x".repeat(9 << 20) }).to_string();
    // The bus keeps bodies as text: a body that is not JSON at all reaches the receivers.
    let broken = r#"{"type": "request", "v": 2, "#.to_string();
    for (mailbox, body) in [
        ("maskbus.producer", &deep),
        ("maskbus.producer", &huge),
        ("maskbus.producer", &broken),
        ("maskbus.consumer", &deep),
    ] {
        bus.execute(
            "SELECT mq.send($1, 'request', ARRAY['poison'], 'test.replies', ARRAY[$2::text])",
            &[&mailbox, body],
        )
        .await
        .unwrap();
    }
    wait_until(
        "the producer to dead-letter the three poison requests",
        || async {
            let n: i64 = bus
                .query_one(
                    "SELECT count(*) FROM mq.dead_letters WHERE mailbox = 'maskbus.producer'",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            n == 3
        },
    )
    .await;
    let reasons: Vec<String> = bus
        .query("SELECT error FROM mq.dead_letters ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        reasons[0].contains("not JSON this receiver can read"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("over this receiver's limit"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].contains("not JSON this receiver can read"),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().all(|r| r.len() < 300),
        "reasons are short: {reasons:?}"
    );
    // The producer still serves, and the consumer gets past the poison in its own mailbox.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    let consumer_dead: i64 = bus
        .query_one(
            "SELECT count(*) FROM mq.dead_letters WHERE mailbox = 'maskbus.consumer'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(consumer_dead, 1);
}
