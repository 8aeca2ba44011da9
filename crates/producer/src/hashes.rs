//! The producer's half of `maskbus verify`: hashes of an entity's masked rows by key range.
//!
//! Rows are read in key order, masked by the same masker as pages, and each masked value is
//! printed as the target will print it once stored (cast through its column type on the source,
//! whose schema the target copies): `12.5` in a `numeric(10,2)` is `12.50` there. Then they are
//! hashed ([`maskbus_protocol::digest`]). Only hashes and keys (which are `keep`) leave the producer. With a
//! subset, only the subset's rows are hashed: its target holds nothing else.

use crate::reply::Reply;
use crate::source::{Refusal, Shape, Source};
use futures_util::StreamExt;
use maskbus_mask::{MaskedCells, Masker, Rule};
use maskbus_pg::statements;
use maskbus_protocol::digest::{hex, RowHasher, Tally};
use maskbus_protocol::{
    ErrorCode, HashReply, KeyCursor, RowHash, BUCKETS_PER_REPLY, BUCKET_ROWS, MAX_PAGE_ROWS,
    VERSION,
};
use tokio_postgres::types::ToSql;

/// Types whose text output is exactly the text they were given (within their length limit,
/// which masked values are fitted to): a masked value needs no cast to know how it is stored.
fn prints_as_given(sql_type: &str) -> bool {
    sql_type == "text" || sql_type.starts_with("character varying")
}

/// Hashes of `entity`'s masked rows with key above `after` (and up to `through`): buckets of
/// [`BUCKET_ROWS`] rows, or one hash per row with `per_row`.
pub async fn answer(
    source: &Source,
    entity: &str,
    after: Option<KeyCursor>,
    through: Option<KeyCursor>,
    per_row: bool,
    subset: Option<&str>,
) -> Vec<Reply> {
    match try_answer(source, entity, after, through, per_row, subset).await {
        Ok(reply) => vec![Reply::Hashes(reply)],
        Err(refusal) => vec![refusal.into_reply()],
    }
}

async fn try_answer(
    source: &Source,
    entity: &str,
    after: Option<KeyCursor>,
    through: Option<KeyCursor>,
    per_row: bool,
    subset: Option<&str>,
) -> Result<HashReply, Refusal> {
    let shape = source.shape(entity).await?;
    let width = shape.key.columns.len();
    if after.iter().chain(&through).any(|k| k.len() != width) {
        return Err(Refusal::new(
            ErrorCode::Malformed,
            format!("a key cursor of {} has {width} values", shape.table),
        ));
    }
    let client = source.client().await?;
    // The stored forms of masked values are asked on a second connection while the first
    // streams rows.
    let printer = source.client().await?;
    let masker = source.masker(&shape)?;
    let range = |filter: &str| {
        statements::key_range(
            &shape.table,
            &shape.key,
            &shape.columns,
            after.is_some(),
            through.is_some(),
            filter,
        )
    };
    let sql = match subset {
        Some(name) => {
            source
                .subsets(name)?
                .in_subset(source, name, &shape.table, range)
                .await?
        }
        None => None,
    }
    .unwrap_or_else(|| range("true"));
    let failed = |e: tokio_postgres::Error| {
        Refusal::from(
            source
                .target()
                .query_error(format!("reading {} to hash it", shape.table), &e),
        )
    };
    let key_of = |row: &tokio_postgres::Row| -> KeyCursor {
        shape
            .key_positions
            .iter()
            .map(|&i| row.get::<_, Option<String>>(i).unwrap_or_default())
            .collect()
    };
    let mut reply = HashReply {
        v: VERSION,
        entity: shape.table.to_string(),
        key: shape.key.names(),
        columns: shape.columns.clone(),
        buckets: Vec::new(),
        rows: Vec::new(),
        next_after: after.clone(),
        more: false,
        part: 0,
        parts: 1,
    };
    if per_row {
        let limit = MAX_PAGE_ROWS as usize;
        let mut fetched = client
            .query(&sql, &[&after, &through, &(limit as i64 + 1)])
            .await
            .map_err(failed)?;
        reply.more = fetched.len() > limit;
        fetched.truncate(limit);
        let hashes = stored_hashes(source, &printer, &shape, &masker, &fetched).await?;
        reply.rows = fetched
            .iter()
            .zip(hashes)
            .map(|(row, hash)| RowHash {
                key: key_of(row),
                hash: hex(hash),
            })
            .collect();
        reply.next_after = reply
            .rows
            .last()
            .map(|r| r.key.clone())
            .or(reply.next_after);
        return Ok(reply);
    }
    // The buckets: one query for the whole reply, read as a stream and hashed a bucket at
    // a time, so memory stays one bucket however large the reply.
    let limit = (BUCKETS_PER_REPLY * BUCKET_ROWS) as i64;
    let params: [&(dyn ToSql + Sync); 3] = [&after, &through, &limit];
    let stream = client
        .query_raw(&sql, params.iter().copied())
        .await
        .map_err(failed)?;
    futures_util::pin_mut!(stream);
    let mut bucket: Vec<tokio_postgres::Row> = Vec::with_capacity(BUCKET_ROWS);
    let mut read = 0usize;
    loop {
        let next = stream.next().await.transpose().map_err(failed)?;
        let end = next.is_none();
        if let Some(row) = next {
            read += 1;
            bucket.push(row);
        }
        if bucket.len() == BUCKET_ROWS || (end && !bucket.is_empty()) {
            let mut tally = Tally::default();
            for hash in stored_hashes(source, &printer, &shape, &masker, &bucket).await? {
                tally.add(hash);
            }
            let last = bucket.last().map(key_of).unwrap_or_default();
            reply.buckets.push(tally.bucket(last.clone()));
            reply.next_after = Some(last);
            bucket.clear();
        }
        if end {
            break;
        }
    }
    reply.more = read as i64 == limit;
    Ok(reply)
}

