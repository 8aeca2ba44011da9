//! Properties of masking that must hold for every input, not only the examples in the unit tests.

use maskbus_mask::{PseudonymKey, PseudonymKind, Rule};
use maskbus_pii::{is_issuable_ssn_text, luhn_valid};
use proptest::prelude::*;

fn mask(rule: &Rule, value: &str) -> String {
    let key = PseudonymKey::new(b"property tests");
    rule.apply(Some(value.to_string()), Some(&key))
        .unwrap()
        .unwrap_or_default()
}

/// Rules that take any text (year_only takes dates and is tested with dates).
fn text_rules() -> Vec<Rule> {
    vec![
        Rule::Redact,
        Rule::FirstLetter,
        Rule::Ssn,
        Rule::Card,
        Rule::Email,
        Rule::LastFour,
        Rule::Scrub,
        Rule::Constant("n/a".into()),
        Rule::Pseudonym(PseudonymKind::FirstName),
        Rule::Pseudonym(PseudonymKind::LastName),
        Rule::Pseudonym(PseudonymKind::Email),
        Rule::Pseudonym(PseudonymKind::Ssn),
        Rule::Pseudonym(PseudonymKind::Digits),
    ]
}

/// How many digits of the input a rule may show.
fn digits_kept(rule: &Rule) -> Option<usize> {
    match rule {
        Rule::Ssn | Rule::LastFour => Some(4),
        Rule::Card => Some(8),
        Rule::FirstLetter | Rule::Email => Some(1),
        Rule::Redact | Rule::Null => Some(0),
        _ => None, // constants and pseudonyms write digits of their own, not the input's
    }
}

fn ssn_like() -> impl Strategy<Value = String> {
    (
        0u16..1000,
        0u8..100,
        0u16..10000,
        prop::sample::select(vec!["-", " ", ".", "", "\u{2013}"]),
    )
        .prop_map(|(a, g, s, sep)| format!("{a:03}{sep}{g:02}{sep}{s:04}"))
}

fn card_like() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(0u8..10, 13..=19),
        prop::sample::select(vec!["", " ", "-"]),
        3usize..=5,
    )
        .prop_map(|(digits, sep, group)| {
            digits
                .chunks(group)
                .map(|c| c.iter().map(|d| char::from(b'0' + d)).collect::<String>())
                .collect::<Vec<_>>()
                .join(sep)
        })
}

/// Every maximal run of digits and separators, read as its digits.
fn digit_runs(text: &str) -> Vec<String> {
    let mut runs = vec![String::new()];
    for c in text.chars() {
        if c.is_ascii_digit() {
            runs.last_mut().unwrap().push(c);
        } else if !matches!(c, ' ' | '-' | '.') {
            runs.push(String::new());
        }
    }
    runs.into_iter().filter(|r| !r.is_empty()).collect()
}

fn looks_sensitive(text: &str) -> bool {
    digit_runs(text).iter().any(|run| {
        (run.len() == 9 && is_issuable_ssn_text(run))
            || ((13..=19).contains(&run.len()) && luhn_valid(run))
    })
}

