//! What real US identifiers look like, as pure functions over digits.
//!
//! The seeder uses these to prove that the production data it writes is realistic, and the wire
//! audit uses them to tell a real-looking SSN or card from a harmless run of digits. This crate
//! must stay free of I/O and of any dependency on the other maskbus crates: both the mask side and
//! the audit side lean on it, so a reviewer reads it once. [`read`] is how both read text.

pub mod read;

/// True when `area-group-serial` could have been issued: area not 000, 666 or 900-999, group not
/// 00, serial not 0000. Takes the three groups as numbers so callers decide about separators.
/// The value of a Unicode decimal digit (general category Nd: ASCII, full-width, Arabic-Indic,
/// Devanagari, mathematical, ...; and the superscript and subscript digits), or `None`. Unicode encodes every decimal digit set as a
/// contiguous run from 0 to 9, and sets that touch are whole multiples of ten, so the value is
/// the distance from the start of the run, modulo ten. Masking and the audit both read digits
/// through this one function, so a digit one side sees the other sees too.
pub fn decimal_value(c: char) -> Option<u8> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    // Superscript and subscript digits (category No) read as digits too: `²²⁴-³⁰-⁸²⁸⁰` is an
    // SSN to a reader.
    match c {
        '\u{2070}' => return Some(0),
        '\u{00B9}' => return Some(1),
        '\u{00B2}' => return Some(2),
        '\u{00B3}' => return Some(3),
        '\u{2074}'..='\u{2079}' => return Some((c as u32 - 0x2070) as u8),
        '\u{2080}'..='\u{2089}' => return Some((c as u32 - 0x2080) as u8),
        _ => {}
    }
    if let Some(value) = numeral_value(c) {
        return Some(value);
    }
    if c.is_ascii() || c.general_category() != GeneralCategory::DecimalNumber {
        return None;
    }
    let mut start = c as u32;
    while let Some(previous) = start.checked_sub(1).and_then(char::from_u32) {
        if previous.general_category() != GeneralCategory::DecimalNumber {
            break;
        }
        start -= 1;
    }
    Some(((c as u32 - start) % 10) as u8)
}

/// Numerals a reader reads as one digit that are not decimal digits to Unicode: circled,
/// negative circled, double circled and dingbat digits (`④`, `❹`, `⓸`, `➃`), parenthesised and
/// circled ideographs (`㈣`, `㊃`), Chinese numerals (`〇一二三四五六七八九`) and Ethiopic digits
/// (`፬`). Those that stand for ten and more (`⑩`) are read through NFKC as two digits.
fn numeral_value(c: char) -> Option<u8> {
    let code = c as u32;
    let from = |start: u32, first: u8| Some(first + (code - start) as u8);
    match code {
        0x2460..=0x2468 => from(0x2460, 1), // ① - ⑨
        0x24EA | 0x24FF => Some(0),         // ⓪ ⓿
        0x24F5..=0x24FD => from(0x24F5, 1), // ⓵ - ⓽
        0x2776..=0x277E => from(0x2776, 1), // ❶ - ❾
        0x2780..=0x2788 => from(0x2780, 1), // ➀ - ➈
        0x278A..=0x2792 => from(0x278A, 1), // ➊ - ➒
        0x3220..=0x3228 => from(0x3220, 1), // ㈠ - ㈨
        0x3280..=0x3288 => from(0x3280, 1), // ㊀ - ㊈
        0x1369..=0x1371 => from(0x1369, 1), // ፩ - ፱
        _ => match c {
            '〇' | '零' => Some(0),
            '一' => Some(1),
            '二' => Some(2),
            '三' => Some(3),
            '四' => Some(4),
            '五' => Some(5),
            '六' => Some(6),
            '七' => Some(7),
            '八' => Some(8),
            '九' => Some(9),
            _ => None,
        },
    }
}

/// True for a Unicode decimal digit.
pub fn is_decimal_digit(c: char) -> bool {
    decimal_value(c).is_some()
}

