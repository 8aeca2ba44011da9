//! The docs tell the truth about the tree: every path README, ARCHITECTURE and docs/ cite exists,
//! every module a crate has is named in its crate's docs, and what README shows of the demo is
//! what the demo prints.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files of the front door and the reference.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md"), repo().join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            files.push(entry.path());
        }
    }
    files
}

/// The repository paths a text cites: in backticks or as a link target, starting with one of the
/// tree's top folders (or a top-level file), without line numbers or `: item` after them.
fn cited_paths(text: &str, base: &Path) -> Vec<PathBuf> {
    const ROOTS: &[&str] = &[
        "crates/",
        "scripts/",
        "docs/",
        "tests/",
        "policies/",
        "seeds/",
        ".ci/",
    ];
    let mut out = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    for piece in text.split('`').skip(1).step_by(2) {
        candidates.push(piece.to_string());
    }
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        if let Some(end) = rest.find(')') {
            candidates.push(rest[..end].to_string());
        }
    }
    for candidate in candidates {
        let path = candidate
            .split([' ', ':', '#', ',', ';'])
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        if path.contains('*') || path.contains("://") || path.is_empty() {
            continue;
        }
        let relative_doc = path.ends_with(".md") && !path.contains('/');
        if ROOTS.iter().any(|r| path.starts_with(r)) {
            out.push(repo().join(path));
        } else if relative_doc || path.starts_with("../") {
            out.push(base.join(path));
        }
    }
    out
}

#[test]
fn every_path_the_docs_cite_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let base = file.parent().unwrap().to_path_buf();
        for path in cited_paths(&text, &base) {
            checked += 1;
            if !path.exists() {
                missing.push(format!(
                    "{} cites {}",
                    file.strip_prefix(repo()).unwrap_or(&file).display(),
                    path.strip_prefix(repo()).unwrap_or(&path).display()
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "the walk must see the docs' citations ({checked})"
    );
    assert!(
        missing.is_empty(),
        "cited paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines; the reference belongs in docs/"
    );
}

#[test]
fn what_the_readme_shows_of_the_demo_is_what_the_demo_prints() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let demo = std::fs::read_to_string(repo().join("scripts/demo")).unwrap();
    let steps: Vec<String> = demo
        .lines()
        .filter_map(|l| {
            l.strip_prefix("step \"")?
                .strip_suffix('"')
                .map(String::from)
        })
        .collect();
    let shown: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("== "))
        .collect();
    assert!(shown.len() >= 5, "README shows the demo's steps");
    for line in shown {
        assert!(
            steps.iter().any(|s| s == line),
            "README shows a demo step the demo does not print: {line:?}"
        );
    }
}

#[test]
fn every_module_is_named_in_its_crates_docs() {
    let mut unnamed = Vec::new();
    for krate in std::fs::read_dir(repo().join("crates")).unwrap().flatten() {
        let lib = krate.path().join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            continue;
        };
        let docs: String = text
            .lines()
            .filter(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        for line in text.lines() {
            let line = line.trim();
            let name = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            let Some(name) = name else { continue };
            if name == "tests" {
                continue;
            }
            if !docs.contains(&format!("`{name}`")) && !docs.contains(&format!("[`{name}`]")) {
                unnamed.push(format!(
                    "{}: mod {name}",
                    lib.strip_prefix(repo()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        unnamed.is_empty(),
        "modules their crate's docs do not name:\n{}",
        unnamed.join("\n")
    );
}
