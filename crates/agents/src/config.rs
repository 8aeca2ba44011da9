//! Roles are configuration, not forks: one TOML file (and `MASKBUS_*` variables over it) makes
//! this process a producer or a consumer.
//!
//! [`resolve`] is pure: it takes the parsed file and the environment and either returns a config
//! for exactly one role or refuses, naming the key (and where it came from) when a role is given a
//! URL it must not hold. A producer never holds the test database's URL; a consumer never holds
//! the production URL, the policy or the pseudonym key. The check happens before anything
//! connects.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
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

/// The file as written: every key optional, unknown keys refused by name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub role: Option<String>,
    pub bus_url: Option<String>,
    pub source_url: Option<String>,
    pub target_url: Option<String>,
    pub policy: Option<PathBuf>,
    pub pseudonym_key: Option<String>,
    pub mailbox: Option<String>,
    pub producer_mailbox: Option<String>,
    pub page_size: Option<u32>,
    pub pages_per_request: Option<u32>,
    pub follow_interval: Option<String>,
    pub request_timeout: Option<String>,
    /// Consumer: stop the whole run at the first table that cannot be synced (default: sync the
    /// others, report the failures and exit non-zero).
    pub all_or_nothing: Option<bool>,
}

/// Environment variables that override keys of the file, and the key each sets.
pub const ENV_KEYS: &[(&str, &str)] = &[
    ("MASKBUS_ROLE", "role"),
    ("MASKBUS_BUS_URL", "bus_url"),
    ("MASKBUS_SOURCE_URL", "source_url"),
    ("MASKBUS_TARGET_URL", "target_url"),
    ("MASKBUS_POLICY", "policy"),
    ("MASKBUS_PSEUDONYM_KEY", "pseudonym_key"),
    ("MASKBUS_MAILBOX", "mailbox"),
    ("MASKBUS_PRODUCER_MAILBOX", "producer_mailbox"),
    ("MASKBUS_PAGE_SIZE", "page_size"),
    ("MASKBUS_PAGES_PER_REQUEST", "pages_per_request"),
    ("MASKBUS_FOLLOW_INTERVAL", "follow_interval"),
    ("MASKBUS_REQUEST_TIMEOUT", "request_timeout"),
    ("MASKBUS_ALL_OR_NOTHING", "all_or_nothing"),
];

pub const DEFAULT_PRODUCER_MAILBOX: &str = "maskbus.producer";
pub const DEFAULT_CONSUMER_MAILBOX: &str = "maskbus.consumer";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    pub bus_url: Secret,
    pub source_url: Secret,
    pub policy: Option<PathBuf>,
    pub pseudonym_key: Option<Secret>,
    /// The mailbox the producer serves.
    pub mailbox: String,
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
    /// Without --once, how long to wait between sync passes.
    pub follow_interval: Duration,
    /// How long to wait for one reply before asking again.
    pub request_timeout: Duration,
    /// Stop at the first table that cannot be synced instead of syncing the others.
    pub all_or_nothing: bool,
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
    pub fn role(&self) -> &'static str {
        match self {
            AgentConfig::Producer(_) => "producer",
            AgentConfig::Consumer(_) => "consumer",
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

/// Where each key's value came from, for error messages.
type Provenance = BTreeMap<&'static str, String>;

/// Parses the TOML text of a config file. `origin` names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<RawConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Invalid {
        origin: origin.to_string(),
        reason: e.message().to_string(),
    })
}

