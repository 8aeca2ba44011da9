//! Where a large table splits into key ranges that the consumer reads side by side, each range
//! its own stream of page requests (`through` its last key) within one window.
//!
//! The bounds are keys of rows sampled from the table (`TABLESAMPLE SYSTEM`, whole pages, a
//! hundred or so rows per range), in the source's key order, each masked with the rest of its
//! row: a bound is a masked key like every cursor, issued with its tag (`crate::cursors`), and
//! comes back with it to be undone by `Source::real_key`. A masked key's order is not the
//! source's, so the ranges are in the source's order and only the producer can tell where a
//! row falls; the consumer never needs to.
//! The split needs no snapshot of its own: every range is read in the same window (`until`),
//! which decides which rows belong to the pass, and a bound is only a place in the key order.

use crate::page_cut::cursor_of;
use crate::reply::Reply;
use crate::source::{Refusal, Source};
use maskbus_pg::statements;
use maskbus_protocol::{
    KeyCursor, RangesReply, Snapshot, MAX_KEY_VALUE_BYTES, MAX_STREAMS, VERSION,
};

/// Rows sampled per range: enough that ranges come out within a few percent of equal.
const SAMPLED_PER_RANGE: f64 = 100.0;

/// What a consumer asks: `entity` in at most `streams` ranges of at least `min_rows` rows.
pub(crate) struct RangeAsk<'a> {
    pub entity: &'a str,
    pub until: Option<Snapshot>,
    pub streams: u32,
    pub min_rows: u32,
}

/// The ranges reply, or one error reply.
pub(crate) async fn answer(source: &Source, ask: RangeAsk<'_>) -> Vec<Reply> {
    match try_answer(source, ask).await {
        Ok(reply) => vec![Reply::Ranges(reply)],
        Err(refusal) => vec![refusal.into_reply()],
    }
}

/// The fewest pages sampled: `TABLESAMPLE SYSTEM` takes whole pages, so a sample of a few
/// pages is a few runs of neighbouring keys (or, on a small table, none at all).
const MIN_SAMPLED_PAGES: f64 = 64.0;

/// The most rows sampled, whatever the estimates say.
const MOST_SAMPLED: i64 = 20_000;

/// The percent of the table's pages to sample for `ranges` ranges: about
/// [`SAMPLED_PER_RANGE`] rows a range, and at least [`MIN_SAMPLED_PAGES`] pages.
fn sample_percent(rows: f64, pages: f64, ranges: u32) -> f64 {
    let for_rows = 100.0 * SAMPLED_PER_RANGE * f64::from(ranges) / rows.max(1.0);
    let for_pages = 100.0 * MIN_SAMPLED_PAGES / pages.max(1.0);
    for_rows.max(for_pages).clamp(0.0001, 100.0)
}

/// How many ranges `rows` (an estimate) make, at most `streams`, each of at least `min_rows`.
fn ranges_for(rows: f64, streams: u32, min_rows: u32) -> u32 {
    let fit = (rows / f64::from(min_rows.max(1))).floor();
    if fit.is_finite() && fit >= 1.0 {
        (fit.min(f64::from(streams.min(MAX_STREAMS)))) as u32
    } else {
        1
    }
}

/// The `ranges - 1` bounds among `sampled` keys (in key order): the keys at equal steps,
/// each once.
fn pick_bounds(sampled: Vec<KeyCursor>, ranges: u32) -> Vec<KeyCursor> {
    let ranges = ranges as usize;
    if ranges < 2 || sampled.len() < ranges {
        return Vec::new();
    }
    let mut bounds: Vec<KeyCursor> = (1..ranges)
        .map(|i| sampled[i * sampled.len() / ranges].clone())
        .collect();
    bounds.dedup();
    bounds
}

