//! Roles are configuration, not forks: one TOML file (and `MASKBUS_*` variables over it) makes
//! this process a producer or a consumer.
//!
//! [`resolve`] is pure: it takes the parsed file and the environment and either returns a config
//! for exactly one role or refuses, naming the key (and where it came from) when a role is given a
//! URL it must not hold. A producer never holds the test database's URL; a consumer never holds
//! the production URL, the policy or the pseudonym key. The check happens before anything
//! connects.
//!
//! [`KEYS`] is the table of the config keys; `environment` is the table of the environment
//! variables that are not keys (logging, the scripts' and the tests' own). docs/configuration.md
//! is both, generated ([`reference_markdown`]).

pub mod environment;

pub use maskbus_model::Role;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A secret that never shows in Debug output or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

pub const DEFAULT_PRODUCER_MAILBOX: &str = "maskbus.producer";
pub const DEFAULT_CONSUMER_MAILBOX: &str = "maskbus.consumer";

/// Where `maskbus status` takes the producer's replies for the consumer of `mailbox`: a mailbox
/// of its own, so a running follower never takes them.
pub fn status_mailbox(mailbox: &str) -> String {
    format!("{mailbox}.status")
}

/// Where `maskbus verify` takes the producer's replies for the consumer of `mailbox`, for the
/// same reason: a follower and a verify of one config sharing a mailbox drop each other's
/// replies and both wait `request_timeout` for them.
pub fn verify_mailbox(mailbox: &str) -> String {
    format!("{mailbox}.verify")
}

/// Every mailbox the consumer of `mailbox` takes replies on: `bus grant --consumer` gives it
/// all of them.
pub fn consumer_mailboxes(mailbox: &str) -> [String; 3] {
    [
        mailbox.to_string(),
        status_mailbox(mailbox),
        verify_mailbox(mailbox),
    ]
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    pub bus_url: Secret,
    pub source_url: Secret,
    /// The masking policy: required (no built-in default serves rules nobody reviewed).
    pub policy: PathBuf,
    pub pseudonym_key: Option<Secret>,
    /// The mailbox the producer serves.
    pub mailbox: String,
    /// The logical replication slot (and publication) this producer streams changes from; no
    /// change stream without it.
    pub slot: Option<String>,
    /// A publication a DBA made for the change stream: the producer reads it and never creates,
    /// alters or drops it (none: the producer makes its own, named as the slot).
    pub publication: Option<String>,
    /// A large source transaction goes to the consumer while the source writes it (pgoutput's
    /// streaming), not once it has committed.
    pub stream_while_written: bool,
    /// The subsets file (named subsets and virtual foreign keys), beside the policy.
    pub subsets: Option<PathBuf>,
    /// Columns the egress guard does not read (the wire audit's reviewed-columns file).
    pub reviewed_columns: Option<PathBuf>,
    /// The most real values the egress guard's exact matcher loads (0: none).
    pub guard_values: u32,
    /// Where to serve `/metrics` and `/health` while running; none when unset.
    pub metrics_addr: Option<SocketAddr>,
    /// `/health` fails when a message has waited longer than this for the wire audit.
    pub audit_max_age: Duration,
}

/// How a consumer follows the source after its first copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Passes that read every table for rows written since the last pass (no slot needed on the
    /// source; deletes need `maskbus verify --repair`).
    Watermark,
    /// The producer's change stream: inserts, updates and deletes in commit order, at the cost
    /// of the change.
    Stream,
}

