//! Helpers shared by the integration tests: running the real binary, reading tables.

use std::process::{Command, Output};

pub use maskbus_pg::testing::{TestDatabases, TestRoles};

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

/// Runs the `maskbus` binary with `MASKBUS_*` settings of the caller's (the log level, say).
pub fn maskbus_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_maskbus"));
    command.args(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("MASKBUS_") {
            command.env_remove(key);
        }
    }
    command.env("MASKBUS_LOG", "warn");
    command.envs(env.iter().copied());
    command.output().expect("run maskbus").into()
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

/// Creates the three databases: the bank schema in source and target (`maskbus bank init`), the
/// mailbox in the bus (`maskbus bus init`).
/// The target database and the bank's tables in it belong to [`TARGET_WRITER`], the role the
/// consumer fills it as (not a superuser: the consumer refuses one).
pub async fn bank_databases(test: &str) -> TestDatabases {
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    maskbus(&[
        "bank",
        "init",
        "--source",
        &dbs.url("src"),
        "--target",
        &dbs.url("dst"),
    ])
    .success();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    hand_to_writer(&dbs.url("dst")).await;
    dbs
}

/// The login role (not a superuser, one for the test cluster) the tests' consumers connect to
/// their target as: the owner of each target database [`bank_databases`] makes, and of the
/// tables in it.
pub const TARGET_WRITER: &str = "maskbus_test_writer";

/// `url` (a target database) as [`TARGET_WRITER`] reaches it, handed to the writer first if it
/// is not yet (a target the test made by hand, as the cluster's superuser), as a DBA would: every
/// consumer of these tests runs as a non-superuser owner of its target, unless it asks for the
/// superuser with [`SUPERUSER_TARGET`].
pub fn writer_url(url: &str) -> String {
    if !writer_targets().lock().unwrap().contains(url) {
        // On a thread of its own: this is called from inside the test's runtime.
        let owned = url.to_string();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(hand_to_writer(&owned))
        })
        .join()
        .unwrap();
    }
    maskbus_pg::testing::url_with_user(url, TARGET_WRITER)
}

/// The user a `postgres://user@host/db` URL names.
fn user_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or("", |(user, _)| user.split(':').next().unwrap_or(user))
}

/// The target databases handed to [`TARGET_WRITER`], by URL.
fn writer_targets() -> &'static std::sync::Mutex<std::collections::BTreeSet<String>> {
    static TARGETS: std::sync::OnceLock<std::sync::Mutex<std::collections::BTreeSet<String>>> =
        std::sync::OnceLock::new();
    TARGETS.get_or_init(Default::default)
}

/// Makes [`TARGET_WRITER`] the owner of the database at `url`, of its schemas and of every
/// table, view and type in them (a table's sequences follow it), as a test team's DBA would for
/// the consumer's role.
pub async fn hand_to_writer(url: &str) {
    let admin = connect(url).await;
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN CREATE ROLE {TARGET_WRITER} LOGIN; EXCEPTION WHEN OTHERS THEN NULL; END $$;
             DO $$ DECLARE r record; BEGIN
               EXECUTE format('ALTER DATABASE %I OWNER TO {TARGET_WRITER}', current_database());
               FOR r IN SELECT nspname FROM pg_namespace
                         WHERE nspname NOT IN ('public', 'information_schema')
                           AND left(nspname, 3) <> 'pg_' LOOP
                 EXECUTE format('ALTER SCHEMA %I OWNER TO {TARGET_WRITER}', r.nspname);
               END LOOP;
               FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c
                          JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname NOT IN ('information_schema') AND left(n.nspname, 3) <> 'pg_'
                           AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                           AND NOT c.relispartition LOOP
                 EXECUTE format('ALTER TABLE %s OWNER TO {TARGET_WRITER}', r.rel);
               END LOOP;
               FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c
                          JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname NOT IN ('information_schema') AND left(n.nspname, 3) <> 'pg_'
                           AND c.relkind IN ('r', 'p') AND c.relispartition LOOP
                 EXECUTE format('ALTER TABLE %s OWNER TO {TARGET_WRITER}', r.rel);
               END LOOP;
               FOR r IN SELECT t.oid::regtype AS ty FROM pg_type t
                          JOIN pg_namespace n ON n.oid = t.typnamespace
                         WHERE n.nspname NOT IN ('information_schema') AND left(n.nspname, 3) <> 'pg_'
                           AND t.typtype IN ('e', 'd', 'r') LOOP
                 EXECUTE format('ALTER TYPE %s OWNER TO {TARGET_WRITER}', r.ty);
               END LOOP;
             END $$;"
        ))
        .await
        .unwrap();
    writer_targets().lock().unwrap().insert(url.to_string());
}

