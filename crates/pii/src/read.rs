//! Text read as a person reads it: the one reading the masker's `scrub` and the wire audit share.
//!
//! A string is first *read* ([`read`], [`Reading`]): format characters (zero-width spaces and
//! joiners, soft hyphens, bidi marks) are dropped, each character is NFKC-folded (full-width
//! `４`, superscript `²`, circled `①`, mathematical `𝟐`, ligatures), and every remaining decimal
//! digit of any script is written as its ASCII digit. The reading remembers which character of
//! the original each of its characters came from, so a masker decides on the reading and replaces
//! in the original.
//!
//! Then the reading is cut into [`DigitRun`]s ([`digit_runs`]): digit groups joined by what a
//! reader skips between the parts of one number, namely one to four characters that are neither
//! letters, digits nor `@` (`224-30-8280`, `224\n30\n8280`, `224 -- 30 -- 8280`, `224*30*8280`),
//! up to fourteen when all but three are spaces and line breaks, an `x` (`224x30x8280`), or a joining word or a month name
//! between spaces (`224-30 and 8280`, `23 Jul 1984`). Masked values never add up to a number:
//! their stars come in runs too long to join (`4111 **** **** 1234`). And into [`EmailSpan`]s ([`emails`]): every `@` with the local part before it
//! (quoted or not) and the host after it (with or without a dot).

use std::borrow::Cow;
use std::ops::Range;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// A text as read, with the original character each read character came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    chars: Vec<char>,
    origin: Vec<usize>,
}

impl Reading {
    /// Reads `text` ([`read_char`] for each character, format characters dropped).
    pub fn of(text: &str) -> Self {
        let original: Vec<char> = text.chars().collect();
        let mut chars = Vec::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < original.len() {
            // An at sign written as an entity, an escape or a word (`&#64;`, `&commat;`, `%40`,
            // `(at)`) reads as one.
            if let Some(len) = encoded_at(&original[i..]) {
                chars.push('@');
                origin.push(i);
                i += len;
                continue;
            }
            read_char(original[i], |r| {
                chars.push(r);
                origin.push(i);
            });
            i += 1;
        }
        Reading { chars, origin }
    }

    /// The read characters.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// The index (in characters) of the original character that read character `at` came from.
    pub fn origin(&self, at: usize) -> usize {
        self.origin.get(at).copied().unwrap_or(usize::MAX)
    }
}

/// How one character reads: nothing for a format character, else its NFKC form with every
/// decimal digit as ASCII.
pub fn read_char(c: char, mut emit: impl FnMut(char)) {
    if c.is_ascii() {
        return emit(c);
    }
    if unseen(c) {
        return;
    }
    // A numeral NFKC would spell otherwise (`㈣` is `(四)`) reads as its digit first.
    if let Some(d) = crate::decimal_value(c) {
        return emit(char::from(b'0' + d));
    }
    for folded in std::iter::once(c).nfkc() {
        if unseen(folded) {
            continue;
        }
        emit(match crate::decimal_value(folded) {
            Some(d) => char::from(b'0' + d),
            // A modifier letter drawn as a dash or a bar (`ـ`, `ー`, `ˍ`) reads as a separator,
            // and so does the Hangul vowel drawn as one (`ㅡ`, folded to `ᅳ`).
            None if folded.general_category() == GeneralCategory::ModifierLetter => '-',
            None if folded == '\u{1173}' => '-',
            None => folded,
        });
    }
}