impl SyncMode {
    pub const NAMES: &'static str = "\"watermark\" or \"stream\"";

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "watermark" => Some(SyncMode::Watermark),
            "stream" => Some(SyncMode::Stream),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerConfig {
    pub bus_url: Secret,
    pub target_url: Secret,
    /// Where replies come back to.
    pub mailbox: String,
    /// Where requests go.
    pub producer_mailbox: String,
    pub page_size: u32,
    /// Consecutive pages asked for in one request (each its own reply), to save round trips.
    pub pages_per_request: u32,
    /// Key ranges a large table's first pass is read and loaded in side by side (at least 1;
    /// `0` in the file is resolved from the machine's cores: one per two, 1 to 4).
    pub streams: u32,
    /// The fewest rows one range holds.
    pub range_rows: u32,
    /// Without --once, how long to wait between sync passes.
    pub follow_interval: Duration,
    /// How long to wait for one reply before asking again.
    pub request_timeout: Duration,
    /// Stop at the first table that cannot be synced instead of syncing the others.
    pub all_or_nothing: bool,
    /// Write with `session_replication_role = replica`, as `pg_restore --disable-triggers`
    /// does: the target's own triggers (a `last_updated` stamp, a search vector) do not rewrite
    /// synced rows, and its foreign-key checks are skipped (the rows come from a consistent
    /// snapshot of the source). Needs superuser or `GRANT SET ON PARAMETER`.
    pub disable_triggers: bool,
    /// Load tables that were never synced and are empty as `pg_restore` does: their secondary
    /// indexes and foreign keys are lifted for the first pass and rebuilt (foreign keys
    /// validated once) at its end, and rows go in with COPY. On by default.
    pub bulk_load: bool,
    /// Watermark mode: after each pass's rows, compare each synced table's key-range hashes
    /// with the producer's (as `maskbus verify` does) and delete the rows the source no longer
    /// has, fetching only the ranges that differ. On by default; off, deletes wait for
    /// `maskbus verify --repair`, and `status` never says caught up.
    pub follow_deletes: bool,
    /// Consumer workers sharing this target (each its own process, anywhere), and which one this
    /// is (1-based). Each worker syncs its share of the tables (a cycle's tables stay together)
    /// and has its own reply mailbox (`maskbus.consumer.N` unless `mailbox` says otherwise).
    pub workers: u32,
    pub worker: u32,
    pub mode: SyncMode,
    /// The producer's subset this target holds (by name), or all of the source.
    pub subset: Option<String>,
    /// Where to serve `/metrics` and `/health` while running; none when unset.
    pub metrics_addr: Option<SocketAddr>,
    /// `/health` fails, and `status` says so, when a message has waited longer than this for
    /// the wire audit.
    pub audit_max_age: Duration,
    /// Take a target that already holds rows (`maskbus run --init-target`, never from a file):
    /// without it the first run refuses a database that is not empty.
    pub init_target: bool,
    /// Run against the target as a superuser (or a role that may write server files or run
    /// server programs): refused unless this is set, for throwaway databases only.
    pub allow_superuser_target: bool,
    /// The extensions the consumer may create when the served schema names them; `None`: those
    /// PostgreSQL marks trusted, read from the target. Never a served name alone.
    pub extensions: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentConfig {
    Producer(ProducerConfig),
    Consumer(ConsumerConfig),
}

impl AgentConfig {
    /// Where the agent serves `/metrics` and `/health`, if it does.
    /// How long a message may wait for the wire audit before `/health` fails.
    pub fn audit_max_age(&self) -> Duration {
        match self {
            AgentConfig::Producer(p) => p.audit_max_age,
            AgentConfig::Consumer(c) => c.audit_max_age,
        }
    }

    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        match self {
            AgentConfig::Producer(p) => p.metrics_addr,
            AgentConfig::Consumer(c) => c.metrics_addr,
        }
    }

    pub fn role(&self) -> Role {
        match self {
            AgentConfig::Producer(_) => Role::Producer,
            AgentConfig::Consumer(_) => Role::Consumer,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("config {origin}: {reason}")]
    Invalid { origin: String, reason: String },
    #[error("config {origin}: a {role} must not hold {key} (set by {set_by}): {why}; remove it")]
    Forbidden {
        origin: String,
        role: &'static str,
        key: &'static str,
        set_by: String,
        why: &'static str,
    },
    #[error("config {origin}: the {role} needs {key}; set it in the file or as {env}")]
    Missing {
        origin: String,
        role: &'static str,
        key: &'static str,
        env: &'static str,
    },
}

/// Which roles take a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    Both,
    Producer,
    Consumer,
}

/// What a key's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number within the range.
    Count(u32, u32),
    Duration,
    Flag,
}

/// One key of the config: its name in the file, the environment variable that overrides it,
/// which role takes it, what its value is, its default, what it does, and, for a key the other
/// role must never hold, why. This table is the only place a key is spelled: the file, the
/// environment, the checks, the defaults and the reference (`maskbus config keys`, which
/// writes docs/configuration.md) are all driven by it.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    pub env: &'static str,
    pub takes: Takes,
    pub kind: Kind,
    /// The value when neither the file nor the environment sets one, as the file would write
    /// it; empty when there is none (required, or derived as `doc` says).
    pub default: &'static str,
    /// What the key does, for the reference.
    pub doc: &'static str,
    /// Holding this key in the other role is a breach, not a typo: refused with this reason.
    pub forbidden_elsewhere: Option<&'static str>,
}

impl Key {
    /// A text key: it reads as a `String`.
    const fn text(name: &'static str, env: &'static str, takes: Takes) -> Typed<String> {
        Typed::of(Key::new(name, env, takes, Kind::Text))
    }

    /// A count key within `low` to `high`: it reads as a `u32`.
    const fn count(
        name: &'static str,
        env: &'static str,
        takes: Takes,
        low: u32,
        high: u32,
    ) -> Typed<u32> {
        Typed::of(Key::new(name, env, takes, Kind::Count(low, high)))
    }

