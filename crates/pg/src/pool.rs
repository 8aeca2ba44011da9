//! A connection pool for one target, whose errors name the target like every other here.

use crate::{error_text, PgError, Target};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use tokio_postgres::NoTls;

/// A deadpool of connections to one database. Broken connections (a server restart) are
/// dropped at checkout, so callers only ever see a connect error while the server is down.
#[derive(Clone)]
pub struct PgPool {
    target: Target,
    pool: Pool,
    /// How long opening or checking a connection may take.
    limit: std::time::Duration,
}

impl PgPool {
    pub fn new(target: Target, size: usize) -> Result<Self, PgError> {
        let manager = Manager::from_config(
            target.config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // Opening a pooled connection is bounded like any other (see Target::connect).
        let limit = target
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
                role: target.role,
                endpoint: target.endpoint(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            target,
            pool,
            limit,
        })
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// A connection from the pool.
    pub async fn get(&self) -> Result<Object, PgError> {
        self.pool.get().await.map_err(|e| PgError::Connect {
            role: self.target.role,
            endpoint: self.target.endpoint(),
            reason: match e {
                PoolError::Backend(e) => error_text(&e),
                PoolError::Timeout(_) => format!(
                    "no answer to the connection handshake within {:?}",
                    self.limit
                ),
                other => other.to_string(),
            },
        })
    }
}
