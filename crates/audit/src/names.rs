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

/// The role of a string literal in an SQL text, told by its syntactic position: what stands
/// before it (an operator, a keyword) and the function call it is an argument of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A value, compared with a column or given: judged whole.
    Value,
    /// A POSIX regular expression (`~`, `~*`, `!~`, `!~*`, a `regexp_*` function's pattern).
    Regex,
    /// A `LIKE` pattern (`~~` as PostgreSQL prints it, `LIKE`, `ILIKE`).
    Like,
    /// A `SIMILAR TO` pattern (`similar_to_escape(...)` as PostgreSQL prints it).
    Similar,
    /// A format mask (`to_char`, `to_date`, `to_timestamp`, `to_number`).
    Format,
    /// A numeric bound of a range comparison (`<`, `<=`, `>`, `>=`).
    Bound,
}

/// The functions whose second argument is a regular expression.
const REGEX_FUNCTIONS: &[&str] = &[
    "regexp_match",
    "regexp_matches",
    "regexp_replace",
    "regexp_like",
    "regexp_count",
    "regexp_instr",
    "regexp_substr",
    "regexp_split_to_array",
    "regexp_split_to_table",
];

/// The functions whose second argument is a format mask.
const FORMAT_FUNCTIONS: &[&str] = &["to_char", "to_date", "to_timestamp", "to_number"];

/// The operator that ends `text` (spaces and opening parentheses after it skipped): `~`, `<=`.
fn trailing_operator(text: &str) -> &str {
    let text = text.trim_end_matches(|c: char| c.is_whitespace() || c == '(');
    let start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| "~!<>=*".contains(*c))
        .last()
        .map_or(text.len(), |(i, _)| i);
    &text[start..]
}

/// Whether `text` is a number as written (`12`, `-3.5`, `1e9`).
fn is_number(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty() && text.parse::<f64>().is_ok()
}

/// What a pattern says of a value: its fixed characters, every construct that matches more than
/// one thing (a class, a wildcard, a quantifier, an alternation) replaced by a `*` that ends a run
/// of digits, and what matches nothing (an anchor, a group's parentheses) dropped.
/// `^[0-9]{3}-[0-9]{2}-[0-9]{4}$` leaves `-` and `-`; a value written as a pattern leaves the
/// value, however it is spelled: `^219-09-9999$`, `^(219)-[0][9]-9999$`, `\x32\x31\x39...`.
fn pattern_residue(pattern: &str, role: Role) -> String {
    const GAP: &str = " * ";
    let regex = matches!(role, Role::Regex | Role::Similar);
    let like = matches!(role, Role::Like | Role::Similar);
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    // A character written as hexadecimal digits after an escape (`\x32`, `\u0032`).
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, most: usize| {
        let mut value = 0u32;
        let mut read = 0;
        while read < most {
            match chars.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    value = value * 16 + d;
                    chars.next();
                    read += 1;
                }
                None => break,
            }
        }
        char::from_u32(value).filter(|_| read > 0)
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' if regex => match chars.next() {
                // A class escape matches many characters.
                Some('d' | 'D' | 'w' | 'W' | 's' | 'S') => out.push_str(GAP),
                Some('x') => match hex(&mut chars, 8) {
                    Some(c) => out.push(c),
                    None => out.push_str(GAP),
                },
                Some('u') => match hex(&mut chars, 4) {
                    Some(c) => out.push(c),
                    None => out.push_str(GAP),
                },
                Some('U') => match hex(&mut chars, 8) {
                    Some(c) => out.push(c),
                    None => out.push_str(GAP),
                },
                // A back reference or an octal escape: read as a gap.
                Some(e) if e.is_ascii_digit() => out.push_str(GAP),
                // Other letters are anchors and constraint escapes (`\m`, `\y`, `\A`).
                Some(e) if e.is_alphabetic() => {}
                Some(e) => out.push(e),
                None => {}
            },
            '\\' => {
                if let Some(e) = chars.next() {
                    out.push(e);
                }
            }
            '[' if regex => {
                // A bracket expression, up to its closing `]` (one right after `[` or `[^` is a
                // member). One plain member is that character (`[1]` is `1`); more match many.
                let mut members = String::new();
                let mut first = true;
                let mut negated = false;
                while let Some(m) = chars.next() {
                    if m == ']' && !first {
                        break;
                    }
                    if m == '^' && first && !negated {
                        negated = true;
                        continue;
                    }
                    first = false;
                    members.push(m);
                    if m == '\\' {
                        if let Some(e) = chars.next() {
                            members.push(e);
                        }
                    }
                }
                let mut one = members.chars();
                match (one.next(), one.next(), negated) {
                    (Some(m), None, false) if m != '\\' => out.push(m),
                    (Some('\\'), Some(e), false)
                        if one.next().is_none() && !e.is_alphanumeric() =>
                    {
                        out.push(e)
                    }
                    _ => out.push_str(GAP),
                }
            }
            '{' if regex => {
                let mut count = String::new();
                for m in chars.by_ref() {
                    if m == '}' {
                        break;
                    }
                    count.push(m);
                }
                // `{1}` repeats nothing; any other count makes a run of unknown length.
                if count.trim() != "1" {
                    out.push_str(GAP);
                }
            }
            '^' | '$' | '(' | ')' if regex => {}
            '.' | '*' | '+' | '?' | '|' if regex => out.push_str(GAP),
            '%' | '_' if like => out.push_str(GAP),
            c => out.push(c),
        }
    }
    out
}