    /// A duration key: it reads as a `Duration`.
    const fn duration(name: &'static str, env: &'static str, takes: Takes) -> Typed<Duration> {
        Typed::of(Key::new(name, env, takes, Kind::Duration))
    }

    /// A flag key: it reads as a `bool`.
    const fn flag(name: &'static str, env: &'static str, takes: Takes) -> Typed<bool> {
        Typed::of(Key::new(name, env, takes, Kind::Flag))
    }

    const fn new(name: &'static str, env: &'static str, takes: Takes, kind: Kind) -> Key {
        Key {
            name,
            env,
            takes,
            kind,
            default: "",
            doc: "",
            forbidden_elsewhere: None,
        }
    }

    /// Who takes the key, in words.
    pub fn takes_name(&self) -> &'static str {
        match self.takes {
            Takes::Both => "both",
            Takes::Producer => "producer",
            Takes::Consumer => "consumer",
        }
    }

    /// The kind of value, in words.
    pub fn kind_name(&self) -> String {
        match self.kind {
            Kind::Text => "text".into(),
            Kind::Count(low, high) => format!("whole number {low} to {high}"),
            Kind::Duration => "duration (`30s`, `5m`, `24h`)".into(),
            Kind::Flag => "true or false".into(),
        }
    }
}

/// A key read as `T`, the type of its kind, or `None` when neither the file nor the environment
/// sets it. Only its kind's constructor in the key table makes one (`Key::count` a `Typed<u32>`),
/// so the type read and the kind checked cannot differ.
#[derive(Debug)]
pub struct Typed<T> {
    pub key: Key,
    of: PhantomData<fn() -> T>,
}

/// A key with a default: it reads as `T` itself, never `None` (a test parses every default
/// under its key's kind, so a read never falls back to 0).
#[derive(Debug)]
pub struct Defaulted<T> {
    pub key: Key,
    of: PhantomData<fn() -> T>,
}

impl<T> Typed<T> {
    const fn of(key: Key) -> Self {
        Typed {
            key,
            of: PhantomData,
        }
    }

    /// The value when neither the file nor the environment sets one, as the file would write it.
    const fn default(self, value: &'static str) -> Defaulted<T> {
        let mut key = self.key;
        key.default = value;
        Defaulted {
            key,
            of: PhantomData,
        }
    }

    const fn doc(self, doc: &'static str) -> Self {
        let mut key = self.key;
        key.doc = doc;
        Typed::of(key)
    }

    const fn guarded(self, why: &'static str) -> Self {
        let mut key = self.key;
        key.forbidden_elsewhere = Some(why);
        Typed::of(key)
    }
}

impl<T> Defaulted<T> {
    const fn doc(self, doc: &'static str) -> Self {
        let mut key = self.key;
        key.doc = doc;
        Defaulted {
            key,
            of: PhantomData,
        }
    }
}

use Takes::{Both, Consumer as ForConsumer, Producer as ForProducer};

/// Makes each key a constant, read through its type, and lists them all in [`KEYS`]: a key
/// cannot be defined and left out of the file, the environment or the reference.
macro_rules! keys {
    ($($name:ident: $typed:ty = $key:expr;)*) => {
        /// Every config key, in the reference's order.
        pub const KEYS: &[Key] = &[$($name.key),*];
        $(pub const $name: $typed = $key;)*
    };
}