/// The three databases with the bank source seeded with `customers` customers.
pub async fn seeded(test: &str, customers: &str) -> TestDatabases {
    let dbs = bank_databases(test).await;
    maskbus(&[
        "seed",
        "--source",
        &dbs.url("src"),
        "--customers",
        customers,
    ])
    .success();
    dbs
}

pub async fn connect(url: &str) -> maskbus_pg::tokio_postgres::Client {
    maskbus_pg::Database::parse("test", url)
        .unwrap()
        .connect()
        .await
        .unwrap()
}

/// The first column of every row of `sql` (a statement without parameters).
pub async fn first_column<T>(client: &maskbus_pg::tokio_postgres::Client, sql: &str) -> Vec<T>
where
    T: for<'a> maskbus_pg::tokio_postgres::types::FromSql<'a>,
{
    client
        .query(sql, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// A fingerprint of a table's whole content, ordered by id: equal fingerprints, equal tables.
pub async fn table_fingerprint(client: &maskbus_pg::tokio_postgres::Client, table: &str) -> String {
    client
        .query_one(&format!("SELECT coalesce(md5(string_agg(t::text, E'\\n' ORDER BY id)), 'empty') FROM {table} t"), &[])
        .await
        .unwrap()
        .get(0)
}

/// A `maskbus` process in the background, killed (SIGKILL) when dropped.
pub struct Background {
    pub child: std::process::Child,
}

impl Background {
    pub fn spawn(args: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_maskbus"));
        command.args(args);
        for (key, _) in std::env::vars() {
            if key.starts_with("MASKBUS_") {
                command.env_remove(key);
            }
        }
        command
            .env("MASKBUS_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        Background {
            child: command.spawn().expect("spawn maskbus"),
        }
    }

    /// Like [`Background::spawn`], logging at debug level into the file `log` (tests read it
    /// for what must never be logged).
    pub fn spawn_logged(args: &[&str], log: &str) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_maskbus"));
        command.args(args);
        for (key, _) in std::env::vars() {
            if key.starts_with("MASKBUS_") {
                command.env_remove(key);
            }
        }
        let file = std::fs::File::create(log).expect("create the log file");
        command
            .env("MASKBUS_LOG", "debug")
            .stdout(std::process::Stdio::null())
            .stderr(file);
        Background {
            child: command.spawn().expect("spawn maskbus"),
        }
    }

    /// SIGKILL: no chance to clean up, like a crash.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to exit by itself: its exit code.
    pub fn wait(mut self) -> Option<i32> {
        self.child.wait().ok().and_then(|s| s.code())
    }

    /// SIGTERM, then the exit code.
    pub fn terminate(mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a config file into a fresh temporary folder that lives as long as the returned guard.
pub struct ConfigFiles {
    dir: std::path::PathBuf,
}

impl ConfigFiles {
    pub fn new(test: &str) -> Self {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "maskbus-{test}-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        ConfigFiles { dir }
    }

    /// The folder the files are written in.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl Drop for ConfigFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The tests' pseudonym key: as `maskbus key new` prints one (a typed pattern such as
/// `integration-test-key-0123456789-abcdef` is refused as guessable).
pub const TEST_KEY: &str = "4d1e0d5bdac624a0e2fcf975e0d6aec22cb6f915c51620e4d4a31f7c6088770c";

/// The bank's policy, the demo's file.
pub const BANK_POLICY_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/bank.toml");

/// The consumer's key that lets it run as the test cluster's superuser: for the tests whose
/// target is not one [`bank_databases`] handed to [`TARGET_WRITER`] (a schema made by hand as
/// the superuser), and those that need a superuser's feature (disable_triggers).
pub const SUPERUSER_TARGET: &str = "allow_superuser_target = true\n";

/// Producer and consumer configs for the three test databases.
pub fn agent_configs(
    files: &ConfigFiles,
    dbs: &TestDatabases,
    consumer_extra: &str,
) -> (String, String) {
    agent_configs_with(files, dbs, "", consumer_extra)
}

/// [`agent_configs`] with extra lines in the producer's config too.
pub fn agent_configs_with(
    files: &ConfigFiles,
    dbs: &TestDatabases,
    producer_extra: &str,
    consumer_extra: &str,
) -> (String, String) {
    let urls = AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: dbs.url("src"),
        target: dbs.url("dst"),
    };
    write_agent_configs(files, &urls, producer_extra, consumer_extra)
}

/// Where each agent connects (the bus URLs differ when each agent is its own role).
pub struct AgentUrls {
    pub producer_bus: String,
    pub consumer_bus: String,
    pub source: String,
    pub target: String,
}

/// A producer config (with the tests' pseudonym key) and a consumer config, each with extra
/// lines.
pub fn write_agent_configs(
    files: &ConfigFiles,
    urls: &AgentUrls,
    producer_extra: &str,
    consumer_extra: &str,
) -> (String, String) {
    // The bank's policy unless the test names its own.
    let names_policy = producer_extra
        .lines()
        .any(|l| l.trim_start().starts_with("policy"));
    let policy = if names_policy {
        String::new()
    } else {
        format!("policy = \"{BANK_POLICY_PATH}\"\n")
    };
    let producer = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npseudonym_key = \"{TEST_KEY}\"\n{policy}{producer_extra}\n",
            urls.producer_bus, urls.source
        ),
    );
    // The consumer never runs as the cluster's superuser unless the test asks for it with
    // SUPERUSER_TARGET: a target named by the superuser's URL is reached as the writer.
    let cluster_user_url = maskbus_pg::testing::cluster_url();
    let target = if !consumer_extra.contains("allow_superuser_target")
        && user_of(&urls.target) == user_of(&cluster_user_url)
    {
        writer_url(&urls.target)
    } else {
        urls.target.clone()
    };
    let consumer = files.write(
        "consumer.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{target}\"\n{consumer_extra}\n",
            urls.consumer_bus
        ),
    );
    (producer, consumer)
}