/// Characters a reader does not see: format characters (zero-width spaces and joiners, bidi
/// marks), combining marks on their own or stacked on a digit, and the Hangul fillers and the
/// blank braille pattern that draw as nothing.
fn unseen(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Format
            | GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    ) || matches!(
        c,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// How many characters at the start of `text` spell an at sign: `&#64;`, `&#x40;`, `&commat;`,
/// `%40`, `\u0040`, or the word in brackets (`(at)`, `[at]`, `{at}`, any case).
fn encoded_at(text: &[char]) -> Option<usize> {
    let first = *text.first()?;
    if !matches!(first, '&' | '%' | '\\' | '(' | '[' | '{') {
        return None;
    }
    let head: String = text.iter().take(9).collect::<String>().to_ascii_lowercase();
    [
        "&#64;", "&#064;", "&#0064;", "&#x40;", "&#x0040;", "&commat;", "%40", "\\u0040", "(at)",
        "[at]", "{at}",
    ]
    .iter()
    .find(|form| head.starts_with(*form))
    .map(|form| form.chars().count())
}

/// Whether `text` holds an at sign written otherwise ([`Reading::of`] reads it as one): most
/// text has no `&`, `%`, backslash or closing bracket, told by vectorised scans.
pub fn has_encoded_at(text: &str) -> bool {
    let special = memchr::memchr3(b'&', b'%', b'\\', text.as_bytes()).is_some();
    (special
        && ["&#", "&commat;", "%40", "\\u0040"]
            .iter()
            .any(|form| text.contains(form)))
        || has_at_word(text)
}

/// Whether `text` holds an at sign written as a word in brackets (`(at)`, `[AT]`): told by a
/// vectorised scan for the closing brackets.
fn has_at_word(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr3_iter(b')', b']', b'}', bytes).any(|end| {
        end >= 3
            && bytes[end - 2..end].eq_ignore_ascii_case(b"at")
            && matches!(
                (bytes[end - 3], bytes[end]),
                (b'(', b')') | (b'[', b']') | (b'{', b'}')
            )
    })
}

/// The text as read ([`Reading`]); ASCII without an encoded at sign is returned as it is.
pub fn read(text: &str) -> Cow<'_, str> {
    let ascii = text.is_ascii();
    let encoded = has_encoded_at(text);
    if ascii && !encoded {
        return Cow::Borrowed(text);
    }
    if encoded {
        return Cow::Owned(Reading::of(text).chars().iter().collect());
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        read_char(c, |r| out.push(r));
    }
    Cow::Owned(out)
}

/// A run of digit groups in a read text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigitRun {
    /// The digits, ASCII, without what joined them.
    pub digits: String,
    /// How many digits each group has.
    pub groups: Vec<usize>,
    /// What stood between the groups (`-`, ` and `, `x`).
    pub separators: Vec<String>,
    /// The run covers the whole text (nothing but separators around it).
    pub whole: bool,
    /// Where the run stands, in characters (bytes when the text is ASCII) of the read text.
    pub span: Range<usize>,
}

/// A character that may stand between the digit groups of one number.
pub fn is_separator(c: char) -> bool {
    !c.is_alphanumeric() && c != '@'
}

/// Words that may stand between the digit groups of one number written out, and the month
/// names that make two groups a date (`23 Jul 1984`, `July 23, 1984`).
const JOINING_WORDS: &[&str] = &[
    "and",
    "then",
    "dash",
    "hyphen",
    "plus",
    "next",
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];

/// The longest joining word, in characters.
const LONGEST_WORD: usize = 9;

/// The month (1 to 12) a word names, in any case, full or abbreviated.
pub fn month_of(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = word.to_ascii_lowercase();
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    (1..=12u32).find(|&m| {
        let i = (m - 1) as usize;
        lower == MONTHS[i] || lower == full[i] || (m == 9 && lower == "sept")
    })
}

/// Splits a read text into digit runs.
pub fn digit_runs(text: &str) -> Vec<DigitRun> {
    if text.is_ascii() {
        // Most text is ASCII: read its bytes in place instead of copying out its characters.
        runs_of(text.as_bytes())
    } else {
        runs_of(&text.chars().collect::<Vec<char>>())
    }
}