/// Digits from several scripts (ASCII, full-width, Arabic-Indic, Devanagari, mathematical bold,
/// Bengali), separators, and format characters (zero-width space and joiner, soft hyphen).
fn unicode_digit_text() -> impl Strategy<Value = String> {
    let pieces: Vec<&'static str> = vec![
        "0", "7", "９", "４", "٢", "٨", "४", "९", "𝟐", "𝟖", "০", "৫", "-", " ", ".", "(", ")",
        "\u{200B}", "\u{200D}", "\u{00AD}", "x",
    ];
    prop::collection::vec(prop::sample::select(pieces), 0..30).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Masking a masked value changes nothing. Keyed pseudonyms are deterministic instead: a fake
    /// of a fake is another fake, by design.
    #[test]
    fn masking_is_idempotent(value in ".{0,40}") {
        for rule in text_rules().into_iter().filter(|r| !matches!(r, Rule::Pseudonym(_))) {
            let once = mask(&rule, &value);
            prop_assert_eq!(&mask(&rule, &once), &once, "rule {}", rule.name());
        }
    }

    /// A verify hashes rows masked in place ([`maskbus_mask::Masker::mask_cells`]); a sync sends
    /// rows masked by value. Both must give the same cells, or equal databases would differ.
    #[test]
    fn masking_in_place_gives_what_masking_by_value_gives(
        row in prop::collection::vec(prop::option::of(".{0,30}"), 7),
    ) {
        let policy = maskbus_mask::Policy::bank().unwrap().with_key(PseudonymKey::new(b"k"));
        let columns: Vec<String> = ["id", "first_name", "last_name", "email", "ssn", "phone", "created_at"]
            .map(String::from)
            .to_vec();
        let masker = policy.masker("customers", &columns).unwrap();
        let borrowed: Vec<Option<&str>> = row.iter().map(Option::as_deref).collect();
        match (masker.mask(row.clone()), masker.mask_cells(&borrowed)) {
            (Ok(by_value), Ok(in_place)) => {
                let in_place: Vec<Option<String>> =
                    in_place.cells().iter().map(|c| c.as_deref().map(String::from)).collect();
                prop_assert_eq!(by_value.values(), in_place.as_slice());
            }
            (by_value, in_place) => prop_assert_eq!(by_value.is_err(), in_place.is_err()),
        }
    }

    #[test]
    fn year_only_is_idempotent_and_keeps_the_year(y in 1u32..10000, m in 1u32..13, d in 1u32..29) {
        let date = format!("{y:04}-{m:02}-{d:02}");
        let once = mask(&Rule::YearOnly, &date);
        prop_assert_eq!(&once, &format!("{y:04}-01-01"));
        prop_assert_eq!(mask(&Rule::YearOnly, &once), once);
    }

    /// No rule turns an SSN-like or card-like input into something the audit would call an SSN
    /// or a card, but the bijective pseudonyms (`ssn`, `digits`): their fakes keep the shape and
    /// validity of what they replace, and the wire audit tells them from real values by the key
    /// (`tests/integration/depth.rs`).
    #[test]
    fn masked_ssns_and_cards_are_never_detectable(ssn in ssn_like(), card in card_like()) {
        for rule in text_rules().into_iter().filter(|r| r.class() != maskbus_mask::RuleClass::Bijective) {
            for input in [&ssn, &card] {
                let masked = mask(&rule, input);
                prop_assert!(!looks_sensitive(&masked), "rule {} left a detectable value", rule.name());
            }
        }
    }

    /// A rule never shows more of the input's digits than it says it keeps.
    #[test]
    fn masked_output_reveals_no_more_digits_than_the_rule_keeps(value in "[0-9 .@a-z-]{0,30}") {
        for rule in text_rules() {
            if let Some(kept) = digits_kept(&rule) {
                let masked = mask(&rule, &value);
                let shown = masked.bytes().filter(u8::is_ascii_digit).count();
                // email keeps the domain whole; only its local part counts.
                let domain_digits = match (&rule, value.rfind('@')) {
                    (Rule::Email, Some(at)) => value[at..].bytes().filter(u8::is_ascii_digit).count(),
                    _ => 0,
                };
                prop_assert!(shown <= kept + domain_digits, "rule {} showed {} digits", rule.name(), shown);
            }
        }
    }

    /// The same with digits of every script, separators and format characters mixed in: a
    /// full-width or Arabic-Indic digit is a digit to every rule, and so is counted here the
    /// way the wire audit reads it.
    #[test]
    fn unicode_digits_are_digits_to_every_rule(value in unicode_digit_text()) {
        let digits = |text: &str| text.chars().filter(|c| maskbus_pii::is_decimal_digit(*c)).count();
        for rule in text_rules() {
            let masked = mask(&rule, &value);
            if let Some(kept) = digits_kept(&rule) {
                prop_assert!(
                    digits(&masked) <= kept,
                    "rule {} showed {} of {} digits: {masked:?}", rule.name(), digits(&masked), digits(&value)
                );
            }
            prop_assert_eq!(mask(&rule, &masked), if matches!(rule, Rule::Pseudonym(_)) {
                mask(&rule, &masked)
            } else {
                masked.clone()
            });
        }
        // The digits pseudonym replaces every digit of any script by a fresh one (in the same
        // script, so values that differ only in script stay apart) and leaves the rest.
        let fake = mask(&Rule::Pseudonym(PseudonymKind::Digits), &value);
        prop_assert_eq!(fake.chars().count(), value.chars().count());
        for (real, faked) in value.chars().zip(fake.chars()) {
            if maskbus_pii::is_decimal_digit(real) {
                prop_assert!(maskbus_pii::is_decimal_digit(faked), "{real:?} became {faked:?}");
            } else {
                prop_assert_eq!(real, faked);
            }
        }
    }

    /// Deterministic: the same input and key give the same output, every time.
    #[test]
    fn masking_is_deterministic(value in ".{0,40}") {
        for rule in text_rules() {
            prop_assert_eq!(mask(&rule, &value), mask(&rule, &value));
        }
    }
}