keys! {
    ROLE: Typed<String> = Key::text("role", "MASKBUS_ROLE", Both)
        .doc("`producer` or `consumer`: which of the two this process is (required)");
    BUS_URL: Typed<String> = Key::text("bus_url", "MASKBUS_BUS_URL", Both)
        .doc("the bus database, as this role's own database role (required)");
    SOURCE_URL: Typed<String> = Key::text("source_url", "MASKBUS_SOURCE_URL", ForProducer)
        .doc("production, read-only (required)")
        .guarded("the consumer must never be able to reach production; it gets masked rows over the bus");
    POLICY: Typed<String> = Key::text("policy", "MASKBUS_POLICY", ForProducer)
        .doc("the masking policy file (required; `maskbus policy init` proposes one); a relative path is read beside this config file")
        .guarded("masking happens on the producer, never on the consumer");
    PSEUDONYM_KEY: Typed<String> = Key::text("pseudonym_key", "MASKBUS_PSEUDONYM_KEY", ForProducer)
        .doc("the secret of keyed pseudonyms (`maskbus key new`): 32 bytes or more and 128 bits of estimated entropy, so a key a person typed is refused; better in the environment")
        .guarded("the key that makes pseudonyms unguessable stays with the producer");
    TARGET_URL: Typed<String> = Key::text("target_url", "MASKBUS_TARGET_URL", ForConsumer)
        .doc("the test database the consumer fills (required)")
        .guarded("the producer reads production and must not know where the test database is");
    MAILBOX: Typed<String> = Key::text("mailbox", "MASKBUS_MAILBOX", Both)
        .doc("the mailbox this role claims from: `maskbus.producer`; `maskbus.consumer` (`maskbus.consumer.N` for worker N of several)");
    SLOT: Typed<String> = Key::text("slot", "MASKBUS_SLOT", ForProducer)
        .doc("the logical replication slot (and publication) of the change stream; no stream without it");
    PUBLICATION: Typed<String> = Key::text("publication", "MASKBUS_PUBLICATION", ForProducer)
        .doc("a publication a DBA made for the change stream (lower-case letters, digits and _): the producer reads it and never creates, alters or drops it, and the policy's tables it lacks fail closed by name in stream mode; the stream's reader then needs only SELECT and REPLICATION (docs/deployment.md). Unset: the producer makes its own, named as the slot, and adds and drops tables as the policy does");
    STREAM_WHILE_WRITTEN: Defaulted<bool> = Key::flag("stream_while_written", "MASKBUS_STREAM_WHILE_WRITTEN", ForProducer)
        .default("true")
        .doc("send a large source transaction to the consumer while the source writes it (pgoutput streaming; rolled back on the target if the source rolls it back), not once it commits");
    SUBSETS: Typed<String> = Key::text("subsets", "MASKBUS_SUBSETS", ForProducer)
        .doc("the subsets file: named subsets and virtual foreign keys a consumer may ask for; a relative path is read beside this config file")
        .guarded("subset conditions run on production: they are defined beside the policy, and the consumer asks for one by name");
    REVIEWED_COLUMNS: Typed<String> = Key::text("reviewed_columns", "MASKBUS_REVIEWED_COLUMNS", ForProducer)
        .doc("the reviewed-columns file (`[columns]` of `\"schema.table.column\" = \"reason\"`, the one `maskbus wire-audit --reviewed` takes): columns the egress guard does not read, each reviewed as holding no personal data; a relative path is read beside this config file")
        .guarded("the producer's egress guard reads it; the consumer never sees production's values");
    GUARD_VALUES: Defaulted<u32> = Key::count("guard_values", "MASKBUS_GUARD_VALUES", ForProducer, 0, 1 << 30)
        .default("10000000")
        .doc("the most real values of the masked columns the egress guard loads at start (keyed 64-bit hashes: about 20 bytes for a number, up to 75 for words, so 10,000,000 take 200 to 750 MB); the load stops there, bounding its time too, and the log says how many tables were not read whole; `0`: the guard's exact matcher is off (its detectors stay on)");
    MODE: Defaulted<String> = Key::text("mode", "MASKBUS_MODE", ForConsumer)
        .default("watermark")
        .doc("`watermark` (passes by source snapshot) or `stream` (the producer's change stream, deletes too)");
    METRICS_ADDR: Typed<String> = Key::text("metrics_addr", "MASKBUS_METRICS_ADDR", Both)
        .doc("serve `/metrics` and `/health` on this address (`127.0.0.1:9187`); none when unset");
    AUDIT_MAX_AGE: Defaulted<Duration> = Key::duration("audit_max_age", "MASKBUS_AUDIT_MAX_AGE", Both)
        .default("24h")
        .doc("`/health` fails, and `status` says STALE, when a message has waited longer for the wire audit");
    SUBSET: Typed<String> = Key::text("subset", "MASKBUS_SUBSET", ForConsumer)
        .doc("sync only this subset of the producer's (watermark mode)");
    PRODUCER_MAILBOX: Defaulted<String> = Key::text("producer_mailbox", "MASKBUS_PRODUCER_MAILBOX", ForConsumer)
        .default(DEFAULT_PRODUCER_MAILBOX)
        .doc("the producer's mailbox, where requests go");
    PAGE_SIZE: Defaulted<u32> = Key::count("page_size", "MASKBUS_PAGE_SIZE", ForConsumer, 1, maskbus_protocol::MAX_PAGE_ROWS)
        .default("1000")
        .doc("rows a page reply carries at most (and 8 MiB); each page is one bus message, so larger pages cost the bus less per row");
    PAGES_PER_REQUEST: Defaulted<u32> = Key::count("pages_per_request", "MASKBUS_PAGES_PER_REQUEST", ForConsumer, 1, maskbus_protocol::MAX_PAGES_PER_REQUEST)
        .default("16")
        .doc("consecutive page replies one request asks for: with `page_size`, how many rows each agent holds in memory for one answer");
    STREAMS: Defaulted<u32> = Key::count("streams", "MASKBUS_STREAMS", ForConsumer, 0, maskbus_protocol::MAX_STREAMS)
        .default("0")
        .doc("key ranges a large table's first pass is read and loaded in side by side, each its own page stream and target connection; `0`: one per two cores of this machine, 1 to 4");
    RANGE_ROWS: Defaulted<u32> = Key::count("range_rows", "MASKBUS_RANGE_ROWS", ForConsumer, 1, 1 << 30)
        .default("50000")
        .doc("the fewest rows a range holds: a table with fewer than twice this many is read in one");
    FOLLOW_INTERVAL: Defaulted<Duration> = Key::duration("follow_interval", "MASKBUS_FOLLOW_INTERVAL", ForConsumer)
        .default("10s")
        .doc("without `--once`, the pause between passes (stream: the longest an idle round waits at the producer)");
    REQUEST_TIMEOUT: Defaulted<Duration> = Key::duration("request_timeout", "MASKBUS_REQUEST_TIMEOUT", ForConsumer)
        .default("30s")
        .doc("ask again after this long without a reply");
    ALL_OR_NOTHING: Defaulted<bool> = Key::flag("all_or_nothing", "MASKBUS_ALL_OR_NOTHING", ForConsumer)
        .default("false")
        .doc("stop at the first table that cannot be synced (else it is reported and the others go on)");
    DISABLE_TRIGGERS: Defaulted<bool> = Key::flag("disable_triggers", "MASKBUS_DISABLE_TRIGGERS", ForConsumer)
        .default("false")
        .doc("write as `pg_restore --disable-triggers` does (needs superuser or `GRANT SET ON PARAMETER session_replication_role`)");
    BULK_LOAD: Defaulted<bool> = Key::flag("bulk_load", "MASKBUS_BULK_LOAD", ForConsumer)
        .default("true")
        .doc("load never-synced empty tables as `pg_restore` does: COPY, indexes and foreign keys after");
    FOLLOW_DELETES: Defaulted<bool> = Key::flag("follow_deletes", "MASKBUS_FOLLOW_DELETES", ForConsumer)
        .default("true")
        .doc("watermark mode: each pass then compares its tables' key-range hashes with the producer's, as `maskbus verify` does, and deletes the rows the source no longer has (only the ranges that differ are read row by row; the cost is a hash of each table on both sides, `scripts/bench` row 2f). Off (for very large tables), deletes wait for `maskbus verify --repair` and `status` does not say caught up");
    ALLOW_SUPERUSER_TARGET: Defaulted<bool> = Key::flag("allow_superuser_target", "MASKBUS_ALLOW_SUPERUSER_TARGET", ForConsumer)
        .default("false")
        .doc("take a target role that is a superuser (or a member of one), or a member of `pg_execute_server_program`, `pg_write_server_files` or `pg_read_server_files`: refused otherwise, since the consumer builds its target from the served schema, which is untrusted input. Only for a throwaway database; connect as a non-superuser owner of the test database instead (docs/deployment.md)");
    EXTENSIONS: Typed<String> = Key::text("extensions", "MASKBUS_EXTENSIONS", ForConsumer)
        .doc("the extensions the consumer may create when the served schema needs them, comma-separated (`citext, hstore`; empty: none); unset: those PostgreSQL marks trusted (`pg_available_extension_versions.trusted`). A served extension not on it is never created: it is reported left out with the reason, and the rest of the schema is made");
    WORKERS: Defaulted<u32> = Key::count("workers", "MASKBUS_WORKERS", ForConsumer, 1, MAX_WORKERS)
        .default("1")
        .doc("consumer processes sharing this target");
    WORKER: Defaulted<u32> = Key::count("worker", "MASKBUS_WORKER", ForConsumer, 1, MAX_WORKERS)
        .default("1")
        .doc("which of the `workers` this process is");
}