/// [`digit_runs`] over characters (or ASCII bytes).
pub fn runs_of<C: Copy + Into<char>>(text: &[C]) -> Vec<DigitRun> {
    let at = |i: usize| -> char { text[i].into() };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if !at(i).is_ascii_digit() {
            i += 1;
            continue;
        }
        let run_start = i;
        let mut run = DigitRun {
            digits: String::new(),
            groups: Vec::new(),
            separators: Vec::new(),
            whole: false,
            span: 0..0,
        };
        loop {
            let group_start = i;
            while i < text.len() && at(i).is_ascii_digit() {
                run.digits.push(at(i));
                i += 1;
            }
            run.groups.push(i - group_start);
            match next_group(text, i) {
                Some(next) => {
                    run.separators.push((i..next).map(at).collect());
                    i = next;
                }
                None => break,
            }
        }
        run.span = run_start..i;
        let before_is_clean = (0..run_start).all(|j| is_separator(at(j)));
        let after_is_clean = (i..text.len()).all(|j| is_separator(at(j)));
        run.whole = before_is_clean && after_is_clean;
        runs.push(run);
    }
    runs
}

/// Where the digit group after one ending at `i` starts, when something a reader skips joins
/// them (see the module doc).
fn next_group<C: Copy + Into<char>>(text: &[C], i: usize) -> Option<usize> {
    let at = |k: usize| -> Option<char> { text.get(k).map(|c| (*c).into()) };
    let digit_at = |k: usize| at(k).is_some_and(|c| c.is_ascii_digit());
    let separators_from = |from: usize, most: usize| {
        let mut k = from;
        while k - from < most && at(k).is_some_and(is_separator) {
            k += 1;
        }
        k
    };
    // One to four separator characters, or up to fourteen when all but three are spaces and
    // line breaks (a number spread over columns, or wrapped onto the next line).
    let k = separators_from(i, 15);
    let marks = (i..k)
        .filter(|&j| at(j).is_some_and(|c| !c.is_whitespace()))
        .count();
    if (1..=14).contains(&(k - i)) && (k - i <= 4 || marks <= 3) && digit_at(k) {
        return Some(k);
    }
    // Markup between the groups: up to eight HTML or XML tags (`224<br>30<br>8280`,
    // `</td><td>`), each with up to four separators before it.
    let mut k = i;
    let mut tags = 0;
    loop {
        let mut j = k;
        while j - k < 4 && at(j).is_some_and(|c| is_separator(c) && c != '<') {
            j += 1;
        }
        if tags < 8 && at(j) == Some('<') {
            let end = (j + 1..(j + 32).min(text.len())).find(|&m| matches!(at(m), Some('<' | '>')));
            if let Some(end) = end.filter(|&m| at(m) == Some('>')) {
                k = end + 1;
                tags += 1;
                continue;
            }
        }
        if tags > 0 && digit_at(j) {
            return Some(j);
        }
        break;
    }
    // An x, with up to two spaces either side.
    let spaces_from = |from: usize| {
        let mut k = from;
        while k - from < 2 && at(k) == Some(' ') {
            k += 1;
        }
        k
    };
    let k = spaces_from(i);
    if matches!(at(k), Some('x' | 'X')) {
        let m = spaces_from(k + 1);
        if digit_at(m) {
            return Some(m);
        }
    }
    // An ordinal suffix (`23rd`) may stand before what follows.
    let i = match ordinal_at(text, i) {
        Some(after) => {
            let k = separators_from(after, 3);
            if k > after && digit_at(k) {
                return Some(k);
            }
            after
        }
        None => i,
    };
    // A joining word or a month name with separators (a space at least) either side.
    let word_start = separators_from(i, 3);
    if word_start == i {
        return None;
    }
    let mut word = [0u8; LONGEST_WORD + 1];
    let mut word_end = word_start;
    while word_end - word_start <= LONGEST_WORD {
        match at(word_end) {
            Some(c) if c.is_ascii_alphabetic() => {
                word[word_end - word_start] = (c as u8).to_ascii_lowercase();
                word_end += 1;
            }
            _ => break,
        }
    }
    let word = &word[..word_end - word_start];
    if word.is_empty() || !JOINING_WORDS.iter().any(|w| w.as_bytes() == word) {
        return None;
    }
    let k = separators_from(word_end, 3);
    (k > word_end && digit_at(k)).then_some(k)
}

