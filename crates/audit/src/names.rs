//! Names read as names: the identifier of a table, a column, an index or a constraint is not a
//! value, and is judged as one only for what a name can carry.
//!
//! Frameworks append a hash to the names they generate (Django's
//! `account_emailaddress_user_id_2c513194`, an 8-hex-digit digest of the columns): its digits are
//! noise, not a number, and the words before it say what the name is about. A name is read
//! without such segments, under no field's hint but a birth date's, a phone's or a routing
//! number's (a name with `account` in it is no account number for having six digits); an SQL
//! text (an index's or a constraint's definition, a default) has its identifiers read as names
//! and its literals and numbers as values.

use crate::detect::{detect, Detector, Hint};
use crate::normalize::normalize;

/// The fewest characters of a hash-like segment, and the most.
const HASH_MIN: usize = 6;
const HASH_MAX: usize = 64;

/// Whether one segment of an identifier (between `_` or `-`) is a hash a framework appended:
/// 6 to 64 hexadecimal digits of one case, letters and digits both, never more than eight
/// digits in a row (so no SSN, phone or card hides in one).
pub(crate) fn is_hash_like(segment: &str) -> bool {
    let b = segment.as_bytes();
    if !(HASH_MIN..=HASH_MAX).contains(&b.len()) || !b.iter().all(u8::is_ascii_hexdigit) {
        return false;
    }
    let lower = b.iter().any(|c| matches!(c, b'a'..=b'f'));
    let upper = b.iter().any(|c| matches!(c, b'A'..=b'F'));
    let longest_digits = b
        .split(|c| !c.is_ascii_digit())
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    (lower != upper) && b.iter().any(u8::is_ascii_digit) && longest_digits <= 8
}

/// `name` without the hash-like segments at its end: `account_emailaddress_user_id_2c513194`
/// is `account_emailaddress_user_id`. A name that is nothing but such segments stays whole.
pub(crate) fn without_hash_suffix(name: &str) -> &str {
    let mut name = name;
    // Most names have no such suffix: told by their last segment's length and bytes alone.
    while let Some(cut) = name.rfind(['_', '-']) {
        let segment = &name[cut + 1..];
        if cut == 0 || !is_hash_like(segment) {
            break;
        }
        name = &name[..cut];
    }
    name
}

/// The hint a name gives the detectors when it is itself read: a birth date, a phone or a
/// routing number, never an account number or a measure.
fn name_hint(name: &str) -> Hint {
    let of = Hint::of(name);
    Hint {
        birth: of.birth,
        phone: of.phone,
        routing: of.routing,
        ..Hint::NONE
    }
}

/// The first detector that fires on `text` (as written; it is normalized here) under `hint`.
fn first_detector(text: &str, hint: Hint) -> Option<Detector> {
    let mut hits = Vec::new();
    detect(&normalize(text), hint, &mut hits);
    hits.first().map(|h| h.detector)
}

/// The detector that fires on an identifier read as a name (a table's, a column's, an index's,
/// a constraint's, a type's), if any: an SSN, a card, an email, a phone written into it
/// (`ssn_219_09_9999_check`) is found; a hash a framework appended
/// (`account_emailaddress_user_id_2c513194`) is not read, and `account` in a name makes no
/// number in it an account number. What a name cannot be told from by its shape (a customer's
/// surname) is the exact matcher's to find.
pub fn name_looks_like_pii(name: &str) -> Option<Detector> {
    let hint = name_hint(name);
    // The pieces between hash-like segments, each read on its own: a hash dropped from the
    // middle must not join the digits either side of it.
    let mut piece_start = 0;
    let mut at = 0;
    for segment in name.split(['_', '-']) {
        let end = at + segment.len();
        if is_hash_like(segment) {
            if let Some(found) = first_detector(&name[piece_start..at], hint) {
                return Some(found);
            }
            piece_start = (end + 1).min(name.len());
        }
        at = end + 1;
    }
    first_detector(&name[piece_start.min(name.len())..], hint)
}

/// One token of an SQL text.
#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    /// A keyword or an identifier, bare or quoted (quotes removed, `""` read as `"`).
    Name(String),
    /// A string literal (quotes removed, `''` read as `'`).
    Literal(String),
    /// Anything else: numbers, operators, punctuation, spaces, as written.
    Other(&'a str),
}

/// The tokens of an SQL text, as PostgreSQL deparses one: `'literals'`, `"quoted names"`, bare
/// names, and the rest.
fn tokens(sql: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = sql;
    let quoted = |rest: &str, quote: char| -> (String, usize) {
        let mut text = String::new();
        let mut chars = rest.char_indices().skip(1).peekable();
        while let Some((i, c)) = chars.next() {
            if c == quote {
                if chars.peek().is_some_and(|(_, n)| *n == quote) {
                    chars.next();
                    text.push(quote);
                    continue;
                }
                return (text, i + c.len_utf8());
            }
            text.push(c);
        }
        (text, rest.len())
    };
    while let Some(c) = rest.chars().next() {
        let (token, used) = if c == '\'' {
            let (text, used) = quoted(rest, '\'');
            (Token::Literal(text), used)
        } else if c == '"' {
            let (text, used) = quoted(rest, '"');
            (Token::Name(text), used)
        } else if c.is_alphabetic() || c == '_' {
            let used = rest
                .char_indices()
                .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
                .map_or(rest.len(), |(i, _)| i);
            (Token::Name(rest[..used].to_string()), used)
        } else {
            let used = rest
                .char_indices()
                .find(|(_, c)| c.is_alphabetic() || matches!(c, '_' | '\'' | '"'))
                .map_or(rest.len(), |(i, _)| i);
            (Token::Other(&rest[..used]), used)
        };
        out.push(token);
        rest = &rest[used..];
    }
    out
}

