//! The environment variables that are not config keys: the table of them, beside the key table
//! ([`crate::KEYS`], whose every key is also a variable), and its section of
//! docs/configuration.md. A test walks `crates/` and `scripts/` and fails on a `MASKBUS_*` name
//! that is in neither table, so a variable cannot be read without being documented here.

/// One environment variable that is not a config key: who reads it, its value when unset, and
/// what it does.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub name: &'static str,
    /// What reads it: `maskbus`, a script, the tests.
    pub read_by: &'static str,
    /// Its value when unset, as written in the reference; empty when there is none.
    pub default: &'static str,
    pub doc: &'static str,
}

/// Every environment variable maskbus, its scripts, its tests and its benchmarks read besides
/// the config keys, in the reference's order.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "MASKBUS_CONFIG",
        read_by: "`maskbus` (`run`, `mcp`, `tools`, `verify`, `status`, `slot`, `subset plan`)",
        default: "",
        doc: "the agent's config file, when `--config` is not given",
    },
    Variable {
        name: "MASKBUS_LOG",
        read_by: "`maskbus`",
        default: "warn,maskbus=info",
        doc: "which log lines are written to stderr: a `tracing` filter (`warn`, `debug`, `maskbus=debug`, `maskbus_consumer=debug`); the database client never logs above warnings, whatever it asks for, since its debug lines hold values",
    },
    Variable {
        name: "MASKBUS_LOG_FORMAT",
        read_by: "`maskbus`",
        default: "text",
        doc: "`text` (for people) or `json` (one JSON object a line, for a log pipeline; a failure is one more event); anything else is warned about and logs as text",
    },
    Variable {
        name: "DATABASE_URL",
        read_by: "scripts/dev-db (and so scripts/demo, scripts/test, scripts/bench), scripts/bench-keyless, the tests, the benchmark binaries",
        default: "",
        doc: "a PostgreSQL 15+ server's maintenance database (`postgres://me@db.internal:5432/postgres`) to use instead of the throwaway cluster; the tests and benchmarks make their own databases on it",
    },
    Variable {
        name: "MASKBUS_DEV_DB_DIR",
        read_by: "scripts/dev-db",
        default: "target/dev-db",
        doc: "the folder of the throwaway cluster (as root, when the `postgres` OS user cannot reach the checkout, a folder under /tmp)",
    },
    Variable {
        name: "MASKBUS_DEV_DB_PORT",
        read_by: "scripts/dev-db",
        default: "55432",
        doc: "the port the throwaway cluster listens on, on 127.0.0.1",
    },
    Variable {
        name: "MASKBUS_PG_BINDIR",
        read_by: "scripts/dev-db",
        default: "",
        doc: "the folder of the PostgreSQL server binaries (`initdb`, `pg_ctl`, `postgres`); unset: `PATH`, then `/usr/lib/postgresql/*/bin`, newest first",
    },
    Variable {
        name: "MASKBUS_BIN",
        read_by: "scripts/sync, scripts/demo",
        default: "",
        doc: "the `maskbus` binary to run; unset: `maskbus` on `PATH` (scripts/demo: only when its `--version` is this checkout's), else one built from this checkout",
    },
    Variable {
        name: "MASKBUS_PROFILE",
        read_by: "scripts/sync",
        default: "release",
        doc: "the cargo profile scripts/sync builds `maskbus` with, when neither `MASKBUS_BIN` nor `PATH` gives one",
    },
    Variable {
        name: "MASKBUS_PRODUCER_CONFIG",
        read_by: "scripts/sync",
        default: "",
        doc: "the producer's config, when not given as the first argument",
    },
    Variable {
        name: "MASKBUS_CONSUMER_CONFIG",
        read_by: "scripts/sync",
        default: "",
        doc: "the consumer's config, when not given as the second argument",
    },
    Variable {
        name: "MASKBUS_MCP_INSPECTOR",
        read_by: "the MCP tests (set by scripts/test)",
        default: "",
        doc: "the MCP Inspector CLI the MCP tests drive; scripts/test installs it into `target/mcp-inspector`",
    },
    Variable {
        name: "MASKBUS_SAMPLES",
        read_by: "scripts/bench",
        default: "",
        doc: "a folder with `chinook.sql`, `chinook_camel.sql` and `northwind.sql` (public sample databases, not in the repository) for `policy init`'s quality benchmark to include; unset: the schema zoo and the bank only",
    },
    Variable {
        name: "MASKBUS_BENCH_LOG",
        read_by: "the benchmark binaries (crates/bench)",
        default: "warn",
        doc: "the log filter of the agents a benchmark runs (`debug` for their own timings)",
    },
];

/// The section of docs/configuration.md that lists [`VARIABLES`].
pub fn reference_markdown() -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let mut out = String::from(
        "\n## Environment variables\n\n\
         Each key above is also read from its environment variable. These are the other \
         variables maskbus, its scripts, its tests and its benchmarks read:\n\n\
         | variable | read by | default | what it does |\n|---|---|---|---|\n",
    );
    for variable in VARIABLES {
        let default = if variable.default.is_empty() {
            "-".to_string()
        } else {
            format!("`{}`", variable.default)
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            variable.name,
            cell(variable.read_by),
            default,
            cell(variable.doc)
        ));
    }
    out
}