/// Waits (polling a condition, never a fixed sleep) until `check` holds, for at most a minute.
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The bank policy with the tests' pseudonym key.
pub fn bank_policy() -> maskbus_mask::Policy {
    maskbus_mask::Policy::bank()
        .unwrap()
        .with_key(maskbus_mask::PseudonymKey::new(TEST_KEY.as_bytes()))
}

/// A table's policy columns and the `SELECT` that reads them as text, in key order.
pub fn text_select(policy: &maskbus_mask::Policy, table: &str) -> (Vec<String>, String) {
    let columns: Vec<String> = policy
        .entity(table)
        .unwrap()
        .columns()
        .map(|(c, _)| c.to_string())
        .collect();
    let list = columns
        .iter()
        .map(|c| format!("t.{c}::text"))
        .collect::<Vec<_>>()
        .join(", ");
    (
        columns,
        format!("SELECT {list} FROM {table} t ORDER BY t.id"),
    )
}

/// Every row of `table` in the source, masked by `policy`, in key order.
pub async fn masked_source_rows(
    src: &maskbus_pg::tokio_postgres::Client,
    policy: &maskbus_mask::Policy,
    table: &str,
) -> Vec<Vec<Option<String>>> {
    let (columns, select) = text_select(policy, table);
    let masker = policy.masker(table, &columns).unwrap();
    src.query(&select, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| {
            masker
                .mask((0..columns.len()).map(|i| r.get(i)).collect())
                .unwrap()
                .values()
                .to_vec()
        })
        .collect()
}

/// Every bank table of the target equals the source masked by the bank policy, row for row.
pub async fn assert_target_is_masked_source(dbs: &TestDatabases) {
    let src = connect(&dbs.url("src")).await;
    let dst = connect(&dbs.url("dst")).await;
    for client in [&src, &dst] {
        client
            .batch_execute("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'")
            .await
            .unwrap();
    }
    let policy = bank_policy();
    for table in maskbus_bank::TABLES {
        let (columns, select) = text_select(&policy, table);
        let expected = masked_source_rows(&src, &policy, table).await;
        let actual: Vec<Vec<Option<String>>> = dst
            .query(&select, &[])
            .await
            .unwrap()
            .iter()
            .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
            .collect();
        assert_eq!(actual.len(), expected.len(), "{table}: row counts differ");
        for (a, e) in actual.iter().zip(&expected) {
            assert_eq!(a, e, "{table}: a target row is not the masked source row");
        }
    }
}

