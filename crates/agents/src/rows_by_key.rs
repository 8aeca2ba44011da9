//! The producer's rows by key: the parents a consumer's page needs, fetched by the columns
//! their children reference. Masked like any page; looked up by `keep` columns only.

use crate::protocol::{ErrorCode, PageReply, Reply, VERSION};
use crate::source::{Refusal, Source};
use maskbus_pg::statements;

impl Source {
    /// Specific rows whose `columns` equal one of `keys` (parents a consumer's page needs),
    /// masked. Only `keep` columns can be looked up: a lookup by a masked column would let the
    /// asker test guesses of the real values.
    pub async fn rows(&self, entity: &str, columns: &[String], keys: &[Vec<String>]) -> Reply {
        let result = async {
            let shape = self.shape(entity).await?;
            let entity = shape.table.to_string();
            let mut lookup = Vec::with_capacity(columns.len());
            for column in columns {
                let kept = self
                    .policy()
                    .entity(&entity)
                    .and_then(|e| e.rule(column))
                    .is_some_and(|r| *r == maskbus_mask::Rule::Keep);
                match shape.types.get(column) {
                    Some(ty) if kept => lookup.push((column.clone(), ty.clone())),
                    _ => {
                        return Err(Refusal::new(
                            ErrorCode::PolicyRefused,
                            format!(
                            "{entity} rows can be looked up by its kept columns only, not by {}",
                            maskbus_mask::shorten(column)
                        ),
                        ))
                    }
                }
            }
            let sql = statements::rows_by(&shape.table, &shape.key, &shape.columns, &lookup);
            let arrays: Vec<Vec<&str>> = (0..columns.len())
                .map(|i| keys.iter().map(|k| k[i].as_str()).collect())
                .collect();
            let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = arrays
                .iter()
                .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
                .collect();
            let client = self.client().await?;
            let rows = client.query(&sql, &params).await.map_err(|e| {
                Refusal::from(
                    self.target()
                        .query_error(format!("reading rows of {entity} by key"), &e),
                )
            })?;
            // One page: only its last key is its cursor.
            let (masked, keys) = self.mask_rows(&shape, rows, usize::MAX)?;
            Ok::<_, Refusal>(PageReply {
                v: VERSION,
                entity,
                key: shape.key.names(),
                columns: shape.columns.clone(),
                rows: masked,
                next_after: keys.last().cloned(),
                more: false,
                since: None,
                until: None,
                part: 0,
                parts: 1,
            })
        }
        .await;
        match result {
            Ok(page) => Reply::Page(page),
            Err(refusal) => refusal.into_reply(),
        }
    }
}
