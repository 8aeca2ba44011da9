//! The producer's rows by key: the parents a consumer's page needs, fetched by the columns
//! their children reference. Masked like any page. The keys a consumer sends are masked ones
//! (every key that crosses the bus is); they are looked up by columns whose rule the key undoes
//! (`keep`, a bijective pseudonym: [`maskbus_mask::Masker::reveal`]) and nothing else.

use crate::page_cut::PageCut;
use crate::reply::{PageReply, Reply};
use crate::source::{Refusal, Source};
use maskbus_pg::statements;
use maskbus_protocol::{ErrorCode, MAX_PAGES_PER_REQUEST, MAX_PAGE_ROWS, VERSION};

/// Which values a lookup was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeysAre {
    /// As they crossed the bus (masked): turned back into the source's values first.
    Masked,
    /// The source's own (the change stream's, read from the WAL).
    Source,
}

/// Specific rows whose `columns` equal one of `keys` (parents a consumer's page needs, as the
/// consumer holds them: masked), masked. Only columns whose rule can be undone can be looked
/// up: a lookup by a lossy masked column would let the asker test guesses of the real values,
/// while a bijective fake tells nothing without the key.
pub async fn answer(
    source: &Source,
    entity: &str,
    columns: &[String],
    keys: &[Vec<String>],
) -> Vec<Reply> {
    lookup(source, entity, columns, keys, KeysAre::Masked).await
}

/// [`answer`] for keys given as `are`.
pub(crate) async fn lookup(
    source: &Source,
    entity: &str,
    columns: &[String],
    keys: &[Vec<String>],
    are: KeysAre,
) -> Vec<Reply> {
    let result = async {
        let shape = source.shape(entity).await?;
        let entity = shape.table.to_string();
        let mut lookup = Vec::with_capacity(columns.len());
        for column in columns {
            let undone = source
                .policy()
                .entity(&entity)
                .and_then(|e| e.rule(column))
                .is_some_and(|r| r.fits_a_key());
            match shape.types.get(column) {
                Some(ty) if undone => lookup.push((column.clone(), ty.clone())),
                _ => {
                    return Err(Refusal::new(
                        ErrorCode::PolicyRefused,
                        format!(
                            "{entity} rows can be looked up by its kept columns and those with a bijective rule only, not by {}",
                            maskbus_mask::shorten(column)
                        ),
                    ))
                }
            }
        }
        let revealed;
        let keys = match are {
            KeysAre::Source => keys,
            KeysAre::Masked => {
                revealed = source.real_keys(&shape, columns, keys)?;
                &revealed[..]
            }
        };
        let sql = statements::rows_by(&shape.table, &shape.key, &shape.columns, &lookup);
        let arrays: Vec<Vec<&str>> = (0..columns.len())
            .map(|i| keys.iter().map(|k| k[i].as_str()).collect())
            .collect();
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = arrays
            .iter()
            .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let client = source.client().await?;
        // Cut by bytes like any page; rows that do not fit are left out and the last part
        // says `more`, so the consumer asks again for the keys it did not get.
        let (chunks, keys, left, _) = source
            .masked_pages(
                &shape,
                &client,
                &sql,
                &params,
                PageCut::new(
                    MAX_PAGE_ROWS as usize,
                    MAX_PAGES_PER_REQUEST as usize,
                    shape.key_positions.clone(),
                ),
                &format!("reading rows of {entity} by key"),
            )
            .await?;
        let parts = chunks.len() as u32;
        Ok::<_, Refusal>(
            chunks
                .into_iter()
                .zip(keys.into_iter().map(Some).chain(std::iter::repeat(None)))
                .enumerate()
                .map(|(part, (rows, next_after))| PageReply {
                    v: VERSION,
                    entity: entity.clone(),
                    key: shape.key.names(),
                    columns: shape.columns.clone(),
                    rows,
                    next_after,
                    // Rows by key are not read on from a cursor: none is issued.
                    next_after_tag: None,
                    more: left && part as u32 + 1 == parts,
                    since: None,
                    until: None,
                    part: part as u32,
                    parts,
                })
                .collect::<Vec<_>>(),
        )
    }
    .await;
    match result {
        Ok(pages) => pages.into_iter().map(Reply::Page).collect(),
        Err(refusal) => vec![refusal.into_reply()],
    }
}