/// Where an ordinal suffix (`st`, `nd`, `rd`, `th`, any case) at `i` ends, if one stands there
/// and no letter follows it.
fn ordinal_at<C: Copy + Into<char>>(text: &[C], i: usize) -> Option<usize> {
    let at = |k: usize| -> Option<char> { text.get(k).map(|c| (*c).into()) };
    let (a, b) = (at(i)?.to_ascii_lowercase(), at(i + 1)?.to_ascii_lowercase());
    let ordinal = matches!((a, b), ('s', 't') | ('n', 'd') | ('r', 'd') | ('t', 'h'));
    (ordinal && !at(i + 2).is_some_and(char::is_alphanumeric)).then_some(i + 2)
}

/// The month and day of a run that is a date written with its month's name: `23 Jul 1984`,
/// `23rd of July`-less forms such as `July 23, 1984`, `Jul 23rd 1984`, `23. Juli`-less English
/// only. A day of one or two digits and a year of four, with the month's name between them or
/// just before the day.
pub fn month_name_date<C: Copy + Into<char>>(text: &[C], run: &DigitRun) -> Option<(u32, u32)> {
    let at = |k: usize| -> Option<char> { text.get(k).map(|c| (*c).into()) };
    let [day_digits, 4] = run.groups.as_slice() else {
        return None;
    };
    if !(1..=2).contains(day_digits) {
        return None;
    }
    let day: u32 = run.digits[..*day_digits].parse().ok()?;
    if !(1..=31).contains(&day) {
        return None;
    }
    let word_in = |s: &str| -> Option<u32> {
        s.split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
            .find_map(month_of)
    };
    if let Some(month) = word_in(&run.separators[0]) {
        return Some((month, day));
    }
    // The month's name just before the day: separators, then a word.
    let mut k = run.span.start;
    let mut skipped = 0;
    while k > 0 && skipped < 3 && at(k - 1).is_some_and(is_separator) {
        k -= 1;
        skipped += 1;
    }
    if skipped == 0 {
        return None;
    }
    let end = k;
    while k > 0 && end - k <= LONGEST_WORD && at(k - 1).is_some_and(|c| c.is_ascii_alphabetic()) {
        k -= 1;
    }
    if k > 0 && at(k - 1).is_some_and(char::is_alphanumeric) {
        return None;
    }
    let word: String = (k..end).filter_map(at).collect();
    month_of(&word).map(|month| (month, day))
}

/// One `@` of a read text with what stands around it, in characters (bytes when ASCII).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmailSpan {
    /// The local part before the `@` (its quotes included when quoted); may be empty.
    pub local: Range<usize>,
    pub at: usize,
    /// The host after the `@`, without a trailing dot; may be empty.
    pub domain: Range<usize>,
}

/// A character of an unquoted local part (`*` is not one: a masked `d***@` reads as empty).
pub fn in_local_part(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-' | '\'')
}

/// A character of a host name (IDN letters, and the ideographic full stop of CJK text).
pub fn in_domain(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | '\u{3002}')
}

