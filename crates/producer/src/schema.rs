//! The producer's schema reply: the policy's tables read from the source catalog
//! (`maskbus_pg::schema_read`, on a connection of its own) and let through the masking
//! boundary (`maskbus_mask::schema::serve`), which alone makes what the reply carries.

use crate::reply::Reply;
use crate::source::{Refusal, Source};
use maskbus_pg::TableRef;
use maskbus_protocol::VERSION;

/// The schema reply for `source`'s policy.
pub async fn answer(source: &Source) -> Vec<Reply> {
    match try_answer(source).await {
        Ok(reply) => vec![reply],
        Err(refusal) => vec![refusal.into_reply()],
    }
}

async fn try_answer(source: &Source) -> Result<Reply, Refusal> {
    let tables: Vec<TableRef> = source
        .policy()
        .entities()
        .map(|(entity, _)| TableRef::parse(entity))
        .collect();
    let client = source.target().connect().await?;
    let (schema, unreadable) =
        maskbus_pg::schema_read::read(source.target(), &client, &tables).await?;
    let refused = unreadable
        .into_iter()
        .map(|u| (u.table, u.reason))
        .collect();
    let served = maskbus_mask::schema::serve(schema, refused, source.policy());
    for left in served.left_out() {
        tracing::warn!(entity = %left.entity, reason = %left.reason, "schema left out of the reply");
    }
    Ok(Reply::Schema { v: VERSION, served })
}
