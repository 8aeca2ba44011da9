//! Tags on the key cursors the producer issues, so that it takes back only its own.
//!
//! A key that crosses the bus is masked; when a consumer sends one back as a cursor (`after`,
//! `through`), the producer undoes it with the key to find its place in the source's key order.
//! Undoing any value it is sent would answer "which row follows the real value of this fake?"
//! for fakes no row ever had: sending every fake of a short key tells the real value of each
//! (issue 52). So every cursor over a masked key leaves the producer with a tag, a keyed hash of
//! the entity and the cursor's values, and comes back only with it: a cursor the producer never
//! issued is refused before anything is undone.
//!
//! The tag's key is derived from the pseudonym key for this use alone (BLAKE3 `derive_key`,
//! context `maskbus cursor v1`): a tag tells nothing of the key nor of any fake, and a new key
//! makes every old tag invalid, as it makes every masked key another. The tag does not name the
//! window or the cursor's role: the same key is `next_after` of one page, a range's `through`,
//! and the `after` of the next range, and a watermark outlives its window. An issued cursor is
//! the masked key of a row the producer served, whose place in the key order the consumer saw
//! when it was served; it tells nothing more when sent back.
//!
//! Pure, as the rest of the crate: the key never leaves it, only tags do.

use crate::pseudonym::PseudonymKey;

/// The letters of a tag on the wire: 128 bits, four to a letter `a` to `p` (as the protocol
/// writes hashes and positions: never a run of digits the wire audit could read as an SSN or a
/// card).
pub const TAG_LETTERS: usize = 32;

/// The tag of `cursor` (masked key values, in key column order) over `entity` (`schema.table`).
pub fn issue(key: &PseudonymKey, entity: &str, cursor: &[String]) -> String {
    let mac = mac(key, entity, cursor);
    mac[..TAG_LETTERS / 2]
        .iter()
        .flat_map(|b| [b >> 4, b & 0xF])
        .map(|nibble| char::from(b'a' + nibble))
        .collect()
}

/// Whether `tag` is the one [`issue`] gives `cursor` over `entity`: compared in constant time.
pub fn is_issued(key: &PseudonymKey, entity: &str, cursor: &[String], tag: &str) -> bool {
    let expected = issue(key, entity, cursor);
    tag.len() == expected.len()
        && tag
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// The keyed hash of the entity and each value, each prefixed by its length (so no two
/// cursors, of any widths, hash the same input).
fn mac(key: &PseudonymKey, entity: &str, cursor: &[String]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new_keyed(&key.cursor_key());
    let mut part = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(entity.as_bytes());
    part(&(cursor.len() as u64).to_le_bytes());
    for value in cursor {
        part(value.as_bytes());
    }
    *hasher.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn a_tag_is_letters_and_is_taken_back_only_for_its_own_cursor_entity_and_key() {
        let key = PseudonymKey::new(b"cursor tag test key");
        let tag = issue(&key, "public.accounts", &cursor(&["4821"]));
        assert_eq!(tag.len(), TAG_LETTERS);
        assert!(tag.bytes().all(|b| (b'a'..=b'p').contains(&b)), "{tag}");
        assert!(is_issued(&key, "public.accounts", &cursor(&["4821"]), &tag));
        for (entity, values) in [
            ("public.accounts", cursor(&["4822"])),
            ("public.notes", cursor(&["4821"])),
            ("public.accounts", cursor(&["4821", ""])),
            ("public.accounts", cursor(&["48", "21"])),
        ] {
            assert!(
                !is_issued(&key, entity, &values, &tag),
                "{entity} {values:?}"
            );
        }
        let other = PseudonymKey::new(b"another key altogether");
        assert!(!is_issued(
            &other,
            "public.accounts",
            &cursor(&["4821"]),
            &tag
        ));
        for forged in ["", "a", &tag[1..], &format!("{tag}a"), &tag.to_uppercase()] {
            assert!(!is_issued(
                &key,
                "public.accounts",
                &cursor(&["4821"]),
                forged
            ));
        }
    }

    #[test]
    fn every_cursor_has_its_own_tag() {
        let key = PseudonymKey::new(b"cursor tag test key");
        let tags: std::collections::HashSet<String> = (0..1000)
            .map(|n| issue(&key, "public.accounts", &cursor(&[&format!("{n:03}")])))
            .collect();
        assert_eq!(tags.len(), 1000);
    }
}
