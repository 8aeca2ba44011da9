//! The key cursors the producer issues, and the only ones it takes back.
//!
//! A cursor over a masked key (a bijective pseudonym on a key column) leaves the producer with a
//! tag ([`maskbus_mask::cursor_tag`], keyed from the pseudonym key): a page's `next_after`, a
//! range's bounds, a hash reply's `next_after`. When it comes back as `after` or `through`, its
//! tag is checked before the key undoes it ([`crate::source::Source::real_key`]); a cursor
//! without the tag the producer issued is refused as `malformed`, naming the entity, never the
//! value. Undoing any fake it was sent made the producer an oracle of real keys (issue 52).
//!
//! A cursor over a kept key carries no tag: it is the source's own key, which pages send in
//! clear anyway, and undoing it is the identity, so a made-up one tells nothing a page does not
//! (a subset's membership filters the rows whatever the cursor). A tag sent with one is refused:
//! the producer never issued it.

use crate::source::{Refusal, Shape, Source};
use maskbus_mask::cursor_tag;
use maskbus_protocol::{ErrorCode, KeyCursor};

/// The tag of `cursor` over `shape`'s entity: `Some` when its key is masked (and a key is
/// configured, which a masked key needs), `None` over a kept key.
pub(crate) fn tag(source: &Source, shape: &Shape, cursor: &KeyCursor) -> Option<String> {
    let key = source.policy().key().filter(|_| shape.key_masked)?;
    Some(cursor_tag::issue(key, &shape.table.to_string(), cursor))
}

/// [`tag`] of each cursor; empty over a kept key.
pub(crate) fn tags(source: &Source, shape: &Shape, cursors: &[KeyCursor]) -> Vec<String> {
    cursors
        .iter()
        .filter_map(|cursor| tag(source, shape, cursor))
        .collect()
}

/// Whether `cursor`, sent as `which` (`after`, `through`), is one the producer issued: over a
/// masked key, with the tag it was issued with; over a kept key, without one. Refused as
/// `malformed`, by the entity's name, otherwise.
pub(crate) fn admit(
    source: &Source,
    shape: &Shape,
    cursor: Option<&KeyCursor>,
    tag: Option<&str>,
    which: &str,
) -> Result<(), Refusal> {
    let entity = shape.table.to_string();
    let refused = |why: &str| {
        Err(Refusal::new(
            ErrorCode::Malformed,
            format!("the `{which}` cursor of {entity} {why}"),
        )
        .on(&entity))
    };
    match (cursor, tag) {
        (None, None) => Ok(()),
        (None, Some(_)) => refused("is a tag without a cursor"),
        (Some(_), None) if !shape.key_masked => Ok(()),
        (Some(_), None) => refused(
            "comes without its tag: the key is masked, and the producer takes back only the cursors it issued",
        ),
        (Some(cursor), Some(tag)) => {
            let issued = shape.key_masked
                && source
                    .policy()
                    .key()
                    .is_some_and(|key| cursor_tag::is_issued(key, &entity, cursor, tag));
            if issued {
                Ok(())
            } else {
                refused("is not one the producer issued (its tag does not match)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tags_the_producer_issues_have_the_shape_the_protocol_checks() {
        let key = maskbus_mask::PseudonymKey::new(b"cursor shape test");
        let tag = maskbus_mask::cursor_tag::issue(&key, "public.t", &["7".to_string()]);
        assert_eq!(
            maskbus_mask::cursor_tag::TAG_LETTERS,
            maskbus_protocol::CURSOR_TAG_LETTERS
        );
        assert!(maskbus_protocol::is_cursor_tag(&tag), "{tag}");
    }
}
