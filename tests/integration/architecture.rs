//! The dependency direction the security argument rests on, read from `cargo metadata` so a new
//! dependency fails here before review: the mask and audit crates, the validators they share,
//! the model and the wire contract depend on no I/O crate; the consumer cannot reach the masker
//! (it never holds a policy or a key); the producer cannot reach the consumer and never calls a
//! statement that writes.

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
    "maskbus-tools",
    "maskbus-bank",
];

/// Package name → names of its normal dependencies: what ships in the binary. Dev-dependencies
/// are left out (a test helper such as proptest may use randomness without the crate's shipped
/// code doing so), and so are build-dependencies (a build script's own helpers, such as the
/// protobuf generator behind `pg_query`, run at build time and never ship).
fn shipped_dependency_graph() -> HashMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Only this platform's dependencies: with every platform's, `--offline` needs crates a build
    // here never downloads (android_system_properties...), and a fresh machine has none of them.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    let host = String::from_utf8_lossy(&version.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
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
                    .any(|k| k["kind"].is_null())
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
    for root in [
        "maskbus-mask",
        "maskbus-audit",
        "maskbus-pii",
        "maskbus-model",
        "maskbus-protocol",
        "maskbus-sqlguard",
    ] {
        assert!(graph.contains_key(root), "{root} is not in the workspace");
        let reached = closure(&graph, root);
        let bad: Vec<_> = FORBIDDEN.iter().filter(|f| reached.contains(**f)).collect();
        assert!(
            bad.is_empty(),
            "{root} depends on I/O crates {bad:?}; it must stay pure"
        );
    }
}

#[test]
fn the_wire_contract_and_the_consumer_cannot_reach_the_masker() {
    let graph = shipped_dependency_graph();
    // The walk sees the masker where it is, or this test would pass vacuously.
    assert!(closure(&graph, "maskbus-producer").contains("maskbus-mask"));
    for root in ["maskbus-consumer", "maskbus-protocol", "maskbus-config"] {
        assert!(graph.contains_key(root), "{root} is not in the workspace");
        let reached = closure(&graph, root);
        let bad: Vec<_> = [
            "maskbus-mask",
            "maskbus-policy",
            "maskbus-producer",
            "maskbus-audit",
            "blake3",
        ]
        .into_iter()
        .filter(|f| reached.contains(*f))
        .collect();
        assert!(
            bad.is_empty(),
            "{root} reaches {bad:?}: the consumer side must never hold a policy, a key or the masker"
        );
    }
}

#[test]
fn the_producer_never_writes_a_target() {
    let graph = shipped_dependency_graph();
    let reached = closure(&graph, "maskbus-producer");
    assert!(reached.contains("maskbus-pg"));
    assert!(
        !reached.contains("maskbus-consumer"),
        "the producer reaches the consumer's writer"
    );
    // Nor does it call a statement that writes (those live in maskbus_pg for the consumer).
    const WRITES: &[&str] = &[
        "statements::upsert",
        "statements::set_later",
        "statements::delete_by_key",
        "statements::unlink_by_key",
        "statements::truncate",
        "bulk::",
        "copy_in",
    ];
    let mut files = Vec::new();
    rust_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../producer/src"),
        &mut files,
    );
    assert!(files.len() > 5, "the walk must see the producer's sources");
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if WRITES.iter().any(|w| code.contains(w)) {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the producer writes:\n{}",
        offenders.join("\n")
    );
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_statement_on_the_bus_lives_in_the_mailbox_crate() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // `mq.` starting a word and followed by a name: a table or function of the bus.
    let names_the_bus = |code: &str| {
        code.match_indices("mq.").any(|(i, _)| {
            let before = code[..i].chars().next_back();
            let after = code[i + 3..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && after.is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        })
    };
    assert!(names_the_bus("client.query(\"SELECT mq.send($1)\")"));
    assert!(!names_the_bus("let summq.x = 1; // mq. alone"));
    let mut offenders = Vec::new();
    let mut checked = 0;
    for krate in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = krate.file_name().to_string_lossy().into_owned();
        // The mailbox owns the bus; the benchmarks measure it from outside, on purpose.
        if name == "mailbox" || name == "bench" {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&krate.path().join("src"), &mut files);
        for file in files {
            checked += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if names_the_bus(code) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "the walk must see the crates' sources ({checked} files)"
    );
    assert!(
        offenders.is_empty(),
        "SQL on the bus outside crates/mailbox:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn sql_over_user_tables_is_written_only_in_the_statement_builders() {
    // A user table reaches SQL text through `TableRef::sql()` or `quote_ident`: only
    // maskbus_pg::statements (and its specialised builders: closure for a subset's closure,
    // bulk for lifting and rebuilding, ddl for creating a served schema) may do that. The model defines them, the
    // test databases name throwaway objects, and CREATE DATABASE names the database.
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    const BUILDERS: &[&str] = &[
        "pg/src/statements.rs",
        "pg/src/closure.rs",
        "pg/src/bulk.rs",
        "pg/src/ddl.rs",
        "pg/src/testing.rs",
        "pg/src/migrate.rs",
        "pg/src/lib.rs",
        "model/src/lib.rs",
        // The printer of served SQL the consumer rebuilds from PostgreSQL's parse tree
        // (defaults, constraints, indexes): it quotes every name it prints.
        "sqlguard/src/sql.rs",
        "sqlguard/src/expr.rs",
        "sqlguard/src/constraint.rs",
        "sqlguard/src/index.rs",
        "sqlguard/src/refusal.rs",
    ];
    let mut offenders = Vec::new();
    let mut checked = 0;
    for krate in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = krate.file_name().to_string_lossy().into_owned();
        if name == "bench" {
            continue; // measures from outside, against its own fixtures
        }
        let mut files = Vec::new();
        rust_files(&krate.path().join("src"), &mut files);
        for file in files {
            let relative = file
                .strip_prefix(&crates)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if BUILDERS.iter().any(|b| relative == *b) {
                continue;
            }
            checked += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains(".sql()") || code.contains("quote_ident(") {
                    offenders.push(format!("{relative}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "the walk must see the crates' sources ({checked} files)"
    );
    assert!(
        offenders.is_empty(),
        "SQL over user tables outside maskbus_pg::statements:\n{}",
        offenders.join("\n")
    );
}
