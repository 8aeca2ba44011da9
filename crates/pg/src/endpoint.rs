//! A printable, password-free description of where a connection goes.

use std::fmt;
use tokio_postgres::config::Host;
use tokio_postgres::Config;

/// `user@host:port/dbname`, never with the password, for errors and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint(String);

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
        Self(format!("{user}@{host}:{port}/{db}"))
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_leaves_out_the_password() {
        let config: Config = "postgres://alice:s3cret@db.example:6543/fintechp"
            .parse()
            .unwrap();
        let shown = Endpoint::of(&config).to_string();
        assert_eq!(shown, "alice@db.example:6543/fintechp");
        assert!(!shown.contains("s3cret"));
    }
}
