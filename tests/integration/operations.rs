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
