//! Pages into the target with `COPY ... FROM STDIN`: the first window of a table loaded in bulk
//! (see `load.rs`), on a connection in or out of a transaction.

use super::pages::EntityPlan;
use bytes::Bytes;
use futures_util::SinkExt;
use maskbus_pg::bulk;
use maskbus_pg::deadpool_postgres::{self, GenericClient};
use maskbus_protocol::ReceivedPage;
use tokio_postgres::CopyInSink;

/// A connection a page can be written on, in or out of a transaction: COPY is not part of
/// `GenericClient`.
pub(super) trait PageClient: GenericClient + Sync {
    async fn copy_in(&self, sql: &str) -> Result<CopyInSink<Bytes>, tokio_postgres::Error>;
}

impl PageClient for deadpool_postgres::Client {
    async fn copy_in(&self, sql: &str) -> Result<CopyInSink<Bytes>, tokio_postgres::Error> {
        tokio_postgres::Client::copy_in(self, sql).await
    }
}

impl PageClient for deadpool_postgres::Transaction<'_> {
    async fn copy_in(&self, sql: &str) -> Result<CopyInSink<Bytes>, tokio_postgres::Error> {
        tokio_postgres::Transaction::copy_in(self, sql).await
    }
}

/// Writes a page's rows with `COPY ... FROM STDIN`, the columns of deferred links NULL (they are
/// staged, as for an upsert). Returns the rows written.
pub(super) async fn copy_page(
    tx: &impl PageClient,
    plan: &EntityPlan,
    page: &ReceivedPage,
) -> Result<u64, tokio_postgres::Error> {
    let deferred: Vec<bool> = page
        .columns
        .iter()
        .map(|c| plan.deferred.contains(c))
        .collect();
    // Room for cells of about sixteen bytes: most are shorter, and a longer page grows once or
    // twice instead of every page taking megabytes from the system.
    let mut data = Vec::with_capacity(page.rows.len() * 16 * page.columns.len().max(1));
    let mut fields: Vec<Option<&str>> = Vec::with_capacity(page.columns.len());
    for row in page.rows.iter() {
        fields.clear();
        fields.extend(
            row.iter()
                .zip(&deferred)
                .map(|(v, &later)| if later { None } else { v }),
        );
        bulk::copy_row(&mut data, &fields);
    }
    let sink = tx
        .copy_in(&bulk::copy_in(&plan.table, &page.columns))
        .await?;
    futures_util::pin_mut!(sink);
    sink.send(Bytes::from(data)).await?;
    sink.finish().await
}
