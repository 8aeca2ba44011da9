//! The agents end to end: rows leave the source masked, cross the bus, land in the target.

use crate::support::*;
use maskbus_config::{self as config, AgentConfig};
use maskbus_tools::Agent;
use serde_json::json;

fn synced_rows(run: &Run) -> u64 {
    run.stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("synced ")?
                .strip_suffix(" rows")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no 'synced N rows' in {}", run.stdout))
}

#[tokio::test]
async fn a_sync_moves_every_row_masked_and_a_resync_moves_only_the_delta() {
    let dbs = seeded("sync_e2e", "80").await;
    let files = ConfigFiles::new("sync_e2e");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let producer = Background::spawn(&["run", "--config", &producer]);

    let first = maskbus(&["run", "--config", &consumer, "--once"]).success();
    let seeded: i64 =
        maskbus_bank::row_counts(&maskbus_pg::Database::parse("source", &dbs.url("src")).unwrap())
            .await
            .unwrap()
            .iter()
            .map(|(_, n)| n)
            .sum();
    assert_eq!(synced_rows(&first), seeded as u64);
    assert_target_is_masked_source(&dbs).await;

    // Nothing new: nothing moves.
    assert_eq!(
        synced_rows(&maskbus(&["run", "--config", &consumer, "--once"]).success()),
        0
    );

    // New rows in production: only they move.
    maskbus(&[
        "seed",
        "--source",
        &dbs.url("src"),
        "--customers",
        "3",
        "--append",
    ])
    .success();
    let src = connect(&dbs.url("src")).await;
    let added: i64 = src
        .query_one(
            "SELECT (SELECT count(*) FROM customers WHERE id > 80) + (SELECT count(*) FROM addresses WHERE id > 80)
                  + (SELECT count(*) FROM accounts WHERE id > 168) + (SELECT count(*) FROM cards WHERE id > 115)
                  + (SELECT count(*) FROM transactions WHERE id > 2000)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        synced_rows(&maskbus(&["run", "--config", &consumer, "--once"]).success()),
        added as u64
    );
    assert_target_is_masked_source(&dbs).await;

    // The target's sequences were moved past the synced ids: test engineers can insert rows.
    let dst = connect(&dbs.url("dst")).await;
    let id: i64 = dst
        .query_one(
            "INSERT INTO customers (first_name, last_name, email, ssn, date_of_birth, created_at)
             VALUES ('T', 'E***', 't***@example.com', '***-**-0000', '1990-01-01', now()) RETURNING id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(id, 84);

    // SIGTERM: the producer finishes what it has in hand and exits 0.
    assert_eq!(producer.terminate(), Some(0));
}

#[tokio::test]
async fn a_row_that_commits_late_is_not_lost() {
    let dbs = seeded("sync_late", "5").await;
    let files = ConfigFiles::new("sync_late");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    let insert =
        "INSERT INTO customers (first_name, last_name, email, ssn, date_of_birth, created_at)
                  VALUES ($1, 'Late', $2, '123-45-6789', '1980-05-05', now()) RETURNING id";
    // T1 takes the lower id and stays open; T2 takes a higher id and commits.
    let mut t1_client = connect(&dbs.url("src")).await;
    let t1 = t1_client.transaction().await.unwrap();
    let low: i64 = t1
        .query_one(insert, &[&"Tee-one", &"t1@example.com"])
        .await
        .unwrap()
        .get(0);
    let t2_client = connect(&dbs.url("src")).await;
    let high: i64 = t2_client
        .query_one(insert, &[&"Tee-two", &"t2@example.com"])
        .await
        .unwrap()
        .get(0);
    assert!(low < high);

    maskbus(&["run", "--config", &consumer, "--once"]).success();
    t1.commit().await.unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    let dst = connect(&dbs.url("dst")).await;
    let ids: Vec<i64> = dst
        .query(
            "SELECT id FROM customers WHERE id = ANY($1) ORDER BY id",
            &[&vec![low, high]],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        ids,
        [low, high],
        "both the late and the early row are in the target"
    );
    assert_target_is_masked_source(&dbs).await;
}

async fn archived_pages(dbs: &TestDatabases) -> i64 {
    let bus = connect(&dbs.url("bus")).await;
    bus.query_one("SELECT count(*) FROM mq.archive WHERE kind = 'page'", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn kill_9_of_the_consumer_mid_sync_then_a_restart_finishes_with_no_gaps_or_duplicates() {
    let dbs = seeded("sync_kill_c", "300").await;
    let files = ConfigFiles::new("sync_kill_c");
    let (producer, consumer) = agent_configs(&files, &dbs, "page_size = 20");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let mut doomed = Background::spawn(&["run", "--config", &consumer, "--once"]);
    wait_until("the consumer to be a few pages in", || async {
        archived_pages(&dbs).await >= 30
    })
    .await;
    doomed.kill9();
    let dst = connect(&dbs.url("dst")).await;
    let partial: i64 = dst
        .query_one("SELECT count(*) FROM transactions", &[])
        .await
        .unwrap()
        .get(0);
    assert!(partial < 300 * 25, "the kill came before the end");

    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
}

#[tokio::test]
async fn kill_9_of_the_producer_mid_sync_then_a_restart_finishes_with_no_gaps_or_duplicates() {
    let dbs = seeded("sync_kill_p", "300").await;
    let files = ConfigFiles::new("sync_kill_p");
    let (producer, consumer) =
        agent_configs(&files, &dbs, "page_size = 20\nrequest_timeout = \"2s\"");
    let mut first_producer = Background::spawn(&["run", "--config", &producer]);
    let sync = Background::spawn(&["run", "--config", &consumer, "--once"]);
    wait_until("the producer to serve a few pages", || async {
        archived_pages(&dbs).await >= 30
    })
    .await;
    first_producer.kill9();
    let _second_producer = Background::spawn(&["run", "--config", &producer]);
    let mut sync = sync;
    let status = tokio::task::spawn_blocking(move || sync.child.wait().unwrap())
        .await
        .unwrap();
    assert!(
        status.success(),
        "the consumer finished after the producer came back"
    );
    assert_target_is_masked_source(&dbs).await;
}

#[tokio::test]
async fn bad_requests_on_the_bus_get_error_replies_and_nothing_crashes() {
    let dbs = seeded("sync_bad", "5").await;
    let files = ConfigFiles::new("sync_bad");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let bus = dbs.url("bus");
    let requests = [
        (
            r#"{"type":"page","v":2,"entity":"users","limit":5}"#,
            "unknown_entity",
        ),
        (
            r#"{"type":"page","v":2,"entity":"customers","limit":100000}"#,
            "limit_too_large",
        ),
        (
            r#"{"type":"page","v":2,"entity":"customers; DROP TABLE customers","limit":5}"#,
            "unknown_entity",
        ),
        (
            r#"{"type":"page","v":2,"entity":"customers","limit":5,"after":"0 OR 1=1"}"#,
            "malformed",
        ),
        (r#""SELECT * FROM customers""#, "malformed"),
        (
            r#"{"type":"page","v":1,"entity":"customers","limit":5}"#,
            "unsupported_version",
        ),
    ];
    for (n, (body, _)) in requests.iter().enumerate() {
        maskbus(&[
            "bus",
            "send",
            "--bus",
            &bus,
            "--to",
            "maskbus.producer",
            "--body",
            body,
            "--reply-to",
            "test.replies",
            "--correlation-id",
            &n.to_string(),
        ])
        .success();
    }
    // And one with nowhere to reply to: it must go to the dead letters, not vanish.
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &bus,
        "--to",
        "maskbus.producer",
        "--body",
        "{}",
    ])
    .success();

    let bus_db = connect(&bus).await;
    wait_until("all six error replies", || async {
        let n: i64 = bus_db
            .query_one(
                "SELECT count(*) FROM mq.messages WHERE mailbox = 'test.replies'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        n == 6
    })
    .await;
    for (n, (_, code)) in requests.iter().enumerate() {
        let body: serde_json::Value = bus_db
            .query_one(
                "SELECT body::json FROM mq.messages WHERE mailbox = 'test.replies' AND correlation_id = $1",
                &[&n.to_string()],
            )
            .await
            .unwrap()
            .get::<_, maskbus_pg::tokio_postgres::types::Json<serde_json::Value>>(0)
            .0;
        assert_eq!(body["type"], "error", "{body}");
        assert_eq!(body["error"]["code"], *code, "{body}");
    }
    wait_until(
        "the request without reply_to to be dead-lettered",
        || async {
            let n: i64 = bus_db
                .query_one("SELECT count(*) FROM mq.dead_letters", &[])
                .await
                .unwrap()
                .get(0);
            n == 1
        },
    )
    .await;
    // The source is intact and the producer still serves.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
}

#[tokio::test]
async fn a_role_given_the_other_sides_url_is_refused_before_connecting() {
    let files = ConfigFiles::new("sync_roles");
    let unreachable = "postgres://postgres@127.0.0.1:1/nowhere";
    let producer = files.write(
        "p.toml",
        &format!("role = \"producer\"\nbus_url = \"{unreachable}\"\nsource_url = \"{unreachable}\"\ntarget_url = \"{unreachable}\"\n"),
    );
    let run = maskbus(&["run", "--config", &producer]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("a producer must not hold target_url"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("cannot connect"),
        "refused before connecting: {}",
        run.stderr
    );

    let consumer = files.write(
        "c.toml",
        &format!("role = \"consumer\"\nbus_url = \"{unreachable}\"\ntarget_url = \"{unreachable}\"\nsource_url = \"{unreachable}\"\n"),
    );
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("a consumer must not hold source_url"),
        "{}",
        run.stderr
    );

    let typo = files.write("t.toml", "role = \"consumer\"\ntarget_ulr = \"x\"\n");
    let run = maskbus(&["run", "--config", &typo]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("target_ulr"), "{}", run.stderr);
}

#[tokio::test]
async fn each_role_lists_and_may_call_only_its_own_tools() {
    let dbs = seeded("sync_tools", "5").await;
    let files = ConfigFiles::new("sync_tools");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let names = |config: &str| -> Vec<String> {
        maskbus(&["tools", "--config", config])
            .success()
            .stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&producer),
        ["mailbox_wait", "mailbox_send", "query_masked"]
    );
    assert_eq!(
        names(&consumer),
        [
            "mailbox_wait",
            "mailbox_send",
            "insert_rows",
            "query_local",
            "watermark"
        ]
    );
    let schemas = maskbus(&["tools", "--config", &producer, "--json"]).success();
    let first: serde_json::Value =
        serde_json::from_str(schemas.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["input_schema"]["type"], "object");

    let config = config::load(std::path::Path::new(&producer)).unwrap();
    let AgentConfig::Producer(_) = &config else {
        panic!()
    };
    let agent = Agent::start(&config).await.unwrap();
    let blocked = agent
        .call("insert_rows", json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        blocked,
        "blocked: the producer may only use mailbox_wait, mailbox_send, query_masked"
    );
    assert!(agent
        .call("bash", json!({"cmd": "psql"}))
        .await
        .unwrap_err()
        .to_string()
        .starts_with("blocked"));
    let page = agent
        .call("query_masked", json!({"entity": "customers", "limit": 2}))
        .await
        .unwrap();
    assert_eq!(page["rows"].as_array().unwrap().len(), 2);
    assert!(
        page["rows"][0][4].as_str().unwrap().starts_with("***-**-"),
        "{page}"
    );
    let too_many = agent
        .call("query_masked", json!({"entity": "customers", "limit": 201}))
        .await
        .unwrap_err();
    assert!(too_many.to_string().contains("at most 200"), "{too_many}");
}

#[tokio::test]
async fn without_once_the_consumer_keeps_following_and_stops_cleanly_on_sigterm() {
    let dbs = seeded("sync_follow", "5").await;
    let files = ConfigFiles::new("sync_follow");
    let (producer, consumer) = agent_configs(&files, &dbs, "follow_interval = \"100ms\"");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let follower = Background::spawn(&["run", "--config", &consumer]);
    let dst = connect(&dbs.url("dst")).await;
    wait_until("the first pass", || async {
        dst.query_one("SELECT count(*) FROM customers", &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
            == 5
    })
    .await;
    maskbus(&[
        "seed",
        "--source",
        &dbs.url("src"),
        "--customers",
        "2",
        "--append",
    ])
    .success();
    let total = |url: String| async move {
        let target = maskbus_pg::Database::parse("db", &url).unwrap();
        maskbus_bank::row_counts(&target).await.unwrap()
    };
    let source_counts = total(dbs.url("src")).await;
    wait_until("every new row to follow", || async {
        total(dbs.url("dst")).await == source_counts
    })
    .await;
    assert_eq!(follower.terminate(), Some(0));
    assert_target_is_masked_source(&dbs).await;
}