/// Each masked row's hash over its cells as the target prints them once stored: the values
/// of masked columns of types other than text are cast through their type on the source;
/// the rest are hashed as they are.
async fn stored_hashes(
    source: &Source,
    client: &tokio_postgres::Client,
    shape: &Shape,
    masker: &Masker<'_>,
    rows: &[tokio_postgres::Row],
) -> Result<Vec<u64>, Refusal> {
    let entity = shape.table.to_string();
    let width = shape.columns.len();
    let rows = rows
        .iter()
        .map(|row| {
            let cells: Vec<Option<&str>> = (0..width).map(|i| row.get(i)).collect();
            masker.mask_cells(&cells)
        })
        .collect::<Result<Vec<MaskedCells>, _>>()
        .map_err(|e| Refusal::new(ErrorCode::PolicyRefused, e.to_string()))?;
    let rules = source.policy().entity(&entity);
    // Text and varchar print what they were given: only other types are cast.
    let cast: Vec<usize> = (0..shape.columns.len())
        .filter(|&i| rules.and_then(|e| e.rule(&shape.columns[i])) != Some(&Rule::Keep))
        .filter(|&i| {
            !shape
                .types
                .get(&shape.columns[i])
                .is_some_and(|t| prints_as_given(t))
        })
        .collect();
    let mut hasher = RowHasher::default();
    if cast.is_empty() || rows.is_empty() {
        return Ok(rows
            .iter()
            .map(|r| hasher.hash(r.cells().iter().map(Option::as_deref)))
            .collect());
    }
    let types: Vec<&str> = cast
        .iter()
        .map(|&i| {
            shape
                .types
                .get(&shape.columns[i])
                .map_or("text", String::as_str)
        })
        .collect();
    let arrays: Vec<Vec<Option<&str>>> = cast
        .iter()
        .map(|&i| rows.iter().map(|r| r.cells()[i].as_deref()).collect())
        .collect();
    let params: Vec<&(dyn ToSql + Sync)> =
        arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
    let printed = client
        .query(&statements::as_stored(&types), &params)
        .await
        .map_err(|e| {
            Refusal::from(
                source
                    .target()
                    .query_error(format!("printing masked values of {entity} as stored"), &e),
            )
        })?;
    Ok(rows
        .iter()
        .zip(&printed)
        .map(|(row, printed)| {
            hasher.hash(row.cells().iter().enumerate().map(|(i, cell)| {
                match cast.iter().position(|&c| c == i) {
                    Some(n) => printed.get::<_, Option<&str>>(n),
                    None => cell.as_deref(),
                }
            }))
        })
        .collect())
}
