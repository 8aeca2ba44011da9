//! Postgres plumbing shared by every maskbus crate that talks to a server.
//!
//! What lives here: turning a URL into a connection with an error that names *which* of the
//! three databases (source, target, bus) failed, creating a database that is missing, and applying
//! versioned SQL files exactly once. What must never live here: anything that knows about banks,
//! masking or the mailbox protocol. Errors never print a password: endpoints are rendered by
//! [`Endpoint`], which leaves it out.

pub mod bulk;
pub mod catalog;
pub mod closure;
mod endpoint;
mod migrate;
pub mod model;
pub mod pgoutput;
mod pool;
pub mod slot;
pub mod statements;
#[cfg(feature = "testing")]
pub mod testing;

pub use deadpool_postgres;
pub use endpoint::Endpoint;
pub use migrate::{apply_migrations, ensure_database, Migration};
pub use model::{Column, ForeignKey, KeyColumn, KeyCursor, KeyDef, KeySource, TableInfo, TableRef};
pub use pool::PgPool;
pub use tokio_postgres;

use tokio_postgres::{Client, Config, NoTls};

/// Everything that can go wrong between maskbus and a Postgres server, with the role of the
/// database ("source", "target", "bus") so the operator knows which URL to look at.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("the {role} database URL is not valid ({reason}); expected postgres://USER@HOST:PORT/DBNAME")]
    BadUrl { role: &'static str, reason: String },
    #[error("cannot connect to the {role} database at {endpoint}: {reason}; check that the server is running and the URL is right")]
    Connect {
        role: &'static str,
        endpoint: Endpoint,
        reason: String,
    },
    #[error("{role} database at {endpoint}: {action} failed: {reason}")]
    Query {
        role: &'static str,
        endpoint: Endpoint,
        action: String,
        reason: String,
        /// The connection broke or the server is shutting down or starting: trying again later
        /// may work. A constraint violation or a syntax error is not transient.
        transient: bool,
    },
}

impl PgError {
    /// Whether retrying after a pause may succeed (the server restarting, a dropped connection).
    pub fn is_transient(&self) -> bool {
        match self {
            PgError::BadUrl { .. } => false,
            PgError::Connect { .. } => true,
            PgError::Query { transient, .. } => *transient,
        }
    }
}

/// Connection-level failures: closed connections, I/O errors, SQLSTATE class 08 (connection
/// exception), 57P01-57P03 (admin or crash shutdown, cannot connect now), and 40001/40P01 (a
/// serialization failure or deadlock: the same statement may succeed next time). Everything else
/// (a type that does not convert, a missing table, permission denied, a constraint) is permanent:
/// retrying cannot help, so callers fail fast.
pub fn is_transient(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        let code = code.code();
        return code.starts_with("08")
            || matches!(code, "57P01" | "57P02" | "57P03" | "40001" | "40P01");
    }
    // No SQLSTATE: transient only when the socket failed, not when a value failed to convert.
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// How long opening a connection may take, unless the URL says (`connect_timeout=`); the whole
/// handshake gets twice as long.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A parsed connection target: the tokio-postgres config plus the role it plays, kept together so
/// every error can say which database it concerns.
#[derive(Clone, Debug)]
pub struct Target {
    pub role: &'static str,
    pub config: Config,
}

impl Target {
    /// Parses `url` (URL or key=value form). The database name is required: connecting to the
    /// user's default database by accident would apply a schema to the wrong place.
    pub fn parse(role: &'static str, url: &str) -> Result<Self, PgError> {
        let config: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| PgError::BadUrl {
                role,
                reason: e.to_string(),
            })?;
        if config.get_dbname().is_none() {
            return Err(PgError::BadUrl {
                role,
                reason: "it names no database".into(),
            });
        }
        if config.get_hosts().is_empty() {
            return Err(PgError::BadUrl {
                role,
                reason: "it names no host".into(),
            });
        }
        let mut config = config;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        Ok(Self { role, config })
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::of(&self.config)
    }

    pub fn dbname(&self) -> &str {
        self.config.get_dbname().unwrap_or_default()
    }

    /// The same server, another database (used to reach `postgres` to create a missing one).
    pub fn with_dbname(&self, dbname: &str) -> Self {
        let mut config = self.config.clone();
        config.dbname(dbname);
        Self {
            role: self.role,
            config,
        }
    }

    /// Opens one connection and drives it on the tokio runtime. The connection task logs its end
    /// at debug level: a dropped connection shows up as an error on the next query anyway.
    pub async fn connect(&self) -> Result<Client, PgError> {
        // The whole handshake is bounded: a server that accepts TCP and never answers must not
        // hang a command forever (connect_timeout covers the socket only).
        let limit = self
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT)
            * 2;
        let (client, connection) = tokio::time::timeout(limit, self.config.connect(NoTls))
            .await
            .map_err(|_| PgError::Connect {
                role: self.role,
                endpoint: self.endpoint(),
                reason: format!("no answer to the connection handshake within {limit:?}"),
            })?
            .map_err(|e| PgError::Connect {
                role: self.role,
                endpoint: self.endpoint(),
                reason: error_text(&e),
            })?;
        let role = self.role;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(role, error = %error_text(&e), "postgres connection ended");
            }
        });
        Ok(client)
    }

    /// Wraps a query error with this target's role and endpoint.
    pub fn query_error(&self, action: impl Into<String>, e: &tokio_postgres::Error) -> PgError {
        PgError::Query {
            role: self.role,
            endpoint: self.endpoint(),
            action: action.into(),
            reason: error_text(e),
            transient: is_transient(e),
        }
    }

    /// An error found by maskbus itself, not by the server (a missing table, a message it
    /// cannot read): permanent, with this target's role and endpoint.
    pub fn refusal(&self, action: impl Into<String>, reason: impl Into<String>) -> PgError {
        PgError::Query {
            role: self.role,
            endpoint: self.endpoint(),
            action: action.into(),
            reason: reason.into(),
            transient: false,
        }
    }
}

/// One line that says what the server said: the SQLSTATE message for database errors, the I/O
/// cause for connection errors. tokio-postgres' own Display stops at "db error".
pub fn error_text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// At most `max` characters of `text`, control characters replaced by `?`, with `…` when cut:
/// what an error may echo of input it complains about.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// Quotes an SQL identifier. Only names that come from our own config or the catalog pass through
/// here, never request text, but quoting keeps even those safe.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
