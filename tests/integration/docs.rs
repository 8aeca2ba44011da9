//! The docs tell the truth about the tree: every path README, ARCHITECTURE and docs/ cite exists,
//! every symbol they cite is defined where they say, every module a crate has is named in its
//! crate's docs, and what README shows of the demo is what the demo prints.

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

// ---------------------------------------------------------------------------------------------
// Symbols: every item the docs cite is defined where they say.
//
// Two forms are checked, each in backticks:
//
// - `crates/<crate>/src/<file>.rs: Name` (or `Type::member`, or a list `A, B::c`): each name is
//   defined in that file (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod`,
//   `macro_rules!`); a `Type::member` names a type of the file or of its crate and a member of
//   it in that file (a variant of the enum, or an item of an `impl` of it or of the trait). The
//   path may be shortened to a unique ending (`consumer/pages.rs: page_columns`); a test of
//   `tests/integration` is cited the same way (`architecture.rs: pure_crates_...`).
// - `maskbus_<crate>::module::Name` (or `...::Type::member`): the crate is the one whose package
//   is `maskbus-<crate>`; its modules are files (`src/<m>.rs`, `src/<m>/mod.rs`), what follows
//   them is defined or re-exported (`pub use`) in the last module's file, and a member is one
//   of the type's anywhere in the crate.
//
// Read without a parser: comments are dropped and a definition is a keyword followed by the
// name, which is what the docs need and nothing more.

/// The keywords a definition starts with (`macro_rules!` reads as `macro_rules`).
const DEFINING: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "mod",
    "macro_rules",
    "union",
];

/// A Rust file's text without its line comments (doc comments included).
fn code_of(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !is_ident_char(c))
        .filter(|s| !s.is_empty())
}

/// Does this code define `name` (a keyword, then the name)?
fn defines(code: &str, name: &str) -> bool {
    let mut previous = "";
    for word in identifiers(code) {
        if word == name && DEFINING.contains(&previous) {
            return true;
        }
        previous = word;
    }
    false
}

/// The bodies of the blocks whose header (the text from `keyword` to its `{`) names `name`:
/// `enum Name { .. }`, `impl Name { .. }`, `impl Trait for Name { .. }`, `trait Name { .. }`.
fn blocks_of<'a>(code: &'a str, keyword: &str, name: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(keyword) {
        let before = code[..at].chars().next_back();
        let rest = &code[at + keyword.len()..];
        if before.is_some_and(is_ident_char) || rest.starts_with(is_ident_char) {
            continue;
        }
        let Some(open) = rest.find(['{', ';']) else {
            continue;
        };
        if rest[open..].starts_with(';') || !identifiers(&rest[..open]).any(|w| w == name) {
            continue;
        }
        let mut depth = 0;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                out.push(&rest[open..open + i]);
                break;
            }
        }
    }
    out
}

/// Is `member` a variant of `enum ty`, or defined in an `impl` of `ty` or in `trait ty`?
fn has_member(code: &str, ty: &str, member: &str) -> bool {
    blocks_of(code, "enum", ty)
        .iter()
        .any(|body| identifiers(body).any(|w| w == member))
        || ["impl", "trait"]
            .iter()
            .flat_map(|keyword| blocks_of(code, keyword, ty))
            .any(|body| defines(body, member))
}

/// The names a file's `pub use` statements make public (the last step, or the `as` name), and
/// whether one of them is a glob.
fn reexports(code: &str) -> (Vec<String>, bool) {
    let mut names = Vec::new();
    let mut glob = false;
    for (at, _) in code.match_indices("pub use ") {
        let statement = &code[at + "pub use ".len()..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        for item in statement.split([',', '{', '}']) {
            let item = item.trim();
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or("").trim(),
            };
            if name == "*" {
                glob = true;
            } else if !name.is_empty() {
                names.push(name.to_string());
            }
        }
    }
    (names, glob)
}

/// Every `.rs` file under a folder, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The code of every file of the crate a file belongs to (its `src/`; for a test, its folder).
fn crate_code(file: &Path) -> String {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "src") || d.join("Cargo.toml").exists() {
            break;
        }
        if d.parent().is_some_and(|p| p.ends_with("tests")) {
            break;
        }
        dir = d.parent();
    }
    let dir = dir.unwrap_or(Path::new("."));
    rust_files(dir)
        .iter()
        .filter_map(|f| code_of(f))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Is `Name` defined in `here`, or `Type::member` a type of `here` or `krate` with a member
