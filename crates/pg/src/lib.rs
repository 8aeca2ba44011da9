//! Postgres plumbing shared by every maskbus crate that talks to a server.
//!
//! What lives here: turning a URL into a connection with an error that names *which* of the
//! three databases (source, target, bus) failed, creating a database that is missing, and applying
//! versioned SQL files exactly once. What must never live here: anything that knows about banks,
//! masking or the mailbox protocol. Errors never print a password: endpoints are rendered by
//! [`Endpoint`], which leaves it out.
//!
//! Modules: `endpoint` (a URL shown without its password), `pool` (a connection pool), `migrate`
//! (versioned SQL applied once), `retry` (how transient failures are retried), `catalog` (the
//! catalog read into the model), `statements` (the one place SQL over user tables is written),
//! `bulk` (lifting and rebuilding indexes and keys, COPY rows), `slot`, `walsender` and `pgoutput`
//! (logical replication: the slot, read by SQL or by a walsender, and its messages decoded), `closure` (a subset's closure as one
//! statement), `schema_read` (the schema objects of the policy's tables, from the catalog),
//! `ddl` (the statements that create a served schema in an empty target), `testing` (throwaway
//! databases, feature `testing`). The table-and-key model is
//! the crate `maskbus_model`, re-exported as `model`.

pub mod bulk;
pub mod catalog;
pub mod closure;
pub mod ddl;
mod endpoint;
mod migrate;
pub mod pgoutput;
mod pool;
pub mod retry;
pub mod schema_read;
pub mod slot;
pub mod statements;
#[cfg(feature = "testing")]
pub mod testing;
pub mod walsender;

pub use deadpool_postgres;
pub use endpoint::Endpoint;
/// The table-and-key model (pure, its own crate), as `maskbus_pg::model` and at the root.
pub use maskbus_model as model;
pub use maskbus_model::{
    excerpt, quote_ident, Column, ForeignKey, KeyColumn, KeyCursor, KeyDef, KeySource, TableInfo,
    TableRef,
};
pub use migrate::{apply_migrations, apply_schema, ensure_database, Migration};
pub use pool::PgPool;
pub use retry::Retry;
pub use tokio_postgres;

use tokio_postgres::{Client, Config, NoTls};

/// Everything that can go wrong between maskbus and a Postgres server, with the role of the
/// database ("source", "target", "bus") so the operator knows which URL to look at.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("the {role} database URL is not valid ({reason}); expected postgres://USER@HOST:PORT/DBNAME")]
    BadUrl { role: &'static str, reason: String },
    #[error("cannot connect to the {role} database at {endpoint}: {reason}; {}", connect_hint(.reason))]
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
        /// The server's SQLSTATE, when the server refused (not when maskbus did).
        sqlstate: Option<Sqlstate>,
    },
}

impl PgError {
    /// Whether retrying after a pause may succeed (the server restarting, a dropped connection).
    /// The server's SQLSTATE, when the server refused.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PgError::Query {
                sqlstate: Some(code),
                ..
            } => Some(code.as_str()),
            _ => None,
        }
    }

    pub fn is_transient(&self) -> bool {
        match self {
            PgError::BadUrl { .. } => false,
            PgError::Connect { .. } => true,
            PgError::Query { transient, .. } => *transient,
        }
    }
}

/// An SQLSTATE: five ASCII digits or capital letters, kept inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sqlstate([u8; 5]);

