//! The producer's half of `maskbus verify`: hashes of an entity's masked rows by key range.
//!
//! Rows are read in key order, masked by the same masker as pages, and each masked value is
//! printed as the target will print it once stored (cast through its column type on the source,
//! whose schema the target copies): `12.5` in a `numeric(10,2)` is `12.50` there. Then they are
//! hashed ([`maskbus_protocol::digest`]). Only hashes and masked keys leave the producer. With a
//! subset, only the subset's rows are hashed: its target holds nothing else. An entity whose
//! key is masked is hashed by spread: the target's key order is not the source's, so its rows
//! go into buckets by their masked key's hash, which both sides compute whatever their order.

use crate::reply::Reply;
use crate::source::{Refusal, Shape, Source};
use futures_util::StreamExt;
use maskbus_mask::{MaskedCells, Masker, Rule};
use maskbus_pg::statements;
use maskbus_protocol::digest::{hex, spread_of, RowHasher, Tally};
use maskbus_protocol::{
    ErrorCode, HashReply, KeyCursor, RowHash, SpreadBucket, BUCKETS_PER_REPLY, BUCKET_ROWS,
    MAX_PAGE_ROWS, VERSION,
};
use tokio_postgres::types::ToSql;

/// Types whose text output is exactly the text they were given (within their length limit,
/// which masked values are fitted to): a masked value needs no cast to know how it is stored.
fn prints_as_given(sql_type: &str) -> bool {
    sql_type == "text" || sql_type.starts_with("character varying")
}

/// What a hash request asks: `entity`'s masked rows with key above `after` (and up to
/// `through`), in buckets or one hash per row (`per_row`), within `subset` when one is named;
/// for an entity with a masked key, the rows of the spread buckets in `only`.
#[derive(Clone, Debug, Default)]
pub struct HashAsk<'a> {
    pub entity: &'a str,
    pub after: Option<KeyCursor>,
    /// The tags the producer issued with `after` and `through` (over a masked key:
    /// [`crate::cursors`]).
    pub after_tag: Option<String>,
    pub through: Option<KeyCursor>,
    pub through_tag: Option<String>,
    pub per_row: bool,
    pub subset: Option<&'a str>,
    pub only: Vec<u32>,
}

/// Hashes of the rows `ask` names: buckets of [`BUCKET_ROWS`] rows, or one hash per row; for an
/// entity whose key is masked, spread buckets by key hash ([`HashReply::spread`]).
pub async fn answer(source: &Source, ask: HashAsk<'_>) -> Vec<Reply> {
    match try_answer(source, ask).await {
        Ok(reply) => vec![Reply::Hashes(reply)],
        Err(refusal) => vec![refusal.into_reply()],
    }
}

