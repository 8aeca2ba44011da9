//! The dependency direction the security argument rests on: the mask and audit crates (and the
//! validators they share) depend on no I/O crate. Read from Cargo.lock, so a new dependency fails
//! here before review.

use std::collections::{BTreeSet, HashMap};

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
];

fn lock_graph() -> HashMap<String, Vec<String>> {
    let lock =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    let lock: toml::Value = toml::from_str(&lock).unwrap();
    let mut graph = HashMap::new();
    for package in lock["package"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_string();
        let deps = package
            .get("dependencies")
            .and_then(|d| d.as_array())
            .map(|d| {
                d.iter()
                    .map(|v| v.as_str().unwrap().split(' ').next().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        graph.insert(name, deps);
    }
    graph
}

/// Every package `root` reaches. Cargo.lock lists dev-dependencies too, so this over-approximates:
/// a pure crate must not even test with an I/O crate, which keeps the rule simple to state.
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
    let graph = lock_graph();
    for root in ["maskbus-mask", "maskbus-audit", "maskbus-pii"] {
        assert!(
            graph.contains_key(root),
            "{root} is missing from Cargo.lock"
        );
        let reached = closure(&graph, root);
        let bad: Vec<_> = FORBIDDEN.iter().filter(|f| reached.contains(**f)).collect();
        assert!(
            bad.is_empty(),
            "{root} depends on I/O crates {bad:?}; it must stay pure"
        );
    }
}

#[test]
fn the_closure_walk_sees_io_crates_where_they_are() {
    // Guards the test above against passing vacuously.
    let graph = lock_graph();
    assert!(closure(&graph, "maskbus-bank").contains("tokio-postgres"));
}