/// (a method, an associated item, a variant) in `here`?
fn defines_path(here: &str, krate: &str, name: &str) -> bool {
    match name.split_once("::") {
        None => defines(here, name),
        Some((ty, member)) => {
            !member.contains("::")
                && (defines(here, ty) || defines(krate, ty))
                && has_member(here, ty, member)
        }
    }
}

/// The library crates by the name code uses for them (`maskbus_pg`), each with its folder.
fn crates_by_name() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo().join("crates")).unwrap().flatten() {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|rest| rest.strip_suffix('"'));
        if let Some(name) = name {
            out.push((name.replace('-', "_"), entry.path()));
        }
    }
    out
}

/// A cited file: a path from the top, or the one file of `crates/` or `tests/` ending with it
/// (`consumer/pages.rs` is `crates/consumer/src/pages.rs`).
fn resolve_file(cited: &str) -> Result<PathBuf, String> {
    let direct = repo().join(cited);
    if direct.is_file() {
        return Ok(direct);
    }
    let ending = format!("/{cited}");
    let mut found: Vec<PathBuf> = ["crates", "tests"]
        .iter()
        .flat_map(|top| rust_files(&repo().join(top)))
        .filter(|f| {
            let path = f.to_string_lossy();
            path.ends_with(&ending) || path.replace("/src/", "/").ends_with(&ending)
        })
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("no such file".to_string()),
        n => Err(format!("{n} files end with it; cite more of its path")),
    }
}

fn is_symbol_path(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(':')
        && !s.ends_with(':')
        && s.chars().all(|c| is_ident_char(c) || c == ':')
}

/// Checks one `maskbus_<crate>::...` citation.
fn check_crate_path(cited: &str, crates: &[(String, PathBuf)]) -> Result<(), String> {
    let mut steps = cited.split("::");
    let krate_name = steps.next().unwrap_or("");
    let Some((_, krate)) = crates.iter().find(|(n, _)| n == krate_name) else {
        return Err(format!("no crate {krate_name}"));
    };
    let steps: Vec<&str> = steps.collect();
    let (mut dir, mut file) = (krate.join("src"), krate.join("src/lib.rs"));
    let mut rest = &steps[..];
    while let Some(step) = rest.first() {
        let (flat, nested) = (
            dir.join(format!("{step}.rs")),
            dir.join(step).join("mod.rs"),
        );
        let next = if flat.is_file() {
            flat
        } else if nested.is_file() {
            nested
        } else {
            break;
        };
        dir = dir.join(step);
        file = next;
        rest = &rest[1..];
    }
    let here = code_of(&file).unwrap_or_default();
    let krate_code = crate_code(&file);
    match rest {
        [] => Ok(()),
        [name, member @ ..] if member.len() <= 1 => {
            let (public, glob) = reexports(&here);
            let reachable = defines(&here, name)
                || public.iter().any(|p| p == name)
                || (glob && defines(&krate_code, name));
            let whole = rest.join("::");
            if !reachable {
                Err(format!("{name} is neither defined nor re-exported there"))
            } else if !member.is_empty() && !defines_path(&krate_code, &krate_code, &whole) {
                Err(format!("{whole} is not defined in the crate"))
            } else {
                Ok(())
            }
        }
        _ => Err("too many steps after the modules".to_string()),
    }
}

/// Checks one `path.rs: Name, Type::member` citation.
fn check_file_items(file: &str, items: &str, checked: &mut usize) -> Vec<String> {
    let path = match resolve_file(file) {
        Ok(path) => path,
        Err(why) => return vec![why],
    };
    let here = code_of(&path).unwrap_or_default();
    let krate = crate_code(&path);
    let mut problems = Vec::new();
    for item in items.split(',').map(str::trim) {
        *checked += 1;
        if !is_symbol_path(item) {
            problems.push(format!("`{item}` is not a name or `Type::member`"));
        } else if !defines_path(&here, &krate, item) {
            problems.push(format!("{item} is not defined there"));
        }
    }
    problems
}

/// Every symbol citation of a text, checked: how many names it checked and what it found wrong.
fn check_symbols(text: &str) -> (usize, Vec<String>) {
    let crates = crates_by_name();
    let mut checked = 0;
    let mut problems = Vec::new();
    for piece in text.split('`').skip(1).step_by(2) {
        let piece = piece.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some((file, items)) = piece.split_once(".rs: ") {
            let file = format!("{file}.rs");
            if !file.chars().all(|c| is_ident_char(c) || "/.-".contains(c)) {
                continue;
            }
            for problem in check_file_items(&file, items, &mut checked) {
                problems.push(format!("`{piece}`: {problem}"));
            }
        } else {
            let cited = piece.strip_suffix("()").unwrap_or(&piece);
            if cited.starts_with("maskbus_") && cited.contains("::") && is_symbol_path(cited) {
                checked += 1;
                if let Err(problem) = check_crate_path(cited, &crates) {
                    problems.push(format!("`{piece}`: {problem}"));
                }
            }
        }
    }
    (checked, problems)
}