/// What a format mask says of a value: its characters but the placeholders (letters, `9`, `0`),
/// which say nothing; text in double quotes and an escaped character are printed as written, so
/// they are kept.
fn format_residue(mask: &str) -> String {
    let mut out = String::with_capacity(mask.len());
    let mut chars = mask.chars();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                if let Some(e) = chars.next() {
                    out.push(e);
                }
            }
            c if quoted => out.push(c),
            c if c.is_alphabetic() || c == '9' || c == '0' => out.push_str(" * "),
            c => out.push(c),
        }
    }
    out
}

/// Numbers that are bounds of a range comparison (`> 100000`, `<= 219099999`) replaced by a `*`:
/// a bound is no person's value. Every other number stays as written.
fn without_bounds(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['<', '>']) {
        let op_end = at
            + rest[at..]
                .char_indices()
                .take_while(|(_, c)| "<>=".contains(*c))
                .last()
                .map_or(1, |(i, c)| i + c.len_utf8());
        let op = &rest[at..op_end];
        out.push_str(&rest[..op_end]);
        rest = &rest[op_end..];
        if !matches!(op, "<" | "<=" | ">" | ">=") {
            continue;
        }
        let skip = rest.len() - rest.trim_start_matches([' ', '(']).len();
        let number_len = rest[skip..]
            .char_indices()
            .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && *c == '-'))
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        if number_len > 0
            && rest[skip..skip + number_len]
                .chars()
                .any(|c| c.is_ascii_digit())
        {
            out.push_str(&rest[..skip]);
            out.push_str(" * ");
            rest = &rest[skip + number_len..];
        }
    }
    out.push_str(rest);
    out
}

