//! Creating a missing database and applying versioned SQL files exactly once.
//!
//! Each component (the bank schema, the bus schema, the consumer's sync state) ships its SQL as
//! numbered files under `sql/`. The names of applied files are recorded in `maskbus.migrations`
//! of the database they were applied to, inside the same transaction as the SQL itself, so a crash
//! never leaves a file half applied and a second run is a no-op that can say so.

use crate::{quote_ident, Database, PgError};
use tokio_postgres::error::SqlState;
use tokio_postgres::Client;

/// One SQL file, compiled into the binary so a release needs no `sql/` folder beside it.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    pub component: &'static str,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Creates the database `target` names when it does not exist yet. Returns whether it created it.
///
/// Two concurrent callers may both try to create it; the loser's `duplicate_database` error is
/// taken as "it exists", which is what it wanted.
pub async fn ensure_database(target: &Database) -> Result<bool, PgError> {
    match target.connect().await {
        Ok(_) => return Ok(false),
        Err(PgError::Connect { .. }) => {}
        Err(other) => return Err(other),
    }
    // The first attempt failed: either the database is missing or the server is unreachable.
    // Asking the maintenance database tells the two apart with a precise error.
    let maintenance = target.with_dbname("postgres");
    let client = maintenance.connect().await.map_err(|e| match e {
        PgError::Connect { reason, .. } => PgError::Connect {
            role: target.role,
            endpoint: target.endpoint(),
            reason,
        },
        other => other,
    })?;
    let exists = client
        .query_opt(
            "SELECT 1 FROM pg_database WHERE datname = $1",
            &[&target.dbname()],
        )
        .await
        .map_err(|e| target.query_error("looking the database up in pg_database", &e))?
        .is_some();
    if exists {
        // It exists, so the first connection failed for another reason (auth, limits): repeat
        // it to surface that reason.
        target.connect().await?;
        return Ok(false);
    }
    let create = format!("CREATE DATABASE {}", quote_ident(target.dbname()));
    match client.batch_execute(&create).await {
        Ok(()) => Ok(true),
        Err(e) if e.code() == Some(&SqlState::DUPLICATE_DATABASE) => Ok(false),
        Err(e) => Err(target.query_error("CREATE DATABASE", &e)),
    }
}

/// Schema `maskbus` and its table of applied migrations, made if missing.
async fn ensure_bookkeeping(target: &Database, client: &Client) -> Result<(), PgError> {
    client
        .batch_execute(
            // A schema an admin created beforehand (CREATE SCHEMA maskbus AUTHORIZATION role)
            // needs no CREATE on the database: look before creating.
            "DO $$ BEGIN
                 IF to_regnamespace('maskbus') IS NULL THEN CREATE SCHEMA maskbus; END IF;
             END $$;
             CREATE TABLE IF NOT EXISTS maskbus.migrations (
                 component  text NOT NULL,
                 name       text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now(),
                 PRIMARY KEY (component, name)
             );",
        )
        .await
        .or_else(|e| {
            // Two first runs racing on CREATE ... IF NOT EXISTS can collide in the catalog; the
            // table exists afterwards either way.
            if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                Ok(())
            } else {
                Err(target.query_error("creating maskbus.migrations", &e))
            }
        })
}

/// Applies the migrations not yet recorded in the database, in order, each in its own transaction
/// together with its bookkeeping row. Returns the names it applied (empty: already up to date).
///
/// A transaction-scoped advisory lock serialises concurrent runs against the same database.
pub async fn apply_migrations(
    target: &Database,
    migrations: &[Migration],
) -> Result<Vec<&'static str>, PgError> {
    let mut client = target.connect().await?;
    // Up to date: read only, so a role without CREATE on the database can start every time.
    let recorded: Vec<(String, String)> = match client
        .query(
            "SELECT component, name FROM maskbus.migrations WHERE to_regclass('maskbus.migrations') IS NOT NULL",
            &[],
        )
        .await
    {
        Ok(rows) => rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
        Err(_) => Vec::new(),
    };
    if migrations.iter().all(|m| {
        recorded
            .iter()
            .any(|(c, n)| c == m.component && n == m.name)
    }) {
        return Ok(Vec::new());
    }
    ensure_bookkeeping(target, &client).await?;

    let mut applied = Vec::new();
    for migration in migrations {
        let tx = client
            .transaction()
            .await
            .map_err(|e| target.query_error("BEGIN", &e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('maskbus.migrations'))",
            &[],
        )
        .await
        .map_err(|e| target.query_error("taking the migration lock", &e))?;
        let done = tx
            .query_opt(
                "SELECT 1 FROM maskbus.migrations WHERE component = $1 AND name = $2",
                &[&migration.component, &migration.name],
            )
            .await
            .map_err(|e| target.query_error("reading maskbus.migrations", &e))?
            .is_some();
        if done {
            continue;
        }
        tx.batch_execute(migration.sql).await.map_err(|e| {
            target.query_error(
                format!("applying sql/{}/{}", migration.component, migration.name),
                &e,
            )
        })?;
        tx.execute(
            "INSERT INTO maskbus.migrations (component, name) VALUES ($1, $2)",
            &[&migration.component, &migration.name],
        )
        .await
        .map_err(|e| target.query_error("recording the migration", &e))?;
        tx.commit()
            .await
            .map_err(|e| target.query_error("COMMIT", &e))?;
        applied.push(migration.name);
    }
    Ok(applied)
}

/// A schema with one current definition and the steps that brought older installs to it (the
/// pgmq way): a database none of whose steps is recorded gets `current` alone, with every step
/// recorded as done; one that has some gets the steps it lacks. Returns the names applied
/// (`current.name` for a fresh install; empty when up to date).
pub async fn apply_schema(
    target: &Database,
    current: &Migration,
    steps: &[Migration],
) -> Result<Vec<&'static str>, PgError> {
    let mut client = target.connect().await?;
    let recorded: i64 = match client
        .query_one(
            "SELECT count(*) FROM maskbus.migrations WHERE component = $1
               AND to_regclass('maskbus.migrations') IS NOT NULL",
            &[&current.component],
        )
        .await
    {
        Ok(row) => row.get(0),
        Err(_) => 0,
    };
    if recorded > 0 {
        drop(client);
        return apply_migrations(target, steps).await;
    }
    // Fresh: the bookkeeping table (as apply_migrations makes it), then the current definition
    // and every step's row, in one transaction under the migration lock.
    ensure_bookkeeping(target, &client).await?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| target.query_error("BEGIN", &e))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('maskbus.migrations'))",
        &[],
    )
    .await
    .map_err(|e| target.query_error("taking the migration lock", &e))?;
    let raced: i64 = tx
        .query_one(
            "SELECT count(*) FROM maskbus.migrations WHERE component = $1",
            &[&current.component],
        )
        .await
        .map_err(|e| target.query_error("reading maskbus.migrations", &e))?
        .get(0);
    if raced > 0 {
        drop(tx);
        drop(client);
        return apply_migrations(target, steps).await;
    }
    tx.batch_execute(current.sql).await.map_err(|e| {
        target.query_error(
            format!("applying {} ({})", current.name, current.component),
            &e,
        )
    })?;
    for step in steps {
        tx.execute(
            "INSERT INTO maskbus.migrations (component, name) VALUES ($1, $2)",
            &[&step.component, &step.name],
        )
        .await
        .map_err(|e| target.query_error("recording the migration", &e))?;
    }
    tx.commit()
        .await
        .map_err(|e| target.query_error("COMMIT", &e))?;
    Ok(vec![current.name])
}