#[test]
fn every_symbol_the_docs_cite_exists() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let (n, problems) = check_symbols(&text);
        checked += n;
        let name = file.strip_prefix(repo()).unwrap_or(&file).display();
        wrong.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
    }
    assert!(
        checked > 30,
        "the walk must see the docs' symbol citations ({checked})"
    );
    assert!(
        wrong.is_empty(),
        "cited symbols that do not exist ({checked} checked):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_symbol_check_reports_what_does_not_exist() {
    let (checked, problems) = check_symbols(
        "`crates/producer/src/reply.rs: PageReply` and `maskbus_producer::reply::PageReply`, \
         `crates/pg/src/slot.rs: Horizon::may_differ`, `maskbus_pg::Database`, `maskbus_pg::closure` \
         and `changes/backlog.rs: Backlog::first_len` are true",
    );
    assert_eq!((checked, problems), (6, Vec::<String>::new()));
    let made_up = [
        "`crates/protocol/src/lib.rs: PageReply`",
        "`crates/producer/src/source.rs: Source::rows`",
        "`crates/producer/src/source.rs: Source::page, Nothing`",
        "`changes/parts.rs: Parts`",
        "`schema.rs: SchemaSync`",
        "`crates/pg/src/slot.rs: ChangeSlot::create/drop`",
        "`maskbus_protocol::PageReply`",
        "`maskbus_pg::Target`",
        "`maskbus_pg::nowhere::Pool`",
        "`maskbus_agents::Agent`",
        "`maskbus_producer::Producer::rows`",
    ];
    for citation in made_up {
        let (_, problems) = check_symbols(citation);
        assert!(!problems.is_empty(), "{citation} passed the check");
    }
}

/// The `MASKBUS_*` names a text holds (a name is the prefix and at least one capital or digit,
/// not ending in `_`: `MASKBUS_{}` in a format string is no name).
fn maskbus_variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("MASKBUS_") {
        if text[..at].chars().next_back().is_some_and(is_ident_char) {
            continue;
        }
        let rest = &text[at + "MASKBUS_".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        let name = rest[..end].trim_end_matches('_');
        if !name.is_empty() {
            out.push(format!("MASKBUS_{name}"));
        }
    }
    out
}

/// Every file under a folder, recursively.
fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn every_environment_variable_is_in_the_configuration_reference() {
    let documented: Vec<&str> = maskbus_config::KEYS
        .iter()
        .map(|k| k.env)
        .chain(
            maskbus_config::environment::VARIABLES
                .iter()
                .map(|v| v.name),
        )
        .collect();
    let mut seen = 0;
    let mut missing = std::collections::BTreeSet::new();
    for top in ["crates", "scripts"] {
        for file in all_files(&repo().join(top)) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for name in maskbus_variables(&text) {
                seen += 1;
                if !documented.contains(&name.as_str()) {
                    missing.insert(format!(
                        "{name} ({})",
                        file.strip_prefix(repo()).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(seen > 50, "the walk must see the variables read ({seen})");
    assert!(
        missing.is_empty(),
        "environment variables in neither the key table (crates/config/src/lib.rs) nor the \
         variable table (crates/config/src/environment.rs):\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
    for name in [
        "DATABASE_URL",
        "MASKBUS_LOG",
        "MASKBUS_LOG_FORMAT",
        "MASKBUS_DEV_DB_DIR",
        "MASKBUS_DEV_DB_PORT",
        "MASKBUS_CONFIG",
        "MASKBUS_BIN",
    ] {
        assert!(documented.contains(&name), "{name} is not in the tables");
    }
    let written = std::fs::read_to_string(repo().join("docs/configuration.md")).unwrap();
    assert!(
        written == maskbus_config::reference_markdown(),
        "docs/configuration.md is not what the tables say: run `maskbus config keys > docs/configuration.md`"
    );
}

#[test]
fn the_variable_scan_finds_names_and_skips_prefixes() {
    assert_eq!(
        maskbus_variables("export MASKBUS_LOG=warn; format!(\"MASKBUS_{}\"); XMASKBUS_NO ${MASKBUS_DEV_DB_PORT:-1}"),
        ["MASKBUS_LOG", "MASKBUS_DEV_DB_PORT"]
    );
}