/// Each literal of `tokens` with its role: see [`Role`].
fn literal_roles(tokens: &[Token<'_>]) -> Vec<Role> {
    // The open parentheses: the function each belongs to, if any, and the argument reached.
    let mut calls: Vec<(Option<String>, usize)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut before_name: Option<String> = None;
    let mut last_other = "";
    let mut roles = Vec::new();
    for token in tokens {
        match token {
            Token::Name(name) => {
                let lower = name.to_lowercase();
                pending = Some(lower.clone());
                before_name = Some(lower);
                last_other = "";
            }
            Token::Other(text) => {
                for c in text.chars() {
                    match c {
                        '(' => calls.push((pending.take(), 0)),
                        ')' => {
                            calls.pop();
                            pending = None;
                        }
                        ',' => {
                            if let Some(top) = calls.last_mut() {
                                top.1 += 1;
                            }
                            pending = None;
                        }
                        c if c.is_whitespace() => {}
                        _ => pending = None,
                    }
                }
                last_other = text;
                if !text.trim().is_empty() {
                    before_name = None;
                }
            }
            Token::Literal(text) => {
                let op = trailing_operator(last_other);
                let call = calls
                    .last()
                    .and_then(|(f, arg)| f.as_deref().map(|f| (f, *arg)));
                let role = match (op, call, before_name.as_deref()) {
                    ("~" | "~*" | "!~" | "!~*", _, _) => Role::Regex,
                    ("~~" | "~~*" | "!~~" | "!~~*", _, _) => Role::Like,
                    ("<" | "<=" | ">" | ">=", _, _) if is_number(text) => Role::Bound,
                    ("", _, Some("like" | "ilike")) => Role::Like,
                    ("", _, Some("to")) => Role::Similar,
                    (_, Some((f, 1)), _) if REGEX_FUNCTIONS.contains(&f) => Role::Regex,
                    (_, Some((f, 0)), _) if f == "similar_to_escape" || f == "similar_escape" => {
                        Role::Similar
                    }
                    (_, Some((f, 1)), _) if FORMAT_FUNCTIONS.contains(&f) => Role::Format,
                    _ => Role::Value,
                };
                roles.push(role);
                pending = None;
                before_name = None;
                last_other = "";
            }
        }
    }
    roles
}

/// The detector that fires on an SQL text (an index's or a constraint's definition, a default,
/// a partition bound) read under a field called `field`, if any. Its identifiers are names
/// ([`name_looks_like_pii`]); what is left (literals, numbers, the operators between them) is
/// read as values, whole, each literal alone, and the literals joined (`'219-09-' || '9999'`),
/// under `field`'s hint less any hash suffix. So `CREATE INDEX account_emailaddress_user_id_2c513194
/// ON public.account_emailaddress USING btree (user_id)` is clean under its own name, and
/// `CHECK (ssn <> '219-09-9999'::text)` is an SSN whatever the constraint is called.
///
/// A literal is judged by its role ([`Role`]): a value compared with a column is judged whole;
/// a pattern (a regular expression, `LIKE`, `SIMILAR TO`) or a format mask by its fixed
/// characters alone (`'^[0-9]{3}-[0-9]{2}-[0-9]{4}$'` says what an SSN looks like, not whose it
/// is; `'^219-09-9999$'` still holds one); a number bounding a range (`amount > 100000000`) is
/// not read. The exact matcher of real values reads the whole text apart from this
/// (the mask crate's guard).
pub fn sql_looks_like_pii(field: &str, sql: &str) -> Option<Detector> {
    let tokens = tokens(sql);
    let roles = literal_roles(&tokens);
    let mut roles = roles.into_iter();
    let mut values = String::with_capacity(sql.len());
    let mut literals: Vec<String> = Vec::new();
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
                let read = match roles.next().unwrap_or(Role::Value) {
                    Role::Value => text.clone(),
                    Role::Bound => " * ".to_string(),
                    Role::Format => format_residue(text),
                    role => pattern_residue(text, role),
                };
                values.push_str(&read);
                literals.push(read);
            }
            Token::Other(text) => values.push_str(&without_bounds(text)),
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

    #[test]
    fn a_pattern_a_format_mask_and_a_range_bound_are_no_person_s_value() {
        for clean in [
            "CHECK ((au_id ~ '^[0-9]{3}-[0-9]{2}-[0-9]{4}$'::text))",
            "CHECK (((au_id)::text ~ '^\\d{3}-\\d{2}-\\d{4}$'::text))",
            "CHECK ((zip ~ '^[0-9]{5}$'::text))",
            "CHECK ((phone ~* '^[0-9]{3} [0-9]{3}-[0-9]{4}$'::text))",
            "CHECK ((ssn ~~ '___-__-____'::text))",
            "CHECK ((ssn ~ similar_to_escape('[0-9]{3}-[0-9]{2}-[0-9]{4}'::text)))",
            "CHECK ((regexp_replace(ssn, '[0-9]{3}-[0-9]{2}-[0-9]{4}'::text, ''::text) = ''::text))",
            "CHECK ((to_char(n, '000-00-0000'::text) <> ''::text))",
            "CHECK (((n > 100000000) AND (n <= 999999999)))",
            "CHECK ((n >= '219099999'::numeric))",
        ] {
            assert_eq!(sql_looks_like_pii("ssn_check", clean), None, "{clean}");
        }
        // A value written as a "pattern" is still a value; so is one compared for equality.
        for leak in [
            "CHECK ((au_id ~ '^219-09-9999$'::text))",
            "CHECK ((au_id !~ '219-09-9999'::text))",
            "CHECK ((ssn ~~ '219-09-9999%'::text))",
            "CHECK ((ssn <> '219-09-9999'::text))",
            "CHECK ((ssn = ANY (ARRAY['219-09-9999'::text, 'x'::text])))",
            "CHECK ((n <> 219099999))",
            "CHECK ((regexp_replace(ssn, 'x'::text, '219-09-9999'::text) <> ''::text))",
            "CHECK ((au_id ~ '^(219)-[0][9]-9{1}999$'::text))",
            "CHECK ((au_id ~ '^\\x32\\x31\\x39-09-9999$'::text))",
            "CHECK ((to_char(n, '\"219-09-9999\"'::text) <> ''::text))",
        ] {
            assert_eq!(
                sql_looks_like_pii("c_check", leak),
                Some(Detector::Ssn),
                "{leak}"
            );
        }
    }
}