/// The reference of every key and every other environment variable, as Markdown
/// (docs/configuration.md is this, checked by a test).
pub fn reference_markdown() -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let mut out = String::from(
        "# Configuration\n\n\
         <!-- Generated by `maskbus config keys` from the key table in crates/config/src/lib.rs \
         and the variable table in crates/config/src/environment.rs; a test fails when this file \
         and the tables differ. -->\n\n\
         One TOML file per agent; `role` makes it a producer or a consumer. Every key can be set \
         by its environment variable instead, which wins over the file. A key of one role in the \
         other's config is refused by name before anything connects; so is an unknown key. A file \
         named by a relative path in the config file (`policy`, `subsets`, `reviewed_columns`) \
         is read beside the config file, one named by an environment variable from the current \
         directory.\n\n\
         | key | environment | role | value | default | what it does |\n|---|---|---|---|---|---|\n",
    );
    for key in KEYS {
        let default = if key.default.is_empty() {
            "-".to_string()
        } else {
            format!("`{}`", key.default)
        };
        let mut doc = cell(key.doc);
        if let Some(why) = key.forbidden_elsewhere {
            doc.push_str(&format!(
                "; never in the other role's config: {}",
                cell(why)
            ));
        }
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} |\n",
            key.name,
            key.env,
            key.takes_name(),
            key.kind_name(),
            default,
            doc
        ));
    }
    out.push_str(&environment::reference_markdown());
    out
}

