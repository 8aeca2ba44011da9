//! Issue 52: the wire audit is independent of the policy on kept cells. With the producer's
//! config (or the source and the policy), production's real values are looked for in every
//! cell on the bus, kept or masked: a kept admin-log column that holds the real usernames of a
//! masked column is reported, where the audit once skipped kept columns unless its own
//! judgement masked them (and it keeps this one). The reviewed-columns file is the way out.

use crate::support::*;
use maskbus_pg::testing::TestDatabases;

/// Django's users and its admin log, whose `object_repr` is the username of the user changed.
const SCHEMA: &str = "
CREATE TABLE auth_user (id int PRIMARY KEY, username text NOT NULL UNIQUE, email text,
                        is_staff boolean NOT NULL);
INSERT INTO auth_user
SELECT i, (ARRAY['jdoe','asmith','mkowalski','tnguyen','rpatel','lgarcia'])[1 + i % 6]
          || CASE WHEN i >= 6 THEN i::text ELSE '' END,
       'user' || i || '@corp.example', i % 2 = 0
  FROM generate_series(0, 29) i;
CREATE TABLE django_admin_log (id int PRIMARY KEY, action_time timestamptz NOT NULL,
                               object_id text, object_repr text NOT NULL, action_flag smallint,
                               change_message text);
INSERT INTO django_admin_log
SELECT i, '2025-01-01'::timestamptz + i * interval '1 hour', u.id::text, u.username, 2,
       '[{\"changed\": {\"fields\": [\"Staff status\"]}}]'
  FROM generate_series(1, 60) i JOIN auth_user u ON u.id = i % 30;
";

/// The usernames are masked; the admin log is kept, a wrong `keep` as a reviewer proposed it.
const POLICY: &str = "
[auth_user]
id       = \"keep\"
username = \"redact\"
email    = \"email\"
is_staff = \"keep\"

[django_admin_log]
id             = \"keep\"
action_time    = \"keep\"
object_id      = \"keep\"
object_repr    = \"keep\"
action_flag    = \"keep\"
change_message = \"keep\"
";

const LOG_COLUMNS: [&str; 6] = [
    "id",
    "action_time",
    "object_id",
    "object_repr",
    "action_flag",
    "change_message",
];

/// The admin log's page as a producer serving this policy writes it: every cell kept, as
/// the source holds it.
async fn admin_log_page(source: &str) -> String {
    let client = connect(source).await;
    let rows: Vec<serde_json::Value> = client
        .query(
            "SELECT ARRAY[id::text, action_time::text, object_id, object_repr,
                          action_flag::text, change_message]
               FROM django_admin_log ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| serde_json::json!(row.get::<_, Vec<Option<String>>>(0)))
        .collect();
    serde_json::json!({
        "type": "page", "v": 2, "entity": "public.django_admin_log", "key": ["id"],
        "columns": LOG_COLUMNS, "rows": rows, "next_after": null, "more": false,
        "since": null, "until": "812:820:",
    })
    .to_string()
}

#[tokio::test]
async fn a_kept_column_carrying_real_values_of_a_masked_column_is_reported() {
    let dbs = TestDatabases::create("audit_indep", &["src", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(SCHEMA)
        .await
        .unwrap();
    let bus = dbs.url("bus");
    maskbus(&["bus", "init", "--bus", &bus]).success();
    let files = ConfigFiles::new("audit_indep");
    let policy = files.write("policy.toml", POLICY);
    let urls = AgentUrls {
        producer_bus: bus.clone(),
        consumer_bus: bus.clone(),
        source: dbs.url("src"),
        target: dbs.url("src"),
    };
    let (producer, _) = write_agent_configs(&files, &urls, &format!("policy = \"{policy}\"\n"), "");
    // The page a producer without a guard sent, its kept cells as they are.
    let page = admin_log_page(&dbs.url("src")).await;
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &bus,
        "--to",
        "maskbus.consumer",
        "--body",
        &page,
    ])
    .success();

    let usernames: Vec<String> = first_column(
        &connect(&dbs.url("src")).await,
        "SELECT username FROM auth_user",
    )
    .await;
    let audit = |how: &[&str]| {
        let mut args = vec!["wire-audit", "--bus", &bus, "--json"];
        args.extend_from_slice(how);
        maskbus(&args)
    };
    for how in [
        vec!["--config", producer.as_str()],
        vec![
            "--source",
            urls.source.as_str(),
            "--policy",
            policy.as_str(),
        ],
    ] {
        let run = audit(&how);
        assert_eq!(run.code, 1, "{how:?}\n{}\n{}", run.stdout, run.stderr);
        let lines: Vec<serde_json::Value> = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let findings = &lines[..lines.len() - 1];
        // One per row of the log: its whole cell is a real username.
        let in_the_log: Vec<&serde_json::Value> = findings
            .iter()
            .filter(|f| {
                f["detector"] == "source_value" && f["path"].as_str().unwrap().ends_with("][3]")
            })
            .collect();
        assert_eq!(in_the_log.len(), 60, "{how:?}: {findings:?}");
        assert!(
            run.stderr
                .contains("looked for in every cell, kept or masked"),
            "{}",
            run.stderr
        );
        for username in &usernames {
            let quoted = format!("\"{username}\"");
            assert!(
                !run.stdout.contains(&quoted),
                "the report reveals {username}"
            );
            assert!(!run.stderr.contains(&quoted), "the log reveals {username}");
        }
    }

    // The way out: the column reviewed, with a reason, is not read; the findings recorded by
    // the runs above stay open until acknowledged, so a new bus is scanned.
    let reviewed = files.write(
        "reviewed.toml",
        // The change messages too: the audit's judgement (policy init's) holds an admin log's
        // message personal by its name, and these hold field names only.
        "[columns]\n\"public.django_admin_log.object_repr\" = \"usernames of staff, who agreed to it\"\n\
         \"public.django_admin_log.change_message\" = \"field names only, read by a reviewer\"\n",
    );
    let fresh = TestDatabases::create("audit_indep_reviewed", &["bus"]).await;
    let fresh_bus = fresh.url("bus");
    maskbus(&["bus", "init", "--bus", &fresh_bus]).success();
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &fresh_bus,
        "--to",
        "maskbus.consumer",
        "--body",
        &page,
    ])
    .success();
    let passed = maskbus(&[
        "wire-audit",
        "--bus",
        &fresh_bus,
        "--config",
        &producer,
        "--reviewed",
        &reviewed,
    ]);
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);
    assert!(
        passed
            .stdout
            .lines()
            .last()
            .unwrap()
            .ends_with(": 0 findings"),
        "{}",
        passed.stdout
    );
}
