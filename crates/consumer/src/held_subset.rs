//! Which subset a target holds: named on its first run, and a later run that asks for another
//! (or for the whole source, or a subset of a whole copy) is refused before anything is written.

use super::bookkeeping;
use super::target_db::TargetDb;
use super::ConsumerError;

/// How a subset (or its absence) is named in a message.
fn describe(subset: Option<&str>) -> String {
    match subset {
        Some(name) => format!("subset {name:?}"),
        None => "the whole source".to_string(),
    }
}

/// The refusal, when a target holding `held` is asked for `asked`. Pure.
pub(crate) fn conflict(held: Option<&str>, asked: Option<&str>) -> Option<(String, String)> {
    (held != asked).then(|| (describe(held), describe(asked)))
}

/// Records `subset` as what the target `db` holds on its first run; refuses a run that asks
/// for something else later.
pub async fn hold(db: &TargetDb, subset: Option<&str>) -> Result<(), ConsumerError> {
    let client = db.client().await?;
    let failed = |e: tokio_postgres::Error| {
        ConsumerError::from(
            db.target()
                .query_error("reading which subset the target holds", &e),
        )
    };
    // Until a pass has written something, the target holds nothing and may change its mind
    // (a typo in the subset's name, say).
    let synced: bool = client
        .query_one(bookkeeping::ANYTHING_SYNCED, &[])
        .await
        .map_err(failed)?
        .get(0);
    let recorded: Option<Option<String>> = client
        .query_opt(bookkeeping::HELD_SUBSET, &[])
        .await
        .map_err(failed)?
        .map(|row| row.get(0));
    let held = match recorded {
        Some(held) if synced => held,
        // A target synced before subsets were recorded holds the whole source.
        None if synced => None,
        _ => subset.map(str::to_string),
    };
    client
        .execute(bookkeeping::RECORD_SUBSET, &[&held])
        .await
        .map_err(failed)?;
    match conflict(held.as_deref(), subset) {
        None => Ok(()),
        Some((held, asked)) => Err(ConsumerError::OtherSubset {
            database: db.target().dbname().to_string(),
            held,
            asked,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::conflict;

    #[test]
    fn a_target_keeps_the_subset_it_was_made_with() {
        assert_eq!(conflict(Some("tx"), Some("tx")), None);
        assert_eq!(conflict(None, None), None);
        assert_eq!(
            conflict(Some("tx"), None),
            Some(("subset \"tx\"".into(), "the whole source".into()))
        );
        assert!(conflict(None, Some("tx")).is_some());
        assert!(conflict(Some("tx"), Some("ca")).is_some());
    }
}