/// The most consumer workers one target may have.
pub const MAX_WORKERS: u32 = 64;

/// A key's value, checked against its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Text(String),
    Count(u32),
    Duration(Duration),
    Flag(bool),
}

/// The keys set, each with its checked value and where it came from.
#[derive(Clone, Debug, Default)]
pub struct RawConfig {
    values: BTreeMap<&'static str, (Value, String)>,
}

impl RawConfig {
    /// The value of `key`: `Option<T>` for a [`Typed`] key, `T` for a [`Defaulted`] one.
    fn get<K: Read>(&self, key: K) -> K::Output {
        key.read(self)
    }

    /// The value set for `key`, or its default.
    fn value(&self, key: &Key) -> Option<Value> {
        if let Some((value, _)) = self.values.get(key.name) {
            return Some(value.clone());
        }
        if key.default.is_empty() {
            return None;
        }
        check(
            key,
            &toml::Value::String(key.default.to_string()),
            "the default",
        )
        .ok()
    }
}

/// How a typed key reads from a [`RawConfig`].
trait Read {
    type Output;
    fn read(self, raw: &RawConfig) -> Self::Output;
}

impl<T: OfKind> Read for Typed<T> {
    type Output = Option<T>;
    fn read(self, raw: &RawConfig) -> Option<T> {
        raw.value(&self.key).and_then(T::of_value)
    }
}

impl<T: OfKind + Default> Read for Defaulted<T> {
    type Output = T;
    fn read(self, raw: &RawConfig) -> T {
        // Never the fallback: `every_default_parses_under_its_own_kind` checks each default.
        raw.value(&self.key)
            .and_then(T::of_value)
            .unwrap_or_default()
    }
}

/// The Rust type a kind's values read as.
trait OfKind: Sized {
    fn of_value(value: Value) -> Option<Self>;
}