fn env_name(key: &str) -> &'static str {
    ENV_KEYS
        .iter()
        .find(|(_, k)| *k == key)
        .map(|(e, _)| *e)
        .unwrap_or("MASKBUS_*")
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
    let mut provenance: Provenance = BTreeMap::new();
    macro_rules! track {
        ($($field:ident),*) => {$(
            if raw.$field.is_some() {
                provenance.insert(stringify!($field), format!("the file {origin}"));
            }
        )*};
    }
    track!(
        role,
        bus_url,
        source_url,
        target_url,
        policy,
        pseudonym_key,
        mailbox,
        producer_mailbox
    );
    for (var, key) in ENV_KEYS {
        let Some(value) = env.get(*var) else { continue };
        provenance.insert(key, format!("environment variable {var}"));
        let text = Some(value.clone());
        match *key {
            "role" => raw.role = text,
            "bus_url" => raw.bus_url = text,
            "source_url" => raw.source_url = text,
            "target_url" => raw.target_url = text,
            "policy" => raw.policy = text.map(PathBuf::from),
            "pseudonym_key" => raw.pseudonym_key = text,
            "mailbox" => raw.mailbox = text,
            "producer_mailbox" => raw.producer_mailbox = text,
            "page_size" => {
                raw.page_size = Some(
                    value
                        .parse()
                        .map_err(|_| invalid(format!("{var} must be a whole number")))?,
                )
            }
            "follow_interval" => raw.follow_interval = text,
            "request_timeout" => raw.request_timeout = text,
            "pages_per_request" => {
                raw.pages_per_request = Some(
                    value
                        .parse()
                        .map_err(|_| invalid(format!("{var} must be a whole number")))?,
                )
            }
            "all_or_nothing" => {
                raw.all_or_nothing = Some(
                    value
                        .parse()
                        .map_err(|_| invalid(format!("{var} must be true or false")))?,
                )
            }
            _ => {}
        }
    }
    let forbidden =
        |role: &'static str, key: &'static str, why: &'static str| ConfigError::Forbidden {
            origin: origin.to_string(),
            role,
            key,
            set_by: provenance.get(key).cloned().unwrap_or_default(),
            why,
        };
    let missing = |role: &'static str, key: &'static str| ConfigError::Missing {
        origin: origin.to_string(),
        role,
        key,
        env: env_name(key),
    };
    let duration = |key: &str,
                    value: Option<&String>,
                    default: Duration|
     -> Result<Duration, ConfigError> {
        match value {
                None => Ok(default),
                Some(text) => match humantime::parse_duration(text) {
                    Ok(d) if d.is_zero() => Err(invalid(format!(
                        "{key} = {text:?}: a zero duration would spin or give up at once; give one like 10s or 5m"
                    ))),
                    Ok(d) => Ok(d),
                    Err(e) => Err(invalid(format!(
                        "{key} = {text:?} is not a duration like 10s or 5m ({e})"
                    ))),
                },
            }
    };
    match raw.role.as_deref() {
        Some("producer") => {
            if raw.target_url.is_some() {
                return Err(forbidden(
                    "producer",
                    "target_url",
                    "the producer reads production and must not know where the test database is",
                ));
            }
            for (key, present) in [
                ("producer_mailbox", raw.producer_mailbox.is_some()),
                ("page_size", raw.page_size.is_some()),
                ("pages_per_request", raw.pages_per_request.is_some()),
                ("follow_interval", raw.follow_interval.is_some()),
                ("request_timeout", raw.request_timeout.is_some()),
                ("all_or_nothing", raw.all_or_nothing.is_some()),
            ] {
                if present {
                    return Err(invalid(format!(
                        "{key} is a consumer setting; a producer does not take it"
                    )));
                }
            }
            Ok(AgentConfig::Producer(ProducerConfig {
                bus_url: Secret(raw.bus_url.ok_or_else(|| missing("producer", "bus_url"))?),
                source_url: Secret(
                    raw.source_url
                        .ok_or_else(|| missing("producer", "source_url"))?,
                ),
                policy: raw.policy,
                pseudonym_key: raw.pseudonym_key.filter(|k| !k.is_empty()).map(Secret),
                mailbox: raw
                    .mailbox
                    .unwrap_or_else(|| DEFAULT_PRODUCER_MAILBOX.to_string()),
            }))
        }
        Some("consumer") => {
            if raw.source_url.is_some() {
                return Err(forbidden(
                    "consumer",
                    "source_url",
                    "the consumer must never be able to reach production; it gets masked rows over the bus",
                ));
            }
            if raw.pseudonym_key.is_some() {
                return Err(forbidden(
                    "consumer",
                    "pseudonym_key",
                    "the key that makes pseudonyms unguessable stays with the producer",
                ));
            }
            if raw.policy.is_some() {
                return Err(forbidden(
                    "consumer",
                    "policy",
                    "masking happens on the producer, never on the consumer",
                ));
            }
            let page_size = raw.page_size.unwrap_or(crate::protocol::MAX_PAGE_ROWS);
            if page_size == 0 || page_size > crate::protocol::MAX_PAGE_ROWS {
                return Err(invalid(format!(
                    "page_size = {page_size}: the producer serves 1 to {} rows a reply",
                    crate::protocol::MAX_PAGE_ROWS
                )));
            }
            let pages_per_request = raw.pages_per_request.unwrap_or(8);
            if pages_per_request == 0 || pages_per_request > crate::protocol::MAX_PAGES_PER_REQUEST
            {
                return Err(invalid(format!(
                    "pages_per_request = {pages_per_request}: ask for 1 to {} pages at a time",
                    crate::protocol::MAX_PAGES_PER_REQUEST
                )));
            }
            Ok(AgentConfig::Consumer(ConsumerConfig {
                bus_url: Secret(raw.bus_url.ok_or_else(|| missing("consumer", "bus_url"))?),
                target_url: Secret(
                    raw.target_url
                        .ok_or_else(|| missing("consumer", "target_url"))?,
                ),
                mailbox: raw
                    .mailbox
                    .unwrap_or_else(|| DEFAULT_CONSUMER_MAILBOX.to_string()),
                producer_mailbox: raw
                    .producer_mailbox
                    .unwrap_or_else(|| DEFAULT_PRODUCER_MAILBOX.to_string()),
                page_size,
                pages_per_request,
                follow_interval: duration(
                    "follow_interval",
                    raw.follow_interval.as_ref(),
                    Duration::from_secs(10),
                )?,
                request_timeout: duration(
                    "request_timeout",
                    raw.request_timeout.as_ref(),
                    Duration::from_secs(30),
                )?,
                all_or_nothing: raw.all_or_nothing.unwrap_or(false),
                init_target: false,
            }))
        }
        Some(other) => Err(invalid(format!(
            "role = {other:?}: use \"producer\" or \"consumer\""
        ))),
        None => Err(invalid(
            "no role: set role = \"producer\" or role = \"consumer\" (or MASKBUS_ROLE)".into(),
        )),
    }
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
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_producer_and_a_consumer() {
        let producer = parse(
            "p.toml",
            "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"",
        )
        .unwrap();
        let AgentConfig::Producer(p) = resolve("p.toml", producer, &env(&[])).unwrap() else {
            panic!()
        };
        assert_eq!(p.mailbox, DEFAULT_PRODUCER_MAILBOX);
        let consumer = parse(
            "c.toml",
            "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\npage_size = 50",
        )
        .unwrap();
        let AgentConfig::Consumer(c) = resolve("c.toml", consumer, &env(&[])).unwrap() else {
            panic!()
        };
        assert_eq!(
            (c.page_size, c.follow_interval),
            (50, Duration::from_secs(10))
        );
    }

    #[test]
    fn a_role_holding_the_other_sides_url_is_refused() {
        let raw = parse(
            "p.toml",
            "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\ntarget_url = \"t\"",
        )
        .unwrap();
        let err = resolve("p.toml", raw, &env(&[])).unwrap_err().to_string();
        assert!(
            err.contains("a producer must not hold target_url (set by the file p.toml)"),
            "{err}"
        );

        let raw = parse(
            "c.toml",
            "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"",
        )
        .unwrap();
        let err = resolve("c.toml", raw, &env(&[("MASKBUS_SOURCE_URL", "s")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a consumer must not hold source_url (set by environment variable MASKBUS_SOURCE_URL)"), "{err}");

        let raw = parse(
            "c.toml",
            "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\npseudonym_key = \"k\"",
        )
        .unwrap();
        assert!(resolve("c.toml", raw, &env(&[]))
            .unwrap_err()
            .to_string()
            .contains("pseudonym_key"));
    }

    #[test]
    fn unknown_keys_and_missing_ones_are_named() {
        let err = parse("x.toml", "role = \"producer\"\nsorce_url = \"s\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("sorce_url"), "{err}");
        let raw = parse("x.toml", "role = \"consumer\"\nbus_url = \"b\"").unwrap();
        let err = resolve("x.toml", raw, &env(&[])).unwrap_err().to_string();
        assert!(
            err.contains("needs target_url") && err.contains("MASKBUS_TARGET_URL"),
            "{err}"
        );
        let err = resolve("x.toml", RawConfig::default(), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no role"), "{err}");
    }

    #[test]
    fn zero_durations_are_refused() {
        let raw = parse(
            "c.toml",
            "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\nrequest_timeout = \"0s\"",
        )
        .unwrap();
        let err = resolve("c.toml", raw, &env(&[])).unwrap_err().to_string();
        assert!(
            err.contains("request_timeout") && err.contains("zero"),
            "{err}"
        );
    }

    #[test]
    fn the_environment_overrides_the_file() {
        let raw = parse(
            "p.toml",
            "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"",
        )
        .unwrap();
        let AgentConfig::Producer(p) =
            resolve("p.toml", raw, &env(&[("MASKBUS_BUS_URL", "other")])).unwrap()
        else {
            panic!()
        };
        assert_eq!(p.bus_url, Secret("other".into()));
        assert_eq!(format!("{:?}", p.bus_url), "Secret(..)");
    }
}
