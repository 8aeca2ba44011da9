//! Roles are configuration, not forks: one TOML file (and `MASKBUS_*` variables over it) makes
//! this process a producer or a consumer.
//!
//! [`resolve`] is pure: it takes the parsed file and the environment and either returns a config
//! for exactly one role or refuses, naming the key (and where it came from) when a role is given a
//! URL it must not hold. A producer never holds the test database's URL; a consumer never holds
//! the production URL, the policy or the pseudonym key. The check happens before anything
//! connects.

pub use maskbus_model::Role;
use std::collections::BTreeMap;
use std::fmt;
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
    /// A large source transaction goes to the consumer while the source writes it (pgoutput's
    /// streaming), not once it has committed.
    pub stream_while_written: bool,
    /// The subsets file (named subsets and virtual foreign keys), beside the policy.
    pub subsets: Option<PathBuf>,
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

    const fn default(mut self, value: &'static str) -> Key {
        self.default = value;
        self
    }

    const fn doc(mut self, doc: &'static str) -> Key {
        self.doc = doc;
        self
    }

    const fn guarded(mut self, why: &'static str) -> Key {
        self.forbidden_elsewhere = Some(why);
        self
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

use Kind::{Count, Duration as Dur, Flag, Text};
use Takes::{Both, Consumer as ForConsumer, Producer as ForProducer};

/// Every config key.
pub const KEYS: &[Key] = &[
    Key::new("role", "MASKBUS_ROLE", Both, Text)
        .doc("`producer` or `consumer`: which of the two this process is (required)"),
    Key::new("bus_url", "MASKBUS_BUS_URL", Both, Text)
        .doc("the bus database, as this role's own database role (required)"),
    Key::new("source_url", "MASKBUS_SOURCE_URL", ForProducer, Text)
        .doc("production, read-only (required)")
        .guarded("the consumer must never be able to reach production; it gets masked rows over the bus"),
    Key::new("policy", "MASKBUS_POLICY", ForProducer, Text)
        .doc("the masking policy file (required; `maskbus policy init` proposes one)")
        .guarded("masking happens on the producer, never on the consumer"),
    Key::new("pseudonym_key", "MASKBUS_PSEUDONYM_KEY", ForProducer, Text)
        .doc("the secret of keyed pseudonyms, 32 bytes or more (`maskbus key new`); better in the environment")
        .guarded("the key that makes pseudonyms unguessable stays with the producer"),
    Key::new("target_url", "MASKBUS_TARGET_URL", ForConsumer, Text)
        .doc("the test database the consumer fills (required)")
        .guarded("the producer reads production and must not know where the test database is"),
    Key::new("mailbox", "MASKBUS_MAILBOX", Both, Text)
        .doc("the mailbox this role claims from: `maskbus.producer`; `maskbus.consumer` (`maskbus.consumer.N` for worker N of several)"),
    Key::new("slot", "MASKBUS_SLOT", ForProducer, Text)
        .doc("the logical replication slot (and publication) of the change stream; no stream without it"),
    Key::new("stream_while_written", "MASKBUS_STREAM_WHILE_WRITTEN", ForProducer, Flag)
        .default("true")
        .doc("send a large source transaction to the consumer while the source writes it (pgoutput streaming; rolled back on the target if the source rolls it back), not once it commits"),
    Key::new("subsets", "MASKBUS_SUBSETS", ForProducer, Text)
        .doc("the subsets file: named subsets and virtual foreign keys a consumer may ask for")
        .guarded("subset conditions run on production: they are defined beside the policy, and the consumer asks for one by name"),
    Key::new("mode", "MASKBUS_MODE", ForConsumer, Text)
        .default("watermark")
        .doc("`watermark` (passes by source snapshot) or `stream` (the producer's change stream, deletes too)"),
    Key::new("metrics_addr", "MASKBUS_METRICS_ADDR", Both, Text)
        .doc("serve `/metrics` and `/health` on this address (`127.0.0.1:9187`); none when unset"),
    Key::new("audit_max_age", "MASKBUS_AUDIT_MAX_AGE", Both, Dur)
        .default("24h")
        .doc("`/health` fails, and `status` says STALE, when a message has waited longer for the wire audit"),
    Key::new("subset", "MASKBUS_SUBSET", ForConsumer, Text)
        .doc("sync only this subset of the producer's (watermark mode)"),
    Key::new("producer_mailbox", "MASKBUS_PRODUCER_MAILBOX", ForConsumer, Text)
        .default("maskbus.producer")
        .doc("the producer's mailbox, where requests go"),
    Key::new("page_size", "MASKBUS_PAGE_SIZE", ForConsumer, Count(1, maskbus_protocol::MAX_PAGE_ROWS))
        .default("1000")
        .doc("rows a page reply carries at most (and 8 MiB); each page is one bus message, so larger pages cost the bus less per row"),
    Key::new("pages_per_request", "MASKBUS_PAGES_PER_REQUEST", ForConsumer, Count(1, maskbus_protocol::MAX_PAGES_PER_REQUEST))
        .default("16")
        .doc("consecutive page replies one request asks for: with `page_size`, how many rows each agent holds in memory for one answer"),
    Key::new("streams", "MASKBUS_STREAMS", ForConsumer, Count(0, maskbus_protocol::MAX_STREAMS))
        .default("0")
        .doc("key ranges a large table's first pass is read and loaded in side by side, each its own page stream and target connection; `0`: one per two cores of this machine, 1 to 4"),
    Key::new("range_rows", "MASKBUS_RANGE_ROWS", ForConsumer, Count(1, 1 << 30))
        .default("50000")
        .doc("the fewest rows a range holds: a table with fewer than twice this many is read in one"),
    Key::new("follow_interval", "MASKBUS_FOLLOW_INTERVAL", ForConsumer, Dur)
        .default("10s")
        .doc("without `--once`, the pause between passes (stream: the longest an idle round waits at the producer)"),
    Key::new("request_timeout", "MASKBUS_REQUEST_TIMEOUT", ForConsumer, Dur)
        .default("30s")
        .doc("ask again after this long without a reply"),
    Key::new("all_or_nothing", "MASKBUS_ALL_OR_NOTHING", ForConsumer, Flag)
        .default("false")
        .doc("stop at the first table that cannot be synced (else it is reported and the others go on)"),
    Key::new("disable_triggers", "MASKBUS_DISABLE_TRIGGERS", ForConsumer, Flag)
        .default("false")
        .doc("write as `pg_restore --disable-triggers` does (needs superuser or `GRANT SET ON PARAMETER session_replication_role`)"),
    Key::new("bulk_load", "MASKBUS_BULK_LOAD", ForConsumer, Flag)
        .default("true")
        .doc("load never-synced empty tables as `pg_restore` does: COPY, indexes and foreign keys after"),
    Key::new("workers", "MASKBUS_WORKERS", ForConsumer, Count(1, MAX_WORKERS))
        .default("1")
        .doc("consumer processes sharing this target"),
    Key::new("worker", "MASKBUS_WORKER", ForConsumer, Count(1, MAX_WORKERS))
        .default("1")
        .doc("which of the `workers` this process is"),
];

/// The reference of every key, as Markdown (docs/configuration.md is this, checked by a test).
pub fn reference_markdown() -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let mut out = String::from(
        "# Configuration\n\n\
         <!-- Generated by `maskbus config keys` from the key table in crates/config/src/lib.rs; \
         a test fails when this file and the table differ. -->\n\n\
         One TOML file per agent; `role` makes it a producer or a consumer. Every key can be set \
         by its environment variable instead, which wins over the file. A key of one role in the \
         other's config is refused by name before anything connects; so is an unknown key.\n\n\
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
    /// The value set for `name`, or its key's default.
    fn value(&self, name: &str) -> Option<Value> {
        if let Some((value, _)) = self.values.get(name) {
            return Some(value.clone());
        }
        let key = KEYS.iter().find(|k| k.name == name)?;
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

    fn text(&self, name: &str) -> Option<String> {
        match self.value(name) {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }
    }

    fn count(&self, name: &str) -> Option<u32> {
        match self.value(name) {
            Some(Value::Count(n)) => Some(n),
            _ => None,
        }
    }

    fn duration(&self, name: &str) -> Option<Duration> {
        match self.value(name) {
            Some(Value::Duration(d)) => Some(d),
            _ => None,
        }
    }

    fn flag(&self, name: &str) -> Option<bool> {
        match self.value(name) {
            Some(Value::Flag(b)) => Some(b),
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
    let role = match raw.text("role").as_deref().map(|r| (r, Role::parse(r))) {
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
    let required = |name: &'static str| {
        raw.text(name).ok_or_else(|| ConfigError::Missing {
            origin: origin.to_string(),
            role: role.name(),
            key: name,
            env: KEYS
                .iter()
                .find(|k| k.name == name)
                .map_or("MASKBUS_*", |k| k.env),
        })
    };
    let mode = match raw.text("mode") {
        None => SyncMode::Watermark,
        Some(text) => SyncMode::parse(&text).ok_or_else(|| {
            invalid(format!(
                "mode = {:?}: use {}",
                maskbus_model::excerpt(&text, 64),
                SyncMode::NAMES
            ))
        })?,
    };
    let workers = raw.count("workers").unwrap_or_default();
    if mode == SyncMode::Stream && workers > 1 {
        return Err(invalid(format!(
            "mode = \"stream\" with workers = {workers}: one consumer applies a change stream, in commit order"
        )));
    }
    let metrics_addr = match raw.text("metrics_addr") {
        None => None,
        Some(text) => Some(text.trim().parse::<SocketAddr>().map_err(|_| {
            invalid(format!(
                "metrics_addr = {:?}: give an address and a port, such as \"127.0.0.1:9187\"",
                maskbus_model::excerpt(&text, 64)
            ))
        })?),
    };
    let audit_max_age = raw.duration("audit_max_age").unwrap_or_default();
    let subset = raw.text("subset");
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
    let worker = raw.count("worker").unwrap_or_default();
    if worker > workers {
        return Err(invalid(format!(
            "worker = {worker} but workers = {workers}: workers are numbered 1 to {workers}"
        )));
    }
    Ok(match role {
        Role::Producer => AgentConfig::Producer(ProducerConfig {
            bus_url: Secret(required("bus_url")?),
            source_url: Secret(required("source_url")?),
            policy: raw.text("policy").map(PathBuf::from).ok_or_else(|| {
                invalid(
                    "a producer needs `policy = \"FILE\"` (or MASKBUS_POLICY): the masking policy it serves by; `maskbus policy init` proposes one".to_string(),
                )
            })?,
            // Its strength is judged where the key is used, before anything connects
            // (`maskbus_policy::load`, through `maskbus_mask::PseudonymKey::from_config`).
            pseudonym_key: raw
                .text("pseudonym_key")
                .filter(|k| !k.is_empty())
                .map(Secret),
            mailbox: raw
                .text("mailbox")
                .unwrap_or_else(|| DEFAULT_PRODUCER_MAILBOX.to_string()),
            slot: raw.text("slot"),
            stream_while_written: raw.flag("stream_while_written").unwrap_or(true),
            subsets: raw.text("subsets").map(PathBuf::from),
            metrics_addr,
            audit_max_age,
        }),
        Role::Consumer => AgentConfig::Consumer(ConsumerConfig {
            bus_url: Secret(required("bus_url")?),
            target_url: Secret(required("target_url")?),
            mailbox: raw.text("mailbox").unwrap_or_else(|| {
                if workers > 1 {
                    format!("{DEFAULT_CONSUMER_MAILBOX}.{worker}")
                } else {
                    DEFAULT_CONSUMER_MAILBOX.to_string()
                }
            }),
            producer_mailbox: raw
                .text("producer_mailbox").unwrap_or_default(),
            page_size: raw.count("page_size").unwrap_or_default(),
            pages_per_request: raw.count("pages_per_request").unwrap_or_default(),
            streams: match raw.count("streams").unwrap_or_default() {
                0 => default_streams(),
                n => n,
            },
            range_rows: raw.count("range_rows").unwrap_or_default(),
            follow_interval: raw
                .duration("follow_interval").unwrap_or_default(),
            request_timeout: raw
                .duration("request_timeout").unwrap_or_default(),
            all_or_nothing: raw.flag("all_or_nothing").unwrap_or_default(),
            disable_triggers: raw.flag("disable_triggers").unwrap_or_default(),
            bulk_load: raw.flag("bulk_load").unwrap_or_default(),
            workers,
            worker,
            mode,
            subset,
            metrics_addr,
            audit_max_age,
            init_target: false,
        }),
    })
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
    resolve(&origin, raw, &env)
}

#[cfg(test)]
mod tests;