/// Every `@` of a read text (characters, or ASCII bytes), each with its local part and host. A
/// space either side of the `@` is read over when the host has a dot (`dave.smith @ yahoo.com`),
/// and a host may be an address literal (`dave@[192.168.0.1]`).
pub fn emails<C: Copy + Into<char>>(text: &[C]) -> Vec<EmailSpan> {
    let at = |k: usize| -> char { text[k].into() };
    let mut spans = Vec::new();
    for k in 0..text.len() {
        if at(k) != '@' {
            continue;
        }
        // The host, after the `@` (or one space after it).
        let host_from = |start: usize| -> std::ops::Range<usize> {
            if start < text.len() && at(start) == '[' {
                let end = (start + 1..text.len().min(start + 48)).find(|&j| at(j) == ']');
                if let Some(end) = end {
                    return start..end + 1;
                }
            }
            let mut end = start;
            while end < text.len() && in_domain(at(end)) {
                end += 1;
            }
            while end > start && matches!(at(end - 1), '.' | '\u{3002}') {
                end -= 1;
            }
            start..end
        };
        let mut domain = host_from(k + 1);
        let dotted =
            |r: &std::ops::Range<usize>| r.clone().any(|j| matches!(at(j), '.' | '\u{3002}'));
        let mut spaced = false;
        if domain.is_empty() && k + 1 < text.len() && at(k + 1) == ' ' {
            let after = host_from(k + 2);
            if dotted(&after) {
                domain = after;
                spaced = true;
            }
        }
        // The local part, before the `@` (or one space before it, when the host has a dot).
        let mut end = k;
        if k > 0
            && at(k - 1) == ' '
            && (spaced || dotted(&domain))
            && k >= 2
            && in_local_part(at(k - 2))
        {
            end = k - 1;
        }
        let local_start = if end > 0 && at(end - 1) == '"' {
            // A quoted local part: back to its opening quote (a short one, on one line).
            (end.saturating_sub(66)..end - 1)
                .rev()
                .find(|&j| at(j) == '"')
                .filter(|&j| (j..end).all(|p| at(p) != '\n'))
                .unwrap_or(end)
        } else {
            let mut j = end;
            while j > 0 && in_local_part(at(j - 1)) {
                j -= 1;
            }
            j
        };
        spans.push(EmailSpan {
            local: local_start..end,
            at: k,
            domain,
        });
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str) -> String {
        read(text).into_owned()
    }

    fn runs(text: &str) -> Vec<String> {
        digit_runs(&read(text))
            .into_iter()
            .map(|r| r.digits)
            .collect()
    }

    #[test]
    fn every_script_and_form_reads_as_ascii() {
        assert_eq!(read("２２４-３０-８２８０"), "224-30-8280");
        assert_eq!(read("٢٢٤-٣٠-٨٢٨٠"), "224-30-8280");
        assert_eq!(read("𝟐𝟐𝟒-𝟑𝟎-𝟖𝟐𝟖𝟎"), "224-30-8280");
        assert_eq!(read("²²⁴-³⁰-⁸²⁸⁰"), "224-30-8280");
        assert_eq!(read("②②④-③⓪-⑧②⑧⓪"), "224-30-8280");
        assert_eq!(read("224\u{200B}-30\u{200D}-82\u{00AD}80"), "224-30-8280");
        assert_eq!(read("dave＠yahoo．com"), "dave@yahoo.com");
        assert!(matches!(read("plain"), Cow::Borrowed(_)));
        let reading = Reading::of("a⑩b");
        assert_eq!(reading.chars(), &['a', '1', '0', 'b']);
        assert_eq!(
            (0..4).map(|i| reading.origin(i)).collect::<Vec<_>>(),
            [0, 1, 1, 2]
        );
    }

    #[test]
    fn what_a_reader_skips_joins_the_groups() {
        for text in [
            "224-30-8280",
            "224\n30\n8280",
            "224#30#8280",
            "224 -- 30 -- 8280",
            "224x30x8280",
            "224 x 30 x 8280",
            "224-30 and 8280",
            "224 dash 30 dash 8280",
        ] {
            assert_eq!(runs(text), ["224308280"], "{text:?}");
        }
        assert_eq!(runs("23 Jul 1984"), ["231984"]);
        assert_eq!(runs("23rd Jul 1984"), ["231984"]);
        assert_eq!(runs("July 23rd, 1984"), ["231984"]);
        assert_eq!(runs("July 23, 1984"), ["231984"]);
        assert_eq!(runs("room 12, floor 3"), ["12", "3"]);
        assert_eq!(runs("4111 **** **** 1234"), ["4111", "1234"]);
        assert_eq!(runs("224*30*8280"), ["224308280"]);
        assert_eq!(runs("Tel (212)     555     0143"), ["2125550143"]);
        assert_eq!(runs("224-30-\n        8280"), ["224308280"]);
        assert_eq!(runs("12 apples and 3 pears"), ["12", "3"]);
        assert_eq!(runs("224 -----  30"), ["224", "30"]);
        // Markup between the groups, and a Hangul vowel drawn as a dash.
        for text in [
            "224<br>30<br>8280",
            "224</td><td>30</td><td>8280",
            "224 <span class=\"x\">30</span> 8280",
            "224ㅡ30ㅡ8280",
        ] {
            assert_eq!(runs(&read_all(text)), ["224308280"], "{text:?}");
        }
        assert_eq!(runs("12 <b>bold</b> 3"), ["12", "3"]);
        let date = |text: &str| {
            let chars: Vec<char> = text.chars().collect();
            runs_of(&chars)
                .iter()
                .find_map(|run| month_name_date(&chars, run))
        };
        assert_eq!(date("born 23 Jul 1984"), Some((7, 23)));
        assert_eq!(date("born July 2, 1930"), Some((7, 2)));
        assert_eq!(date("born Jul 23rd 1984"), Some((7, 23)));
        assert_eq!(date("room 23, 1984"), None);
        assert_eq!(date("Julyx 23, 1984"), None);
        assert_eq!(month_of("Sept"), Some(9));
        assert_eq!(month_of("MAY"), Some(5));
        assert_eq!(month_of("maybe"), None);
    }

    /// Each email's local part and host, as text.
    fn email_parts(text: &str) -> Vec<(String, String)> {
        let text: Vec<char> = text.chars().collect();
        emails(&text)
            .into_iter()
            .map(|e| {
                (
                    text[e.local].iter().collect(),
                    text[e.domain].iter().collect(),
                )
            })
            .collect()
    }

    #[test]
    fn every_at_with_its_parts() {
        let parts =
            email_parts("a@b.co,dave.smith@yahoo.com \"dave s\"@x.org d***@y.com me@intranet.");
        assert_eq!(
            parts,
            [
                ("a".into(), "b.co".into()),
                ("dave.smith".into(), "yahoo.com".into()),
                ("\"dave s\"".into(), "x.org".into()),
                ("".into(), "y.com".into()),
                ("me".into(), "intranet".into()),
            ]
        );
        let parts = email_parts("dave.smith @ yahoo.com, ann@[192.168.0.1], meet @ noon");
        assert_eq!(
            parts,
            [
                ("dave.smith".into(), "yahoo.com".into()),
                ("ann".into(), "[192.168.0.1]".into()),
                ("".into(), "".into()),
            ]
        );
        let reading = Reading::of("dave.smith&#64;yahoo.com or ann%40x.org");
        let read: String = reading.chars().iter().collect();
        assert_eq!(read, "dave.smith@yahoo.com or ann@x.org");
        let reading = Reading::of("dave.smith(at)yahoo.com, ann [AT] x.org, {at} home");
        let read: String = reading.chars().iter().collect();
        assert_eq!(read, "dave.smith@yahoo.com, ann @ x.org, @ home");
        assert_eq!(read_all("dave.smith(at)yahoo.com"), "dave.smith@yahoo.com");
        assert_eq!(read_all("look (at) this"), "look @ this");
        assert_eq!(read_all("224ـ30ـ8280 ２ㅤ２ 2̂2̂4"), "224-30-8280 22 224");
        assert_eq!(read_all("❹❶❶❶ ⓶⓶⓸ 二二四-三〇 ㈡ ፪"), "4111 224 224-30 2 2");
    }
}
