//! Throwaway databases for integration tests (feature `testing`).
//!
//! Every test asks for its own uniquely named databases on the cluster named by `DATABASE_URL`
//! (which `scripts/test` sets from `scripts/dev-db`), so tests run in parallel without seeing each
//! other, and the databases are dropped when the guard goes out of scope, even when the test
//! panics. Never use this outside tests: it drops databases.

use crate::{quote_ident, Database};
use std::sync::atomic::{AtomicU32, Ordering};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The cluster under test, from `DATABASE_URL`.
pub fn cluster_url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| {
        panic!(
            "DATABASE_URL is not set: run the tests through scripts/test, or export \
             DATABASE_URL=$(scripts/dev-db | tail -n 1)"
        )
    })
}

/// A set of databases that exist for one test and are dropped with it.
pub struct TestDatabases {
    base: Database,
    names: Vec<String>,
}

/// Creates one object per label on the test cluster (`CREATE {kind} name{suffix}`), each named
/// after the test, this process and a counter, so parallel tests never meet.
async fn create_named(
    prefix: &str,
    test: &str,
    labels: &[&str],
    kind: &str,
    suffix: &str,
) -> (Database, Vec<String>) {
    let base = Database::parse("test cluster", &cluster_url()).expect("DATABASE_URL parses");
    let admin = base
        .with_dbname("postgres")
        .connect()
        .await
        .expect("connect to the test cluster");
    let run = format!(
        "{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let short_test: String = test
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(20)
        .collect();
    let mut names = Vec::new();
    for label in labels {
        let name = format!("{prefix}_{short_test}_{run}_{label}").to_lowercase();
        admin
            .batch_execute(&format!("CREATE {kind} {}{suffix}", quote_ident(&name)))
            .await
            .unwrap_or_else(|e| panic!("CREATE {kind} {name}: {}", crate::error_text(&e)));
        names.push(name);
    }
    (base, names)
}

/// Drops what `create_named` made (`{drop} name`), from a thread of its own: Drop runs inside
/// the test's runtime, which cannot be blocked on, and is joined so nothing outlives the test.
fn drop_named(base: Database, names: Vec<String>, drop: &'static str) {
    let cleanup = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cleanup runtime");
        runtime.block_on(async move {
            let Ok(admin) = base.with_dbname("postgres").connect().await else {
                return;
            };
            for name in names {
                // One statement at a time: DROP DATABASE cannot share a transaction.
                for statement in drop.split(";\n") {
                    let sql = statement.replace("{}", &quote_ident(&name));
                    let _ = admin.batch_execute(&sql).await;
                }
            }
        });
    });
    let _ = cleanup.join();
}

fn labelled<'a>(names: &'a [String], label: &str, what: &str) -> &'a str {
    names
        .iter()
        .find(|n| n.ends_with(&format!("_{label}")))
        .unwrap_or_else(|| panic!("no test {what} labelled {label}"))
}

impl TestDatabases {
    /// Creates one empty database per label, e.g. `["src", "dst", "bus"]`.
    pub async fn create(test: &str, labels: &[&str]) -> Self {
        let (base, names) = create_named("mbt", test, labels, "DATABASE", "").await;
        Self { base, names }
    }

    /// The URL of the database created for `label`.
    pub fn url(&self, label: &str) -> String {
        url_with_dbname(&cluster_url(), labelled(&self.names, label, "database"))
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Login roles that exist for one test and are dropped with it (after its databases: declare
/// the roles first, so they are dropped last). The test cluster trusts loopback connections,
/// so a role needs no password.
pub struct TestRoles {
    base: Database,
    names: Vec<String>,
}

impl TestRoles {
    /// Creates one login role per label, with no privilege beyond PUBLIC's.
    pub async fn create(test: &str, labels: &[&str]) -> Self {
        let (base, names) = create_named("mbr", test, labels, "ROLE", " LOGIN").await;
        Self { base, names }
    }

    /// The role created for `label`.
    pub fn name(&self, label: &str) -> &str {
        labelled(&self.names, label, "role")
    }

    /// `url` with the role for `label` as its user.
    pub fn url_as(&self, url: &str, label: &str) -> String {
        url_with_user(url, self.name(label))
    }
}

impl Drop for TestRoles {
    fn drop(&mut self) {
        drop_named(
            self.base.clone(),
            std::mem::take(&mut self.names),
            "DROP ROLE IF EXISTS {}",
        );
    }
}

/// Replaces the user of a `postgres://` URL (and drops any password).
pub fn url_with_user(url: &str, user: &str) -> String {
    let (head, tail) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => panic!("DATABASE_URL must be a postgres:// URL"),
    };
    let host = match tail.find('/') {
        Some(slash) => match tail[..slash].rfind('@') {
            Some(at) => &tail[at + 1..],
            None => tail,
        },
        None => tail.rsplit('@').next().unwrap_or(tail),
    };
    format!("{head}{user}@{host}")
}

/// Replaces the database name of a `postgres://` URL.
pub fn url_with_dbname(url: &str, dbname: &str) -> String {
    let (head, tail) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => panic!("DATABASE_URL must be a postgres:// URL"),
    };
    let (authority, rest) = match tail.find('/') {
        Some(i) => (&tail[..i], &tail[i..]),
        None => (tail, ""),
    };
    let query = rest.find('?').map(|i| &rest[i..]).unwrap_or("");
    format!("{head}{authority}/{dbname}{query}")
}

impl Drop for TestDatabases {
    fn drop(&mut self) {
        drop_named(
            self.base.clone(),
            std::mem::take(&mut self.names),
            // A replication slot a failed test left on its source would keep the database
            // (and WAL) forever: slots go first.
            "SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots
              WHERE '\"' || replace(database::text, '\"', '\"\"') || '\"' = '{}'
                AND active_pid IS NOT NULL;
             SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
              WHERE '\"' || replace(database::text, '\"', '\"\"') || '\"' = '{}';
             DROP DATABASE IF EXISTS {} WITH (FORCE)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::url_with_dbname;

    #[test]
    fn replaces_only_the_user() {
        assert_eq!(
            super::url_with_user("postgres://u:pw@h:1/db?x=1", "r"),
            "postgres://r@h:1/db?x=1"
        );
        assert_eq!(
            super::url_with_user("postgres://h:1/db", "r"),
            "postgres://r@h:1/db"
        );
    }

    #[test]
    fn replaces_only_the_database_name() {
        assert_eq!(
            url_with_dbname("postgres://u@h:1/postgres?sslmode=disable", "x"),
            "postgres://u@h:1/x?sslmode=disable"
        );
        assert_eq!(
            url_with_dbname("postgres://u@h:1", "x"),
            "postgres://u@h:1/x"
        );
    }
}
