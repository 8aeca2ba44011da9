//! The producer's schema reply: the policy's tables read from the source catalog
//! (`maskbus_pg::schema_read`, on a connection of its own) and let through the masking
//! boundary (`maskbus_mask::schema::serve`), which alone makes what the reply carries.

use crate::reply::Reply;
use crate::source::{Refusal, Source};
use maskbus_mask::schema::ServedSchema;
use maskbus_pg::TableRef;
use maskbus_protocol::VERSION;

/// The schema reply for `source`'s policy.
pub async fn answer(source: &Source) -> Vec<Reply> {
    match try_answer(source).await {
        Ok(reply) => vec![reply],
        Err(refusal) => vec![refusal.into_reply()],
    }
}

/// The fingerprint of what is served now; when it changed since the last one, the source's
/// tables are read again from the catalog (a migration added a column, say). `None` when the
/// schema cannot be read (the pages then say why).
pub async fn fingerprint(source: &Source) -> Option<String> {
    match served(source).await {
        Ok(served) => {
            let fingerprint = served.fingerprint();
            source.schema_seen(&fingerprint).await;
            Some(fingerprint)
        }
        Err(refusal) => {
            tracing::warn!(refused = %refusal, "cannot read the served schema");
            None
        }
    }
}

async fn try_answer(source: &Source) -> Result<Reply, Refusal> {
    let served = served(source).await?;
    source.schema_seen(&served.fingerprint()).await;
    for left in served.left_out() {
        tracing::warn!(entity = %left.entity, reason = %left.reason, "schema left out of the reply");
    }
    Ok(Reply::Schema { v: VERSION, served })
}

async fn served(source: &Source) -> Result<ServedSchema, Refusal> {
    let tables: Vec<TableRef> = source
        .policy()
        .entities()
        .map(|(entity, _)| TableRef::parse(entity))
        .collect();
    let client = source.database().connect().await?;
    let (schema, unreadable) =
        maskbus_pg::schema_read::read(source.database(), &client, &tables).await?;
    let refused = unreadable
        .into_iter()
        .map(|u| (u.table, u.reason))
        .collect();
    Ok(maskbus_mask::schema::serve(
        schema,
        refused,
        source.policy(),
    ))
}