impl OfKind for String {
    fn of_value(value: Value) -> Option<Self> {
        match value {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl OfKind for u32 {
    fn of_value(value: Value) -> Option<Self> {
        match value {
            Value::Count(n) => Some(n),
            _ => None,
        }
    }
}

impl OfKind for Duration {
    fn of_value(value: Value) -> Option<Self> {
        match value {
            Value::Duration(d) => Some(d),
            _ => None,
        }
    }
}

impl OfKind for bool {
    fn of_value(value: Value) -> Option<Self> {
        match value {
            Value::Flag(b) => Some(b),
            _ => None,
        }
    }
}

/// Checks one value (as the file or the environment wrote it) against its key's kind.
fn check(key: &Key, value: &toml::Value, set_by: &str) -> Result<Value, String> {
    let wrong = |what: &str| format!("{} (set by {set_by}) {what}", key.name);
    match key.kind {
        Kind::Text => value
            .as_str()
            .map(|t| Value::Text(t.to_string()))
            .ok_or_else(|| wrong("must be a string")),
        Kind::Count(low, high) => {
            let n = match value {
                toml::Value::Integer(n) => Some(*n),
                toml::Value::String(t) => t.trim().parse().ok(),
                _ => None,
            };
            match n {
                Some(n) if n >= i64::from(low) && n <= i64::from(high) => {
                    Ok(Value::Count(n as u32))
                }
                Some(n) => Err(wrong(&format!("= {n} is outside {low} to {high}"))),
                None => Err(wrong("must be a whole number")),
            }
        }
        Kind::Duration => {
            let text = value
                .as_str()
                .ok_or_else(|| wrong("must be a duration like \"10s\""))?;
            match humantime::parse_duration(text) {
                Ok(d) if d.is_zero() => Err(wrong(&format!(
                    "= {text:?}: a zero duration would spin or give up at once; give one like 10s or 5m"
                ))),
                Ok(d) => Ok(Value::Duration(d)),
                Err(e) => Err(wrong(&format!(
                    "= {text:?} is not a duration like 10s or 5m ({e})"
                ))),
            }
        }
        Kind::Flag => match value {
            toml::Value::Boolean(b) => Ok(Value::Flag(*b)),
            toml::Value::String(t) if t == "true" || t == "false" => Ok(Value::Flag(t == "true")),
            _ => Err(wrong("must be true or false")),
        },
    }
}

/// Parses the TOML text of a config file. `origin` names it in errors. Unknown keys are
/// refused by name, and every value is checked against its key's kind.
pub fn parse(origin: &str, text: &str) -> Result<RawConfig, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        origin: origin.to_string(),
        reason,
    };
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| invalid(maskbus_model::locate_in_text(text, e.span(), e.message())))?;
    let mut raw = RawConfig::default();
    let set_by = format!("the file {origin}");
    for (name, value) in &table {
        let key = KEYS.iter().find(|k| k.name == name).ok_or_else(|| {
            let hint = maskbus_model::closest(name, KEYS.iter().map(|k| k.name))
                .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
            invalid(format!(
                "unknown key `{}`{hint}; the keys are {}",
                maskbus_model::excerpt(name, 64),
                KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let value = check(key, value, &set_by).map_err(invalid)?;
        raw.values.insert(key.name, (value, set_by.clone()));
    }
    Ok(raw)
}

/// Applies `MASKBUS_*` overrides from `env` to `raw`, then checks the role's rules.
pub fn resolve(
    origin: &str,
    mut raw: RawConfig,
    env: &BTreeMap<String, String>,
) -> Result<AgentConfig, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        origin: origin.to_string(),
        reason,
    };
    for key in KEYS {
        let Some(text) = env.get(key.env) else {
            continue;
        };
        let set_by = format!("environment variable {}", key.env);
        let value = check(key, &toml::Value::String(text.clone()), &set_by).map_err(invalid)?;
        raw.values.insert(key.name, (value, set_by));
    }
    let role = match raw.get(ROLE).as_deref().map(|r| (r, Role::parse(r))) {
        Some((_, Some(role))) => role,
        Some((other, None)) => {
            return Err(invalid(format!(
                "role = {:?}: use \"producer\" or \"consumer\"",
                maskbus_model::excerpt(other, 64)
            )))
        }
        None => {
            return Err(invalid(
                "no role: set role = \"producer\" or role = \"consumer\" (or MASKBUS_ROLE)".into(),
            ))
        }
    };
    let takes = match role {
        Role::Producer => Takes::Producer,
        Role::Consumer => Takes::Consumer,
    };
    for key in KEYS {
        let Some((_, set_by)) = raw.values.get(key.name) else {
            continue;
        };
        if key.takes == Takes::Both || key.takes == takes {
            continue;
        }
        return Err(match key.forbidden_elsewhere {
            Some(why) => ConfigError::Forbidden {
                origin: origin.to_string(),
                role: role.name(),
                key: key.name,
                set_by: set_by.clone(),
                why,
            },
            None => invalid(format!(
                "{} is a {} setting; a {role} does not take it",
                key.name,
                role.other()
            )),
        });
    }
    let required = |typed: Typed<String>| {
        let Key { name, env, .. } = typed.key;
        raw.get(typed).ok_or_else(|| ConfigError::Missing {
            origin: origin.to_string(),
            role: role.name(),
            key: name,
            env,
        })
    };
    let mode = raw.get(MODE);
    let mode = SyncMode::parse(&mode).ok_or_else(|| {
        invalid(format!(
            "mode = {:?}: use {}",
            maskbus_model::excerpt(&mode, 64),
            SyncMode::NAMES
        ))
    })?;
    let workers = raw.get(WORKERS);
    if mode == SyncMode::Stream && workers > 1 {
        return Err(invalid(format!(
            "mode = \"stream\" with workers = {workers}: one consumer applies a change stream, in commit order"
        )));
    }
    let metrics_addr = match raw.get(METRICS_ADDR) {
        None => None,
        Some(text) => Some(text.trim().parse::<SocketAddr>().map_err(|_| {
            invalid(format!(
                "metrics_addr = {:?}: give an address and a port, such as \"127.0.0.1:9187\"",
                maskbus_model::excerpt(&text, 64)
            ))
        })?),
    };
    let audit_max_age = raw.get(AUDIT_MAX_AGE);
    let subset = raw.get(SUBSET);
    if let Some(name) = &subset {
        if !maskbus_protocol::is_plain_name(name) {
            return Err(invalid(format!(
                "subset = {:?}: a subset is named by letters, digits, _ and - (at most 63)",
                maskbus_model::excerpt(name, 64)
            )));
        }
        if mode == SyncMode::Stream {
            return Err(invalid(format!(
                "subset = {name:?} with mode = \"stream\": a subset follows the source in watermark mode (its deltas are filtered by the closure on the source)"
            )));
        }
    }
    let worker = raw.get(WORKER);
    if worker > workers {
        return Err(invalid(format!(
            "worker = {worker} but workers = {workers}: workers are numbered 1 to {workers}"
        )));
    }
    Ok(match role {
        Role::Producer => AgentConfig::Producer(ProducerConfig {
            bus_url: Secret(required(BUS_URL)?),
            source_url: Secret(required(SOURCE_URL)?),
            policy: raw.get(POLICY).map(PathBuf::from).ok_or_else(|| {
                invalid(
                    "a producer needs `policy = \"FILE\"` (or MASKBUS_POLICY): the masking policy it serves by; `maskbus policy init` proposes one".to_string(),
                )
            })?,
            // Its strength is judged where the key is used, before anything connects
            // (`maskbus_policy::load`, through `maskbus_mask::PseudonymKey::from_config`).
            pseudonym_key: raw
                .get(PSEUDONYM_KEY)
                .filter(|k| !k.is_empty())
                .map(Secret),
            mailbox: raw
                .get(MAILBOX)
                .unwrap_or_else(|| DEFAULT_PRODUCER_MAILBOX.to_string()),
            slot: raw.get(SLOT),
            publication: raw.get(PUBLICATION),
            stream_while_written: raw.get(STREAM_WHILE_WRITTEN),
            subsets: raw.get(SUBSETS).map(PathBuf::from),
            reviewed_columns: raw.get(REVIEWED_COLUMNS).map(PathBuf::from),
            guard_values: raw.get(GUARD_VALUES),
            metrics_addr,
            audit_max_age,
        }),
        Role::Consumer => AgentConfig::Consumer(ConsumerConfig {
            bus_url: Secret(required(BUS_URL)?),
            target_url: Secret(required(TARGET_URL)?),
            mailbox: raw.get(MAILBOX).unwrap_or_else(|| {
                if workers > 1 {
                    format!("{DEFAULT_CONSUMER_MAILBOX}.{worker}")
                } else {
                    DEFAULT_CONSUMER_MAILBOX.to_string()
                }
            }),
            producer_mailbox: raw.get(PRODUCER_MAILBOX),
            page_size: raw.get(PAGE_SIZE),
            pages_per_request: raw.get(PAGES_PER_REQUEST),
            streams: match raw.get(STREAMS) {
                0 => default_streams(),
                n => n,
            },
            range_rows: raw.get(RANGE_ROWS),
            follow_interval: raw.get(FOLLOW_INTERVAL),
            request_timeout: raw.get(REQUEST_TIMEOUT),
            all_or_nothing: raw.get(ALL_OR_NOTHING),
            disable_triggers: raw.get(DISABLE_TRIGGERS),
            bulk_load: raw.get(BULK_LOAD),
            follow_deletes: raw.get(FOLLOW_DELETES),
            workers,
            worker,
            mode,
            subset,
            metrics_addr,
            audit_max_age,
            init_target: false,
            allow_superuser_target: raw.get(ALLOW_SUPERUSER_TARGET),
            extensions: raw.get(EXTENSIONS).map(|list| extension_list(&list)),
        }),
    })
}

/// The names of an `extensions` list: comma-separated, trimmed, empty entries dropped (so `""`
/// allows none).
fn extension_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(String::from)
        .collect()
}

/// `streams = 0`: one range per two cores of this machine, at least 1 and at most 4. A range's
/// rows cost CPU on both sides of the bus (the target's writes, the consumer's parsing) besides
/// the producer's, so a range per core only adds contention: on 2 cores, 2 ranges synced the
/// large bank no faster than 1 (BENCHMARKS.md). Each range costs a source connection on the
/// producer and a target connection here.
fn default_streams() -> u32 {
    (std::thread::available_parallelism().map_or(1, |n| n.get() as u32) / 2).clamp(1, 4)
}

/// Reads the file at `path` and resolves it against the process environment.
pub fn load(path: &std::path::Path) -> Result<AgentConfig, ConfigError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Invalid {
        origin: origin.clone(),
        reason: format!("cannot read it: {e}"),
    })?;
    let raw = parse(&origin, &text)?;
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("MASKBUS_"))
        .collect();
    let mut config = resolve(&origin, raw, &env)?;
    files_beside(&mut config, path, &env);
    Ok(config)
}

/// Makes the file paths of `config` full: a relative path written in the config file at
/// `config_path` is read beside that file (not from wherever maskbus was started), one set by
/// an environment variable from the current directory; either way an error reading it names
/// the full path it looked at.
pub fn files_beside(
    config: &mut AgentConfig,
    config_path: &std::path::Path,
    env: &BTreeMap<String, String>,
) {
    let AgentConfig::Producer(producer) = config else {
        return;
    };
    let dir = config_path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let full = |key: Key, path: &mut PathBuf| {
        let base = if env.contains_key(key.env) {
            PathBuf::new()
        } else {
            dir.clone()
        };
        let joined = base.join(&*path);
        *path = std::path::absolute(&joined).unwrap_or(joined);
    };
    full(POLICY.key, &mut producer.policy);
    if let Some(path) = &mut producer.subsets {
        full(SUBSETS.key, path);
    }
    if let Some(path) = &mut producer.reviewed_columns {
        full(REVIEWED_COLUMNS.key, path);
    }
}

#[cfg(test)]
mod tests;