pub fn ssn_is_issuable(area: u16, group: u8, serial: u16) -> bool {
    area != 0
        && area != 666
        && area < 900
        && (1..=99).contains(&group)
        && (1..=9999).contains(&serial)
}

/// Parses `ddd-dd-dddd` or nine bare digits and applies [`ssn_is_issuable`].
pub fn is_issuable_ssn_text(text: &str) -> bool {
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    if digits.len() != 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if text.contains('-') && !(text.len() == 11 && &text[3..4] == "-" && &text[6..7] == "-") {
        return false;
    }
    let area = digits[0..3].parse().unwrap_or(0);
    let group = digits[3..5].parse().unwrap_or(0);
    let serial = digits[5..9].parse().unwrap_or(0);
    ssn_is_issuable(area, group, serial)
}

/// The ABA routing-number checksum: weights 3, 7, 1 repeated, sum divisible by 10.
pub fn aba_checksum_ok(digits: &[u8; 9]) -> bool {
    aba_weighted_sum(digits).is_multiple_of(10)
}

fn aba_weighted_sum(digits: &[u8]) -> u32 {
    const WEIGHTS: [u32; 3] = [3, 7, 1];
    digits
        .iter()
        .enumerate()
        .map(|(i, d)| WEIGHTS[i % 3] * u32::from(*d))
        .sum()
}

/// The ninth digit that makes the first eight a valid ABA routing number.
pub fn aba_check_digit(first_eight: &[u8; 8]) -> u8 {
    // The ninth digit has weight 1, so it is whatever brings the sum to a multiple of 10.
    ((10 - aba_weighted_sum(first_eight) % 10) % 10) as u8
}

/// True for nine ASCII digits that pass the ABA checksum.
pub fn is_aba_routing_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 9 || !bytes.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut digits = [0u8; 9];
    for (d, b) in digits.iter_mut().zip(bytes) {
        *d = b - b'0';
    }
    aba_checksum_ok(&digits)
}

/// Luhn validity of a digit string (separators already removed), through the `luhn` crate.
pub fn luhn_valid(digits: &str) -> bool {
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && luhn::valid(digits)
}

/// The check digit that makes `payload` followed by it Luhn-valid.
pub fn luhn_check_digit(payload: &[u8]) -> u8 {
    // Doubling applies to every second digit counted from the check digit, i.e. the payload's
    // last digit is doubled.
    let sum: u32 = payload
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let d = u32::from(*d);
            if i % 2 == 0 {
                let twice = d * 2;
                if twice > 9 {
                    twice - 9
                } else {
                    twice
                }
            } else {
                d
            }
        })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssn_rules() {
        assert!(is_issuable_ssn_text("224-30-8280"));
        assert!(is_issuable_ssn_text("224308280"));
        assert!(!is_issuable_ssn_text("000-30-8280"));
        assert!(!is_issuable_ssn_text("666-30-8280"));
        assert!(!is_issuable_ssn_text("900-30-8280"));
        assert!(!is_issuable_ssn_text("224-00-8280"));
        assert!(!is_issuable_ssn_text("224-30-0000"));
        assert!(!is_issuable_ssn_text("22-430-8280"));
        assert!(!is_issuable_ssn_text("***-**-8280"));
    }

    #[test]
    fn aba_known_numbers() {
        // Published routing numbers of large US banks.
        assert!(is_aba_routing_text("021000021"));
        assert!(is_aba_routing_text("011000015"));
        assert!(!is_aba_routing_text("021000022"));
        assert_eq!(aba_check_digit(&[0, 2, 1, 0, 0, 0, 0, 2]), 1);
    }

    #[test]
    fn luhn_check_digit_agrees_with_the_luhn_crate() {
        for payload in [
            "411111111111111",
            "555555555555444",
            "37828224631000",
            "601111111111111",
        ] {
            let digits: Vec<u8> = payload.bytes().map(|b| b - b'0').collect();
            let full = format!("{payload}{}", luhn_check_digit(&digits));
            assert!(luhn_valid(&full), "{full}");
        }
        assert!(!luhn_valid("4111111111111112"));
        assert!(!luhn_valid(""));
    }
}
