//! Helpers shared by the integration tests: running the real binary, reading tables.

use std::process::{Command, Output};

pub use maskbus_pg::testing::TestDatabases;

/// The outcome of one `maskbus` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(
            self.code, 0,
            "maskbus failed\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs the `maskbus` binary built for these tests, without inheriting MASKBUS_* settings.
pub fn maskbus(args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_maskbus"));
    command.args(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("MASKBUS_") {
            command.env_remove(key);
        }
    }
    command.env("MASKBUS_LOG", "warn");
    command.output().expect("run maskbus").into()
}

/// Creates the three databases and applies their schemas through `maskbus db init`.
pub async fn bank_databases(test: &str) -> TestDatabases {
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    maskbus(&[
        "db",
        "init",
        "--source",
        &dbs.url("src"),
        "--target",
        &dbs.url("dst"),
        "--bus",
        &dbs.url("bus"),
    ])
    .success();
    dbs
}

pub async fn connect(url: &str) -> maskbus_pg::tokio_postgres::Client {
    maskbus_pg::Target::parse("test", url)
        .unwrap()
        .connect()
        .await
        .unwrap()
}

/// A fingerprint of a table's whole content, ordered by id: equal fingerprints, equal tables.
pub async fn table_fingerprint(client: &maskbus_pg::tokio_postgres::Client, table: &str) -> String {
    client
        .query_one(&format!("SELECT coalesce(md5(string_agg(t::text, E'\\n' ORDER BY id)), 'empty') FROM {table} t"), &[])
        .await
        .unwrap()
        .get(0)
}