async fn try_answer(source: &Source, ask: RangeAsk<'_>) -> Result<RangesReply, Refusal> {
    let shape = source.shape(ask.entity).await?;
    let entity = shape.table.to_string();
    let until = match ask.until {
        Some(until) => until,
        None => source.snapshot().await?,
    };
    let client = source.client().await?;
    let failed = |e: tokio_postgres::Error| {
        Refusal::from(
            source
                .database()
                .query_error(format!("splitting {entity} into ranges"), &e),
        )
        .on(&entity)
    };
    // Never vacuumed nor analyzed: the planner does not know yet, and a count would read the
    // whole table on production; the table is read in one range.
    let size = client
        .query_one(
            statements::ESTIMATED_SIZE,
            &[&shape.table.schema, &shape.table.name],
        )
        .await
        .map_err(failed)?;
    let rows: f64 = size.get::<_, Option<f64>>(0).unwrap_or(-1.0);
    let pages: f64 = size.get::<_, Option<f64>>(1).unwrap_or(0.0);
    let ranges = ranges_for(rows, ask.streams, ask.min_rows);
    let mut bounds = Vec::new();
    if ranges > 1 {
        let percent = sample_percent(rows, pages, ranges);
        let sql = statements::sampled_in_key_order(&shape.table, &shape.key, &shape.columns);
        // An estimate far too small (a table grown since it was analyzed) must not read it.
        let most = MOST_SAMPLED;
        let sampled = client
            .query(&sql, &[&percent, &most])
            .await
            .map_err(failed)?;
        let masker = source.masker(&shape)?;
        let mut keys = Vec::with_capacity(sampled.len());
        for row in sampled {
            let values: Vec<Option<String>> =
                (0..shape.columns.len()).map(|i| row.get(i)).collect();
            let masked = masker
                .mask(values)
                .map_err(|e| Refusal::of_mask(e, &entity))?;
            keys.push(cursor_of(&masked, &shape.key_positions));
        }
        bounds = pick_bounds(keys, ranges);
        // A bound too long to travel as a cursor: the table is read in one range.
        if bounds
            .iter()
            .any(|b| b.iter().map(String::len).sum::<usize>() > MAX_KEY_VALUE_BYTES)
        {
            bounds.clear();
        }
    }
    Ok(RangesReply {
        v: VERSION,
        entity,
        until,
        bound_tags: crate::cursors::tags(source, &shape, &bounds),
        bounds,
        rows: rows.max(0.0) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_splits_into_ranges_of_at_least_min_rows_and_at_most_streams() {
        assert_eq!(ranges_for(1_000_000.0, 4, 50_000), 4);
        assert_eq!(ranges_for(120_000.0, 4, 50_000), 2);
        assert_eq!(ranges_for(49_999.0, 4, 50_000), 1);
        assert_eq!(ranges_for(-1.0, 4, 50_000), 1);
        assert_eq!(ranges_for(f64::NAN, 4, 50_000), 1);
        assert_eq!(ranges_for(1e12, 1000, 1), MAX_STREAMS);
        assert_eq!(ranges_for(10.0, 4, 0), 4);
    }

    #[test]
    fn a_sample_takes_enough_rows_and_enough_pages() {
        // A small table is sampled whole; a large one by rows, or by pages if its rows are few
        // to a page.
        assert_eq!(sample_percent(1_200.0, 8.0, 4), 100.0);
        assert!((sample_percent(1_000_000.0, 10_000.0, 4) - 0.64).abs() < 1e-9);
        assert!((sample_percent(1_000_000.0, 100.0, 4) - 64.0).abs() < 1e-9);
        assert!((sample_percent(100_000_000.0, 1_000_000.0, 4) - 0.0064).abs() < 1e-9);
        assert_eq!(sample_percent(0.0, 0.0, 2), 100.0);
    }

    #[test]
    fn bounds_are_at_equal_steps_of_the_sample_each_once() {
        let keys = |n: usize| (0..n).map(|i| vec![format!("{i:03}")]).collect::<Vec<_>>();
        assert_eq!(
            pick_bounds(keys(100), 4),
            vec![
                vec!["025".to_string()],
                vec!["050".into()],
                vec!["075".into()]
            ]
        );
        assert!(
            pick_bounds(keys(3), 4).is_empty(),
            "too few sampled rows: one range"
        );
        assert!(pick_bounds(keys(100), 1).is_empty());
        let same = vec![vec!["a".to_string()]; 10];
        assert_eq!(pick_bounds(same, 4).len(), 1);
    }
}