async fn try_answer(source: &Source, ask: HashAsk<'_>) -> Result<HashReply, Refusal> {
    let HashAsk {
        entity,
        after: masked_after,
        after_tag,
        through,
        through_tag,
        per_row,
        subset,
        only,
    } = ask;
    let shape = source.shape(entity).await?;
    let width = shape.key.columns.len();
    if masked_after
        .iter()
        .chain(&through)
        .any(|k| k.len() != width)
    {
        return Err(Refusal::new(
            ErrorCode::Malformed,
            format!("a key cursor of {} has {width} values", shape.table),
        ));
    }
    if shape.key_masked && through.is_some() {
        return Err(Refusal::new(
            ErrorCode::Malformed,
            format!(
                "the key of {} is masked: its rows are hashed by spread, not by key range",
                shape.table
            ),
        )
        .on(&shape.table.to_string()));
    }
    let names = shape.key.names();
    // Only cursors the producer issued are taken back: `through` is a kept key here (a masked
    // one is refused above), read as it is once admitted.
    let after = source.real_key(&shape, &masked_after, &after_tag, "after")?;
    crate::cursors::admit(
        source,
        &shape,
        through.as_ref(),
        through_tag.as_deref(),
        "through",
    )?;
    // The cursor each reply ends at leaves with its tag (over a masked key).
    let issued = |mut reply: HashReply| {
        reply.next_after_tag = reply
            .next_after
            .as_ref()
            .and_then(|key| crate::cursors::tag(source, &shape, key));
        reply
    };
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
    // Taken after the subset's statement, which may take a connection of its own. The stored
    // forms of masked values are asked on the second connection while the first streams rows.
    let (client, printer) = source.two_clients().await?;
    let failed = |e: tokio_postgres::Error| {
        Refusal::from(
            source
                .database()
                .query_error(format!("reading {} to hash it", shape.table), &e),
        )
    };
    let mut reply = HashReply {
        v: VERSION,
        entity: shape.table.to_string(),
        key: names,
        columns: shape.columns.clone(),
        buckets: Vec::new(),
        rows: Vec::new(),
        spread: shape.key_masked,
        spread_buckets: Vec::new(),
        next_after: masked_after.clone(),
        next_after_tag: None,
        more: false,
        part: 0,
        parts: 1,
    };
    if per_row && !shape.key_masked {
        let limit = MAX_PAGE_ROWS as usize;
        let mut fetched = client
            .query(&sql, &[&after, &through, &(limit as i64 + 1)])
            .await
            .map_err(failed)?;
        reply.more = fetched.len() > limit;
        fetched.truncate(limit);
        reply.rows = stored_hashes(source, &printer, &shape, &masker, &fetched)
            .await?
            .into_iter()
            .map(|(key, hash)| RowHash {
                key,
                hash: hex(hash),
            })
            .collect();
        reply.next_after = reply
            .rows
            .last()
            .map(|r| r.key.clone())
            .or(reply.next_after);
        return Ok(issued(reply));
    }
    // One query for the whole reply, read as a stream and hashed a bucket's worth of rows at a
    // time, so memory stays one bucket however large the reply.
    let limit = (BUCKETS_PER_REPLY * BUCKET_ROWS) as i64;
    let params: [&(dyn ToSql + Sync); 3] = [&after, &through, &limit];
    let stream = client
        .query_raw(&sql, params.iter().copied())
        .await
        .map_err(failed)?;
    futures_util::pin_mut!(stream);
    let wanted: std::collections::HashSet<u32> = only.iter().copied().collect();
    let mut spread: std::collections::BTreeMap<u32, Tally> = Default::default();
    let mut batch: Vec<tokio_postgres::Row> = Vec::with_capacity(BUCKET_ROWS);
    let mut read = 0usize;
    loop {
        let next = stream.next().await.transpose().map_err(failed)?;
        let end = next.is_none();
        if let Some(row) = next {
            read += 1;
            batch.push(row);
        }
        if batch.len() == BUCKET_ROWS || (end && !batch.is_empty()) {
            let hashed = stored_hashes(source, &printer, &shape, &masker, &batch).await?;
            batch.clear();
            let last = hashed.last().map(|(key, _)| key.clone());
            if !shape.key_masked {
                let mut tally = Tally::default();
                for (_, hash) in &hashed {
                    tally.add(*hash);
                }
                reply
                    .buckets
                    .push(tally.bucket(last.clone().unwrap_or_default()));
            } else {
                for (key, hash) in hashed {
                    let index = spread_of(key.iter().map(String::as_str));
                    if !per_row {
                        spread.entry(index).or_default().add(hash);
                    } else if wanted.contains(&index) {
                        reply.rows.push(RowHash {
                            key,
                            hash: hex(hash),
                        });
                    }
                }
            }
            reply.next_after = last.or(reply.next_after);
            // Rows of the buckets asked for: a page's worth at most, the rest asked again.
            if reply.rows.len() >= MAX_PAGE_ROWS as usize {
                reply.more = true;
                return Ok(issued(reply));
            }
        }
        if end {
            break;
        }
    }
    reply.more = read as i64 == limit;
    reply.spread_buckets = spread
        .into_iter()
        .map(|(index, tally)| SpreadBucket {
            index,
            count: tally.count,
            hash: hex(tally.sum),
        })
        .collect();
    Ok(issued(reply))
}

/// Each masked row's key (masked, as the target holds it) and hash over its cells as the
/// target prints them once stored: the values of masked columns of types other than text are
/// cast through their type on the source; the rest are hashed as they are. A masked key's
/// cells are written as the masker wrote them (a bijective fake of an integer prints as given).
async fn stored_hashes(
    source: &Source,
    client: &tokio_postgres::Client,
    shape: &Shape,
    masker: &Masker<'_>,
    rows: &[tokio_postgres::Row],
) -> Result<Vec<(KeyCursor, u64)>, Refusal> {
    let entity = shape.table.to_string();
    let width = shape.columns.len();
    let rows = rows
        .iter()
        .map(|row| {
            let cells: Vec<Option<&str>> = (0..width).map(|i| row.get(i)).collect();
            masker.mask_cells(&cells)
        })
        .collect::<Result<Vec<MaskedCells>, _>>()
        .map_err(|e| Refusal::of_mask(e, &entity))?;
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
    let key_of = |row: &MaskedCells| -> KeyCursor {
        shape
            .key_positions
            .iter()
            .map(|&i| row.cells()[i].as_deref().unwrap_or_default().to_string())
            .collect()
    };
    let mut hasher = RowHasher::default();
    if cast.is_empty() || rows.is_empty() {
        return Ok(rows
            .iter()
            .map(|r| {
                (
                    key_of(r),
                    hasher.hash(r.cells().iter().map(Option::as_deref)),
                )
            })
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
                    .database()
                    .query_error(format!("printing masked values of {entity} as stored"), &e),
            )
        })?;
    Ok(rows
        .iter()
        .zip(&printed)
        .map(|(row, printed)| {
            let hash = hasher.hash(row.cells().iter().enumerate().map(|(i, cell)| {
                match cast.iter().position(|&c| c == i) {
                    Some(n) => printed.get::<_, Option<&str>>(n),
                    None => cell.as_deref(),
                }
            }));
            (key_of(row), hash)
        })
        .collect())
}
