//! The back-ends of the consumer's own tools: `insert_rows` (rows an agent brings, written like
//! a page, without a watermark, into a table maskbus owns only) and `query_local` (rows of the
//! test database, read-only). Neither reaches schema `maskbus` (the consumer's own bookkeeping)
//! or PostgreSQL's schemas ([`crate::owned`]).

use super::owned::{self, Owned};
use super::target_db::TargetDb;
use super::writer::{ApplyError, PageWriter};
use super::ConsumerError;
use maskbus_pg::{statements, TableRef};
use maskbus_protocol::{KeyCursor, ReceivedPage, MAX_PAGE_ROWS, VERSION};
use std::collections::BTreeMap;

/// The consumer's tools over its own test database.
pub struct LocalTools<'db> {
    db: &'db TargetDb,
}

impl<'db> LocalTools<'db> {
    pub fn new(db: &'db TargetDb) -> Self {
        Self { db }
    }

    /// Inserts rows a caller supplies (the `insert_rows` tool): same upsert, no watermark.
    pub async fn insert_rows(
        &self,
        entity: &str,
        columns: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
    ) -> Result<u64, ConsumerError> {
        let unsupported = |reason: String| ConsumerError::Unsupported {
            entity: maskbus_model::shorten(entity),
            reason,
        };
        if !maskbus_protocol::is_entity_name(entity) {
            return Err(unsupported("not a table name".into()));
        }
        let entity = maskbus_model::qualify(entity);
        // Before anything else: never schema maskbus, and only a table maskbus owns.
        if owned::is_reserved(&entity) {
            return Err(ConsumerError::Reserved { entity });
        }
        Owned::load(self.db).await?.require(&entity)?;
        // The target's catalog is enough: the caller (an agent) brings the rows, and may have no
        // model-free producer to ask for missing parents.
        let (plans, skipped) = self
            .db
            .entity_plans(std::slice::from_ref(&entity), &BTreeMap::new())
            .await?;
        let Some(plan) = plans.into_iter().next() else {
            return Err(unsupported(
                skipped
                    .into_iter()
                    .next()
                    .map_or("no such table".into(), |s| s.reason),
            ));
        };
        let page = ReceivedPage {
            v: VERSION,
            entity: entity.clone(),
            key: plan.key.names(),
            columns,
            rows: rows.into_iter().collect(),
            next_after: None,
            next_after_tag: None,
            more: false,
            since: None,
            until: None,
            part: 0,
            parts: 1,
        };
        match PageWriter::new(self.db).apply(&plan, &page, None).await {
            Ok(written) => Ok(written),
            Err(ApplyError::Consumer(e)) => Err(e),
            Err(ApplyError::MissingParents(_)) => Err(ConsumerError::BadReply {
                entity,
                reason: "the rows reference parent rows the test database does not have yet: insert the parents first"
                    .into(),
            }),
        }
    }

    /// Rows of the target (the `query_local` tool), as text, in key order after `after`.
    pub async fn query_local(
        &self,
        entity: &str,
        after: Option<KeyCursor>,
        limit: u32,
    ) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), ConsumerError> {
        let unsupported = |reason: &str| ConsumerError::Unsupported {
            entity: maskbus_model::shorten(entity),
            reason: reason.to_string(),
        };
        if !maskbus_protocol::is_entity_name(entity) {
            return Err(unsupported("not a table name"));
        }
        let qualified = maskbus_model::qualify(entity);
        if owned::is_reserved(&qualified) {
            return Err(ConsumerError::Reserved { entity: qualified });
        }
        let table = TableRef::parse(&qualified);
        let client = self.db.client().await?;
        let info = maskbus_pg::catalog::table(self.db.target(), &client, &table)
            .await?
            .ok_or_else(|| unsupported("no such table in the test database"))?;
        let key = info.key(None).map_err(|e| unsupported(&e.to_string()))?;
        if after.as_ref().is_some_and(|a| a.len() != key.columns.len()) {
            return Err(unsupported("after needs one value per key column"));
        }
        let columns: Vec<String> = info.columns.iter().map(|c| c.name.clone()).collect();
        let sql = statements::page(&table, &key, &columns, "", "true", 2, after.is_some());
        let rows = client
            .query(&sql, &[&after, &i64::from(limit.min(MAX_PAGE_ROWS))])
            .await
            .map_err(|e| self.db.target().query_error(format!("reading {table}"), &e))?;
        let values = rows
            .iter()
            .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
            .collect();
        Ok((columns, values))
    }
}
