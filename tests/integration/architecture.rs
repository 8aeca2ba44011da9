//! The dependency direction the security argument rests on: the mask and audit crates (and the
//! validators they share) depend on no I/O crate. Read from `cargo metadata`, so a new dependency
//! fails here before review.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::process::Command;

const FORBIDDEN: &[&str] = &[
    "tokio",
    "tokio-postgres",
    "postgres",
    "postgres-protocol",
    "deadpool-postgres",
    "mio",
    "socket2",
    "reqwest",
    "hyper",
    "rmcp",
    "getrandom",
    "chrono",
    "maskbus-pg",
    "maskbus-mailbox",
    "maskbus-agents",
    "maskbus-bank",
];

/// Package name → names of its normal and build dependencies (dev-dependencies left out: a test
/// helper such as proptest may use randomness without the crate's shipped code doing so).
fn shipped_dependency_graph() -> HashMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph = HashMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let name = names[node["id"].as_str().unwrap()].to_string();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].as_str() != Some("dev"))
            })
            .map(|d| names[d["pkg"].as_str().unwrap()].to_string())
            .collect();
        graph.insert(name, deps);
    }
    graph
}

fn closure(graph: &HashMap<String, Vec<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_string()];
    while let Some(name) = stack.pop() {
        if seen.insert(name.clone()) {
            stack.extend(graph.get(&name).cloned().unwrap_or_default());
        }
    }
    seen
}

#[test]
fn pure_crates_depend_on_no_io_crate() {
    let graph = shipped_dependency_graph();
    // The walk must see I/O crates where they are, or this test would pass vacuously.
    assert!(closure(&graph, "maskbus-bank").contains("tokio-postgres"));
    for root in ["maskbus-mask", "maskbus-audit", "maskbus-pii"] {
        assert!(graph.contains_key(root), "{root} is not in the workspace");
        let reached = closure(&graph, root);
        let bad: Vec<_> = FORBIDDEN.iter().filter(|f| reached.contains(**f)).collect();
        assert!(
            bad.is_empty(),
            "{root} depends on I/O crates {bad:?}; it must stay pure"
        );
    }
}
