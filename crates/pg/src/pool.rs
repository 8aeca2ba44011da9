//! A connection pool for one database, whose errors name the database like every other here.

use crate::{error_text, Database, PgError};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use tokio_postgres::NoTls;

/// A deadpool of connections to one database. Broken connections (a server restart) are
/// dropped at checkout, so callers only ever see a connect error while the server is down.
#[derive(Clone)]
pub struct PgPool {
    database: Database,
    pool: Pool,
    /// How long opening or checking a connection may take.
    limit: std::time::Duration,
}

impl PgPool {
    pub fn new(database: Database, size: usize) -> Result<Self, PgError> {
        let manager = Manager::from_config(
            database.config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // Opening a pooled connection is bounded like any other (see Database::connect).
        let limit = database
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(crate::CONNECT_TIMEOUT)
            * 2;
        let pool = Pool::builder(manager)
            .max_size(size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(limit))
            .recycle_timeout(Some(limit))
            .build()
            .map_err(|e| PgError::Connect {
                role: database.role,
                endpoint: database.endpoint(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            database,
            pool,
            limit,
        })
    }

    pub fn database(&self) -> &Database {
        &self.database
    }

    /// A connection from the pool.
    pub async fn get(&self) -> Result<Object, PgError> {
        self.pool.get().await.map_err(|e| PgError::Connect {
            role: self.database.role,
            endpoint: self.database.endpoint(),
            reason: match e {
                PoolError::Backend(e) => error_text(&e),
                PoolError::Timeout(_) => format!(
                    "no answer to the connection handshake within {}",
                    maskbus_model::human_duration(self.limit)
                ),
                other => other.to_string(),
            },
        })
    }
}
