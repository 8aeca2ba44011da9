//! Where a connection goes, told without telling: errors, logs and reports name the database,
//! never the user, host, port or password (those are the operator's to know, not a log's).

use std::fmt;
use tokio_postgres::config::Host;
use tokio_postgres::Config;

/// A connection's destination. Displays as the database name only; compares by user, host, port
/// and database (two URLs naming the same database are the same endpoint).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    whole: String,
    dbname: String,
}

impl Endpoint {
    pub fn of(config: &Config) -> Self {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".to_string(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("?");
        let db = config.get_dbname().unwrap_or("?");
        Self {
            whole: format!("{user}@{host}:{port}/{db}"),
            dbname: db.to_string(),
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.dbname)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_shows_the_database_only() {
        let config: Config = "postgres://alice:s3cret@db.example:6543/fintechp"
            .parse()
            .unwrap();
        let shown = Endpoint::of(&config).to_string();
        assert_eq!(shown, "\"fintechp\"");
        for secret in ["s3cret", "alice", "db.example", "6543"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        let other: Config = "postgres://alice@db.example:6543/fintechp".parse().unwrap();
        assert_eq!(Endpoint::of(&config), Endpoint::of(&other));
        let moved: Config = "postgres://alice@db.example:6544/fintechp".parse().unwrap();
        assert_ne!(Endpoint::of(&config), Endpoint::of(&moved));
    }
}