/// The detector that fires on an SQL text (an index's or a constraint's definition, a default,
/// a partition bound) read under a field called `field`, if any. Its identifiers are names
/// ([`name_looks_like_pii`]); what is left (literals, numbers, the operators between them) is
/// read as values, whole, each literal alone, and the literals joined (`'219-09-' || '9999'`),
/// under `field`'s hint less any hash suffix. So `CREATE INDEX account_emailaddress_user_id_2c513194
/// ON public.account_emailaddress USING btree (user_id)` is clean under its own name, and
/// `CHECK (ssn <> '219-09-9999'::text)` is an SSN whatever the constraint is called.
pub fn sql_looks_like_pii(field: &str, sql: &str) -> Option<Detector> {
    let tokens = tokens(sql);
    let mut values = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    for token in &tokens {
        match token {
            Token::Name(name) => {
                if let Some(found) = name_looks_like_pii(name) {
                    return Some(found);
                }
                // A `*` ends a run of digits: nothing either side of a name joins across it.
                values.push_str(" * ");
            }
            Token::Literal(text) => {
                values.push_str(text);
                literals.push(text.as_str());
            }
            Token::Other(text) => values.push_str(text),
        }
    }
    let hint = Hint::of(field);
    first_detector(&values, hint)
        .or_else(|| literals.iter().find_map(|l| first_detector(l, hint)))
        .or_else(|| {
            (literals.len() > 1)
                .then(|| first_detector(&literals.concat(), hint))
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_hash_is_no_part_of_a_name() {
        for hashed in [
            "account_emailaddress_user_id_2c513194",
            "account_emailaddress_user_id_2C513194",
            "accounts_number_fk_0a1b2c3d4e5f",
            "account_id_fk_123abc",
        ] {
            assert!(is_hash_like(hashed.rsplit('_').next().unwrap()), "{hashed}");
            assert_eq!(name_looks_like_pii(hashed), None, "{hashed}");
        }
        // Read without its hash, the index's name ends in `id`: a key, not an account number.
        assert!(!Hint::of("account_emailaddress_user_id_2c513194").account);
        assert!(!Hint::of("account_emailaddress_user_id_2C513194").account);
        assert_eq!(
            without_hash_suffix("account_emailaddress_user_id_2c513194"),
            "account_emailaddress_user_id"
        );
        // Not hashes: words, plain numbers, mixed case, and digits an SSN could be.
        for not in [
            "address",
            "12345678",
            "2c5A3194",
            "219099999f",
            "face",
            "deadbeef",
        ] {
            assert!(!is_hash_like(not), "{not}");
        }
        assert_eq!(without_hash_suffix("2c513194"), "2c513194");
        assert!(Hint::of("account_number_2c513194").account);
    }

    #[test]
    fn a_name_still_carries_what_is_written_into_it() {
        assert_eq!(
            name_looks_like_pii("ssn_219_09_9999_check"),
            Some(Detector::Ssn)
        );
        assert_eq!(name_looks_like_pii("chk_219099999"), Some(Detector::Ssn));
        assert_eq!(
            name_looks_like_pii("cust_4111111111111111_idx"),
            Some(Detector::Card)
        );
        assert_eq!(
            name_looks_like_pii("owner_jane.roe@gmail.com"),
            Some(Detector::Email)
        );
        // A hash dropped from the middle joins nothing.
        assert_eq!(name_looks_like_pii("t_224_2c513194_30_8280"), None);
        // `account` in a name makes no six digits an account number.
        assert_eq!(name_looks_like_pii("accounts_idx_12345678"), None);
        for clean in [
            "customers_pkey",
            "transactions_account_id_fkey",
            "idx_2024_01",
        ] {
            assert_eq!(name_looks_like_pii(clean), None, "{clean}");
        }
    }

    #[test]
    fn a_definition_reads_its_names_as_names_and_its_literals_as_values() {
        let name = "account_emailaddress_user_id_2c513194";
        let definition =
            format!("CREATE INDEX {name} ON public.account_emailaddress USING btree (user_id)");
        assert_eq!(sql_looks_like_pii(name, &definition), None);
        assert_eq!(
            sql_looks_like_pii(
                "\"accounts_number_idx_12345678\"",
                "CREATE INDEX \"accounts_number_idx_12345678\" ON public.t USING btree (n)"
            ),
            None
        );
        assert_eq!(
            sql_looks_like_pii("c_check", "CHECK ((ssn <> '219-09-9999'::text))"),
            Some(Detector::Ssn)
        );
        assert_eq!(
            sql_looks_like_pii(
                "c_check",
                "CHECK ((ssn <> ('219-09-'::text || '9999'::text)))"
            ),
            Some(Detector::Ssn)
        );
        assert_eq!(
            sql_looks_like_pii("c_check", "CHECK ((n <> 219099999))"),
            Some(Detector::Ssn)
        );
        assert_eq!(
            sql_looks_like_pii("phone_default", "'(212) 555-0147'::text"),
            Some(Detector::Phone)
        );
        // A name written into a definition is still judged: as a name.
        assert_eq!(
            sql_looks_like_pii("x", "CHECK ((\"ssn_219_09_9999\" IS NOT NULL))"),
            Some(Detector::Ssn)
        );
        assert_eq!(
            tokens("a 'it''s' \"Q\"\"x\" 7"),
            [
                Token::Name("a".into()),
                Token::Other(" "),
                Token::Literal("it's".into()),
                Token::Other(" "),
                Token::Name("Q\"x".into()),
                Token::Other(" 7"),
            ]
        );
    }
}
