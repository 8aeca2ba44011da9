//! Undoing the tricks that hide digits and words from a naive grep.
//!
//! A string is read the way a person would read it: format characters (zero-width spaces and
//! joiners, soft hyphens, bidi marks) are dropped, NFKC folds compatibility forms (full-width
//! `４`, mathematical digits, ligatures), and any remaining Unicode decimal digit (Arabic-Indic
//! `٤`, Devanagari `४`, ...) is read by its value. Plain ASCII takes a fast path that copies
//! nothing.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The text as read: ASCII digits for every decimal digit, no format characters, NFKC.
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let folded: String = text
        .chars()
        .filter(|c| c.general_category() != GeneralCategory::Format)
        .nfkc()
        .map(|c| match decimal_value(c) {
            Some(d) => char::from(b'0' + d),
            None => c,
        })
        .collect();
    Cow::Owned(folded)
}

/// The value of a Unicode decimal digit: the one function masking reads digits with too.
pub use maskbus_pii::decimal_value;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_in_every_script_read_as_ascii() {
        assert_eq!(normalize("２２４-３０-８２８０"), "224-30-8280"); // full-width
        assert_eq!(normalize("٢٢٤-٣٠-٨٢٨٠"), "224-30-8280"); // Arabic-Indic
        assert_eq!(normalize("२२४-३०-८२८०"), "224-30-8280"); // Devanagari
        assert_eq!(normalize("𝟐𝟐𝟒-𝟑𝟎-𝟖𝟐𝟖𝟎"), "224-30-8280"); // mathematical bold
        assert_eq!(
            normalize("224\u{200B}-30\u{200D}-82\u{00AD}80"),
            "224-30-8280"
        ); // format chars
        assert_eq!(normalize("plain ascii"), "plain ascii");
        assert!(matches!(normalize("plain ascii"), Cow::Borrowed(_)));
    }

    #[test]
    fn non_digits_have_no_value() {
        assert_eq!(decimal_value('a'), None);
        assert_eq!(decimal_value('½'), None);
        assert_eq!(decimal_value('٩'), Some(9));
        assert_eq!(decimal_value('০'), Some(0)); // Bengali zero
    }
}
