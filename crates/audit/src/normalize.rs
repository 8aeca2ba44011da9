//! Undoing the tricks that hide digits and words from a naive grep: the audit reads text exactly
//! as `scrub` does, through [`maskbus_pii::read`] (format characters dropped, NFKC per character,
//! every decimal digit as ASCII). Plain ASCII takes a fast path that copies nothing.

use std::borrow::Cow;

/// The text as read: ASCII digits for every decimal digit, no format characters, NFKC.
pub fn normalize(text: &str) -> Cow<'_, str> {
    maskbus_pii::read::read(text)
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
        assert_eq!(normalize("²²⁴-³⁰-⁸²⁸⁰"), "224-30-8280"); // superscript
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