/// Every constraint (with whether it is validated) and index of the database's own schemas, as
/// sorted definitions: two databases with the same DDL have the same list.
pub async fn schema_objects(url: &str) -> Vec<String> {
    connect(url)
        .await
        .query(
            "SELECT format('constraint %s on %s: %s (validated: %s)', k.conname, k.conrelid::regclass,
                           pg_get_constraintdef(k.oid), k.convalidated)
               FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace
              WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'maskbus')
             UNION ALL
             SELECT format('index %s.%s: %s', schemaname, indexname, indexdef) FROM pg_indexes
              WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'maskbus')
             ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// How many indexes and foreign keys a bulk load has lifted and not rebuilt in the target.
pub async fn lifted_count(url: &str) -> i64 {
    connect(url)
        .await
        .query_one(
            "SELECT CASE WHEN to_regclass('maskbus.lifted') IS NULL THEN 0
                         ELSE (SELECT count(*) FROM maskbus.lifted) END",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// A source made by `schema`, an empty target, a bus, the policy written, its producer running
/// (its config with `producer_extra`) and the consumer's config (with `consumer_extra`): what
/// the tests of one schema and policy start from.
pub struct Synced {
    pub dbs: TestDatabases,
    pub files: ConfigFiles,
    pub policy: String,
    pub producer: String,
    pub consumer: String,
    _running: Background,
}

impl Synced {
    pub async fn start(test: &str, schema: &str, policy: &str) -> Self {
        Self::start_with(test, schema, policy, "", "").await
    }

    pub async fn start_with(
        test: &str,
        schema: &str,
        policy: &str,
        producer_extra: &str,
        consumer_extra: &str,
    ) -> Self {
        let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
        connect(&dbs.url("src"))
            .await
            .batch_execute(schema)
            .await
            .unwrap();
        maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
        let files = ConfigFiles::new(test);
        let policy = files.write("policy.toml", policy);
        let urls = AgentUrls {
            producer_bus: dbs.url("bus"),
            consumer_bus: dbs.url("bus"),
            source: dbs.url("src"),
            target: dbs.url("dst"),
        };
        let (producer, consumer) = write_agent_configs(
            &files,
            &urls,
            &format!("policy = \"{policy}\"\n{producer_extra}\n"),
            consumer_extra,
        );
        let running = Background::spawn(&["run", "--config", &producer]);
        Synced {
            dbs,
            files,
            policy,
            producer,
            consumer,
            _running: running,
        }
    }

    /// The consumer's one pass.
    pub fn sync(&self) -> Run {
        maskbus(&["run", "--config", &self.consumer, "--once"])
    }
}

/// A free port on the loopback (bound and let go: nothing else on this machine races for it).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on the loopback: (status, body). `None` while nothing listens yet.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

/// The bank in three databases, a producer with a slot (and `producer_extra`) and a consumer in
/// stream mode. The consumer gives an answer up after 3 s
/// without a reply unless `consumer_extra` sets its own `request_timeout`.
pub async fn stream_bank_with(
    test: &str,
    customers: &str,
    producer_extra: &str,
    consumer_extra: &str,
) -> (TestDatabases, ConfigFiles, String, String) {
    let dbs = seeded(test, customers).await;
    let files = ConfigFiles::new(test);
    let urls = AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: dbs.url("src"),
        target: dbs.url("dst"),
    };
    let (producer, consumer) = write_agent_configs(
        &files,
        &urls,
        &format!("slot = \"maskbus_{test}\"\n{producer_extra}"),
        &format!(
            "mode = \"stream\"\n{}{consumer_extra}",
            if consumer_extra.contains("request_timeout") {
                ""
            } else {
                "request_timeout = \"3s\"\n"
            }
        ),
    );
    (dbs, files, producer, consumer)
}
