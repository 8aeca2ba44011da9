//! Operating the agents (issue 17): logs a pipeline can ingest, from a real sync.

use crate::support::*;
use std::process::Command;

#[tokio::test]
async fn json_logs_are_one_object_a_line_with_the_fields_a_pipeline_needs() {
    let dbs = seeded("json_logs", "30").await;
    let files = ConfigFiles::new("json_logs");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let output = Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args(["run", "--config", &consumer, "--once"])
        .env("MASKBUS_LOG_FORMAT", "json")
        .env("MASKBUS_LOG", "info")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(events.len() > 3, "{stderr}");
    for event in &events {
        assert!(
            event["timestamp"].is_string() && event["level"].is_string(),
            "{event}"
        );
        assert!(event["message"].is_string(), "{event}");
    }
    let done = events
        .iter()
        .find(|e| e["message"] == "sync pass done")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(done["rows"].as_u64().unwrap() > 30, "{done}");
    // A failure is an event too, not a line of prose.
    let failed = Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args(["wire-audit", "--bus", "postgres://postgres@127.0.0.1:1/bus"])
        .env("MASKBUS_LOG_FORMAT", "json")
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(2));
    let line = String::from_utf8(failed.stderr).unwrap();
    let event: serde_json::Value = serde_json::from_str(line.lines().last().unwrap()).unwrap();
    assert_eq!(event["level"], "ERROR");
    assert!(
        event["error"].as_str().unwrap().contains("bus database"),
        "{event}"
    );
}

#[tokio::test]
async fn status_says_caught_up_then_behind_then_unknown_and_exits_so() {
    let dbs = seeded("status", "20").await;
    let files = ConfigFiles::new("status");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let not_yet = maskbus(&["status", "--config", &consumer, "--wait", "1s"]);
    assert_eq!(not_yet.code, 6, "nothing synced yet: {}", not_yet.stdout);
    let running = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let caught_up = maskbus(&["status", "--config", &consumer, "--json"]);
    assert_eq!(
        caught_up.code, 0,
        "{}{}",
        caught_up.stdout, caught_up.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&caught_up.stdout).unwrap();
    assert_eq!(report["verdict"], "caught_up");
    let dst = connect(&dbs.url("dst")).await;
    for table in report["tables"].as_array().unwrap() {
        let rows: i64 = dst
            .query_one(
                &format!("SELECT count(*) FROM {}", table["entity"].as_str().unwrap()),
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(table["rows"], rows, "{table}");
        assert!(table["watermark"].is_string() && table["last_moved"].is_string());
    }
    // The source moves on: status names the table that is behind.
    connect(&dbs.url("src"))
        .await
        .batch_execute("UPDATE customers SET last_name = 'Moved' WHERE id = 1")
        .await
        .unwrap();
    let behind = maskbus(&["status", "--config", &consumer]);
    assert_eq!(behind.code, 6, "{}", behind.stdout);
    assert!(
        behind
            .stdout
            .contains("public.customers has rows written after its watermark"),
        "{}",
        behind.stdout
    );
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(maskbus(&["status", "--config", &consumer]).code, 0);
    // Without a producer, status cannot tell.
    drop(running);
    let unknown = maskbus(&["status", "--config", &consumer, "--wait", "1s"]);
    assert_eq!(unknown.code, 7, "{}", unknown.stdout);
    assert!(
        unknown.stdout.contains("did not answer"),
        "{}",
        unknown.stdout
    );
}