impl Sqlstate {
    pub fn parse(code: &str) -> Option<Self> {
        let bytes: [u8; 5] = code.as_bytes().try_into().ok()?;
        bytes
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
            .then_some(Sqlstate(bytes))
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("XX000")
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

/// Session settings for every connection that reads production: no way to write, and values
/// printed in canonical forms (ISO dates, UTC) that the masking rules read and the target parses.
/// And no JIT: a subset's recursive closure is estimated at millions of cost units, so the
/// server spent 225 ms compiling each page's query (of 240 ms in all, on the small bank).
pub const READ_ONLY_CANONICAL: &str =
    "-c default_transaction_read_only=on -c DateStyle=ISO,YMD -c TimeZone=UTC \
     -c IntervalStyle=postgres -c extra_float_digits=3 -c bytea_output=hex -c jit=off";

/// How long opening a connection may take, unless the URL says (`connect_timeout=`); the whole
/// handshake gets twice as long.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A database maskbus connects to, whichever it is (production, the test database, the bus):
/// the tokio-postgres config plus the role it plays, kept together so every error can say which
/// database it concerns.
#[derive(Clone, Debug)]
pub struct Database {
    pub role: &'static str,
    pub config: Config,
}

impl Database {
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
    /// How long a whole connection handshake may take: a server that accepts TCP and never
    /// answers must not hang a command forever (`connect_timeout` covers the socket only).
    pub fn handshake_limit(&self) -> std::time::Duration {
        self.config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT)
            * 2
    }

    pub async fn connect(&self) -> Result<Client, PgError> {
        let limit = self.handshake_limit();
        let (client, connection) = tokio::time::timeout(limit, self.config.connect(NoTls))
            .await
            .map_err(|_| PgError::Connect {
                role: self.role,
                endpoint: self.endpoint(),
                reason: format!(
                    "no answer to the connection handshake within {}",
                    maskbus_model::human_duration(limit)
                ),
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

    /// The role this database is reached as (the URL's user), when the URL names one.
    pub fn user(&self) -> Option<&str> {
        self.config.get_user()
    }

    /// Wraps a query error with this target's role and endpoint: what failed, the SQLSTATE and
    /// its meaning, the objects the server named, and the usual fix for that SQLSTATE
    /// ([`remedy`]). A message the bus's own functions raised comes through as it is.
    pub fn query_error(&self, action: impl Into<String>, e: &tokio_postgres::Error) -> PgError {
        self.query_error_fixed(action, e, |_| None)
    }

    /// [`Database::query_error`] with a fix the caller knows better than [`remedy`] (it knows
    /// the statement it ran): `fix` is given the SQLSTATE, and its answer replaces the usual one.
    pub fn query_error_fixed(
        &self,
        action: impl Into<String>,
        e: &tokio_postgres::Error,
        fix: impl FnOnce(&str) -> Option<String>,
    ) -> PgError {
        let reason = match e.as_db_error() {
            Some(db) if self.role == "bus" && is_the_bus_own(db) => db_error_text(db, true),
            Some(db) => {
                let mut text = db_error_text(db, false);
                let code = db.code().code();
                if let Some(fix) = fix(code).or_else(|| remedy(code, self.role, self.user())) {
                    text.push_str(": ");
                    text.push_str(&fix);
                }
                text
            }
            None => error_text(e),
        };
        PgError::Query {
            role: self.role,
            endpoint: self.endpoint(),
            action: action.into(),
            reason,
            transient: is_transient(e),
            sqlstate: e.code().and_then(|c| Sqlstate::parse(c.code())),
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
            sqlstate: None,
        }
    }
}

/// One line that says what failed, safe for any log, report or bus message: for a database error
/// the SQLSTATE, its condition in words and the names of the objects the server reported
/// (schema, table, column, constraint, type); for a connection error the I/O cause. **Never the
/// server's message, detail or hint**: they quote values (`invalid input syntax for type bigint:
/// "078-05-1120"`, `Key (ssn)=(...) already exists`). tokio-postgres' own Display prints them, so
/// no maskbus crate formats a `tokio_postgres::Error` any other way than through here.
pub fn error_text(e: &tokio_postgres::Error) -> String {
    error_text_from(e, false)
}

/// [`error_text`] for an error of the bus, whose own refusals (marked by the bus's functions:
/// schema, SQLSTATE and prefix) are shown as written; from a source or a target no message is
/// trusted, whatever it is marked with (a function there could raise the same marks).
pub fn bus_error_text(e: &tokio_postgres::Error) -> String {
    error_text_from(e, true)
}

fn error_text_from(e: &tokio_postgres::Error, from_the_bus: bool) -> String {
    if let Some(db) = e.as_db_error() {
        return db_error_text(db, from_the_bus);
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

/// The server error as [`error_text`] describes it. With `from_the_bus`, the bus's own refusals
/// (raised by schema `mq`'s functions, [`is_the_bus_own`]) keep their sentence: it is the bus's
/// text, naming roles, parts and mailboxes only. From a source or a target
/// no message is trusted, whatever schema it claims.
pub fn db_error_text(db: &tokio_postgres::error::DbError, from_the_bus: bool) -> String {
    let code = db.code().code();
    if from_the_bus && is_the_bus_own(db) {
        return format!("{} ({code})", excerpt(db.message(), 300));
    }
    let mut text = format!("{} (SQLSTATE {code})", condition(code));
    let mut objects = Vec::new();
    match (db.schema(), db.table()) {
        (Some(schema), Some(table)) => objects.push(format!("table {schema}.{table}")),
        (None, Some(table)) => objects.push(format!("table {table}")),
        (Some(schema), None) => objects.push(format!("schema {schema}")),
        (None, None) => {}
    }
    if let Some(column) = db.column() {
        objects.push(format!("column {column}"));
    }
    if let Some(constraint) = db.constraint() {
        objects.push(format!("constraint {constraint}"));
    }
    if let Some(datatype) = db.datatype() {
        objects.push(format!("type {datatype}"));
    }
    if !objects.is_empty() {
        text.push_str(" on ");
        text.push_str(&excerpt(&objects.join(", "), 300));
    }
    text
}

/// The marks of a refusal raised by the bus's own functions (schema `mq`, in
/// `crates/mailbox/sql`): `SCHEMA = 'mq'`, one of the bus's SQLSTATEs and a message that starts
/// with one of its fixed prefixes. Its sentence names roles, parts and mailboxes only, never a
/// row's value, so it is shown as it is; it is believed from the bus alone.
pub fn is_the_bus_own(db: &tokio_postgres::error::DbError) -> bool {
    const PREFIXES: [&str; 3] = [
        "permission denied on the bus: ",
        "over a limit of the bus: ",
        "refused by the bus: ",
    ];
    db.schema() == Some("mq")
        && matches!(db.code().code(), "42501" | "54000" | "42704" | "22023")
        && PREFIXES.iter().any(|p| db.message().starts_with(p))
}

/// The usual fix for a server's refusal with SQLSTATE `code` on the `role` database (source,
/// target, bus) reached as `user`, when there is one worth saying whatever the statement was.
/// Words of maskbus's own: nothing of the server's text.
pub fn remedy(code: &str, role: &str, user: Option<&str>) -> Option<String> {
    let user = user.unwrap_or("the URL's user");
    Some(match code {
        "42501" => format!(
            "grant {user} the privilege this needs on the {role} database, or connect as a role that has it"
        ),
        "28P01" | "28000" => format!(
            "check the user and password in the {role} URL (or PGPASSWORD, ~/.pgpass), and that pg_hba.conf lets {user} in from this host"
        ),
        "3D000" => format!(
            "create the {role} database (createdb, or CREATE DATABASE) or correct the database name in its URL"
        ),
        "3F000" => "create the schema, or correct its name".to_string(),
        "42P01" => format!(
            "the {role} database lacks a table maskbus reads: check that the URL names the right database and that its schema is current"
        ),
        "23505" => "a row with the same unique key is there already".to_string(),
        "25006" => format!(
            "the {role} database is read only here (a standby?): connect to the primary"
        ),
        "53300" => "wait for connections to end, or raise the server's max_connections (or lower workers and streams)".to_string(),
        "53100" => "free disk space on the server".to_string(),
        "57014" => "the statement was stopped: raise statement_timeout for this role, or try again".to_string(),
        _ => return None,
    })
}

/// What to check when a connection failed for `reason` (as [`error_text`] wrote it): the
/// password for an authentication failure, the database for a missing one, the server for
/// one that does not answer.
pub fn connect_hint(reason: &str) -> &'static str {
    let code = reason
        .rsplit_once("(SQLSTATE ")
        .and_then(|(_, rest)| rest.get(..5));
    match code {
        Some("28P01") => "check the user and password in the URL (or PGPASSWORD, ~/.pgpass)",
        Some("28000") => "check the user in the URL, and that pg_hba.conf lets it in from this host",
        Some("3D000") => "create the database (createdb, or CREATE DATABASE) or correct its name in the URL",
        Some("53300") => "the server has too many connections: wait, or raise its max_connections",
        Some("57P03") => "the server is starting or shutting down: try again in a moment",
        Some("42501") => "the user may not connect to this database: GRANT CONNECT ON DATABASE to it",
        Some(_) => "check the URL and the server's log",
        None => "check that the server is running and listening at this host and port, and that the URL is right",
    }
}

/// What an SQLSTATE means, in words that quote nothing. Unlisted codes are named by their class.
pub fn condition(code: &str) -> &'static str {
    match code {
        "22P02" => "a value does not convert to the type asked for (invalid text representation)",
        "22003" => "a number is out of range for its type",
        "22001" => "a value is too long for its column",
        "22007" | "22008" => "a date or time value is not valid",
        "22012" => "division by zero",
        "22023" => "an invalid parameter value",
        "2201B" => "an invalid regular expression",
        "22021" => "a character not valid in the database's encoding",
        "22P05" => "a character that cannot be converted",
        "23502" => "a NOT NULL constraint was violated",
        "23503" => "a foreign key constraint was violated",
        "23505" => "a unique constraint was violated",
        "23514" => "a check constraint was violated",
        "23P01" => "an exclusion constraint was violated",
        "25006" => "the transaction is read only",
        "25P02" => "the transaction was aborted by an earlier error",
        "28000" => "the role may not log in this way (invalid authorization)",
        "28P01" => "password authentication failed",
        "3D000" => "the database does not exist",
        "3F000" => "the schema does not exist",
        "40001" => "a serialization failure (retry)",
        "40P01" => "a deadlock was detected (retry)",
        "42501" => "permission denied",
        "42601" => "a syntax error",
        "42702" => "a column reference is ambiguous",
        "42703" => "a column does not exist",
        "42704" => "an object does not exist",
        "42710" => "an object already exists",
        "42P07" => "a table already exists",
        "42804" => "a type mismatch",
        "42883" => "a function or operator does not exist",
        "42P01" => "a table does not exist",
        "53100" => "the server's disk is full",
        "53200" => "the server is out of memory",
        "53300" => "too many connections",
        "54000" => "a program limit was exceeded",
        "54001" => "a statement is too complex",
        "55000" => "an object is not in the required state",
        "55006" => "an object is in use",
        "55P03" => "a lock is not available",
        "57014" => "the statement was cancelled (a timeout or a request)",
        "57P01" => "the server is shutting down (administrator command)",
        "57P02" => "the server crashed",
        "57P03" => "the server cannot accept connections now",
        "58030" => "an I/O error on the server",
        "P0001" => "an exception raised by a PL/pgSQL function",
        "XX000" => "an internal error of the server",
        _ => match code.get(..2) {
            Some("08") => "a connection exception",
            Some("22") => "a data exception",
            Some("23") => "an integrity constraint was violated",
            Some("28") => "an authorization failure",
            Some("40") => "the transaction was rolled back",
            Some("42") => "a syntax error or an access rule violation",
            Some("53") => "the server is short of a resource",
            Some("54") => "a program limit was exceeded",
            Some("55") => "an object is not in the required state",
            Some("57") => "operator intervention",
            Some("58") => "a system error on the server",
            Some("XX") => "an internal error of the server",
            _ => "the server refused the statement",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_error_gets_the_hint_of_its_sqlstate() {
        let auth = connect_hint("password authentication failed (SQLSTATE 28P01)");
        assert!(auth.contains("check the user and password"), "{auth}");
        assert!(!auth.contains("server is running"), "{auth}");
        assert!(connect_hint("the database does not exist (SQLSTATE 3D000)")
            .starts_with("create the database"));
        assert!(
            connect_hint("error connecting to server: Connection refused (os error 111)")
                .contains("check that the server is running")
        );
        let shown = PgError::Connect {
            role: "target",
            endpoint: Database::parse("target", "postgres://me:secret@db.internal/test")
                .unwrap()
                .endpoint(),
            reason: "password authentication failed (SQLSTATE 28P01)".into(),
        }
        .to_string();
        assert!(
            shown.ends_with("check the user and password in the URL (or PGPASSWORD, ~/.pgpass)"),
            "{shown}"
        );
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn a_refusal_gets_the_usual_fix_of_its_sqlstate() {
        let denied = remedy("42501", "source", Some("maskbus_reader")).unwrap();
        assert!(
            denied.starts_with("grant maskbus_reader the privilege"),
            "{denied}"
        );
        assert!(remedy("28P01", "bus", None)
            .unwrap()
            .contains("user and password in the bus URL"));
        assert!(remedy("3D000", "target", None)
            .unwrap()
            .starts_with("create the target database"));
        assert_eq!(remedy("22P02", "source", None), None);
        assert_eq!(condition("42P01"), "a table does not exist");
        assert_eq!(condition("23505"), "a unique constraint was violated");
    }
}
