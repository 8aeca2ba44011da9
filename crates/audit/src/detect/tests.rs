//! The detectors' unit tests.
use super::*;

fn every_hint() -> impl Iterator<Item = Hint> {
    (0u8..32).map(|bits| Hint {
        birth: bits & 1 != 0,
        routing: bits & 2 != 0,
        phone: bits & 4 != 0,
        account: bits & 8 != 0,
        quantity: bits & 16 != 0,
        kept: false,
    })
}

proptest::proptest! {
    /// A plain date is read without tokenising, and reads as the tokenised reading does.
    #[test]
    fn a_date_reads_as_tokenised(y in 0u32..10000, m in 0u32..100, d in 0u32..100) {
        let text = format!("{y:04}-{m:02}-{d:02}");
        proptest::prop_assert!(is_iso_date(&text));
        for hint in every_hint() {
            let (mut fast, mut tokenised) = (Vec::new(), Vec::new());
            detect(&text, hint, &mut fast);
            detect_tokenised(&text, hint, &mut tokenised);
            proptest::prop_assert_eq!(fast, tokenised);
        }
    }

}

#[test]
fn a_measure_is_not_an_identifier_and_a_compact_timestamp_not_a_card() {
    assert_eq!(detectors("224308280", "bytes"), []);
    assert_eq!(detectors("224308280", "Milliseconds"), []);
    assert_eq!(detectors("224308280", "track"), [Detector::Ssn]);
    assert_eq!(
        detectors("224-30-8280", "bytes"),
        [Detector::Ssn],
        "written as an SSN, it is one"
    );
    // 20190301071309 passes Luhn; as a migration's version it is a timestamp.
    assert!(maskbus_pii::luhn_valid("20190301071309"));
    for version in ["20190301071309", "201903010713", "20190301071311123"] {
        assert_eq!(detectors(version, "version"), [], "{version}");
    }
}

#[test]
fn a_zip_beside_a_pin_in_a_row_is_no_split_ssn() {
    let page = serde_json::json!({
        "columns": ["id", "zip", "pin"],
        "rows": [["1", "22430", "8280"], ["2", "62704", "1234"]]
    });
    assert!(crate::scan(&page, crate::Context::default()).is_empty());
    let split = serde_json::json!({"columns": ["id", "a", "b"], "rows": [["1", "224-30", "8280"]]});
    assert_eq!(crate::scan(&split, crate::Context::default()).len(), 1);
}

#[test]
fn only_a_bare_iso_date_is_one() {
    assert!(is_iso_date("1959-01-01"));
    for text in [
        "1959-01-01 ",
        "1959/01/01",
        "19590-01-01",
        "1959-1-011",
        "١٩٥٩-01-01",
    ] {
        assert!(!is_iso_date(text), "{text}");
    }
}

fn detectors(text: &str, hint: &str) -> Vec<Detector> {
    let mut hits = Vec::new();
    detect(text, Hint::of(hint), &mut hits);
    hits.into_iter().map(|h| h.detector).collect()
}

proptest::proptest! {
    /// The plain-number shortcut decides exactly as tokenising does.
    #[test]
    fn plain_numbers_are_decided_as_tokenising_decides(
        number in "-?[0-9]{1,20}(\\.[0-9]{1,4})?",
        hint in proptest::sample::select(vec!["", "account_no", "birth_date", "phone", "routing"]),
    ) {
        let (mut quick, mut full) = (Vec::new(), Vec::new());
        detect(&number, Hint::of(hint), &mut quick);
        detect_tokenised(&number, Hint::of(hint), &mut full);
        proptest::prop_assert_eq!(quick, full);
    }
}

#[test]
fn runs_join_groups_over_short_separators_only() {
    let runs = digit_runs("card 4111 1111-1111.1111 and ***-**-8280");
    assert_eq!(runs[0].digits, "4111111111111111");
    assert_eq!(runs[0].groups, [4, 4, 4, 4]);
    assert_eq!(runs[1].digits, "8280");
    assert_eq!(digit_runs("4111 **** **** 1234").len(), 2);
    assert!(digit_runs(" 224-30-8280 ")[0].whole);
    assert!(!digit_runs("ssn 224-30-8280")[0].whole);
}

#[test]
fn addresses_floats_and_bytes_are_not_identifiers() {
    assert!(detectors("10.12.0.12/32", "").is_empty(), "an IPv4 address");
    assert!(
        detectors("192.168.100.200", "").is_empty(),
        "an IPv4 address"
    );
    assert!(detectors("33.333333333333336", "").is_empty(), "a float");
    assert!(
        detectors("\\x3c59dc048e8850243be8079a5c74d079", "").is_empty(),
        "a bytea"
    );
    assert!(
        detectors("3c59dc04-8e88-5024-3be8-079a5c74d079", "").is_empty(),
        "a uuid"
    );
    assert!(
        detectors("a1234567-1234-5678-9abc-123456789012", "").is_empty(),
        "a uuid"
    );
    assert_eq!(detectors("4111.1111.1111.1111", ""), [Detector::Card]);
}

#[test]
fn a_prefix_does_not_make_a_number_a_snapshot() {
    assert_eq!(detectors("0:224308280", ""), [Detector::Ssn]);
    assert_eq!(detectors("1:4111111111111111", ""), [Detector::Card]);
    assert!(detectors("755:755:", "").is_empty(), "a real snapshot");
    assert!(
        detectors("1000:1010:1001,1005", "").is_empty(),
        "a real snapshot"
    );
}

#[test]
fn zip_codes_and_amounts_are_not_ssns() {
    assert!(detectors("12345-6789", "").is_empty(), "ZIP+4");
    assert!(detectors("2243082.80", "").is_empty(), "an amount");
    assert!(
        detectors("2,243,082.80", "").is_empty(),
        "an amount with thousands"
    );
    assert_eq!(detectors("224-30-8280", ""), [Detector::Ssn]);
    assert_eq!(detectors("224/30/8280", ""), [Detector::Ssn]);
}

#[test]
fn birth_dates_in_written_formats_and_field_names() {
    for (date, hint) in [
        ("1987-04-04", "date_of_birth"),
        ("04/04/1987", "dob"),
        ("23.11.1987", "birthday"),
        ("1987/04/04", "born_on"),
        ("11-23-1987", "bday"),
    ] {
        assert_eq!(
            detectors(date, hint),
            [Detector::BirthDate],
            "{date} under {hint}"
        );
    }
    assert!(
        detectors("1987-01-01", "dob").is_empty(),
        "year_only output"
    );
    assert!(
        detectors("01/01/1987", "dob").is_empty(),
        "year_only output, US style"
    );
}

#[test]
fn finds_ssns_cards_phones_and_emails() {
    assert_eq!(detectors("224-30-8280", ""), [Detector::Ssn]);
    assert_eq!(detectors("224 30 8280", ""), [Detector::Ssn]);
    assert_eq!(detectors("224.30.8280", ""), [Detector::Ssn]);
    assert_eq!(detectors("4111111111111111", ""), [Detector::Card]);
    assert_eq!(detectors("4111-1111-1111-1111", ""), [Detector::Card]);
    assert_eq!(detectors("378282246310005", ""), [Detector::Card]);
    assert_eq!(detectors("(212) 555-0143", ""), [Detector::Phone]);
    assert_eq!(detectors("2125550143", "phone"), [Detector::Phone]);
    assert_eq!(detectors("write to dave@yahoo.com", ""), [Detector::Email]);
    assert_eq!(
        detectors("1987-04-04", "date_of_birth"),
        [Detector::BirthDate]
    );
    assert!(detectors("021000021", "routing_number").contains(&Detector::RoutingNumber));
    assert!(detectors("123456789", "account_number").contains(&Detector::AccountNumber));
    assert!(detectors("1234567", "acct").contains(&Detector::AccountNumber));
    // Keys that point at an account are not account numbers.
    assert_eq!(detectors("1234567", "account_id"), []);
    assert_eq!(detectors("1234567", "accountid"), []);
}

#[test]
fn leaves_masked_and_harmless_values_alone() {
    for clean in [
        "***-**-8280",
        "4111 **** **** 1234",
        "d***@yahoo.com",
        "****@yahoo.com",
        "(***) ***-0143",
        "*****4692",
        "2024-03-05 12:34:56+00",
        "2024-03-05T12:34:56.123456Z",
        "12:34:56",
        "-1234.56",
        "62704",
        "4111111111111112",
        "000-12-3456",
        "666-12-3456",
        "923-45-6789",
        "avery.lockwood.abcdefghijkl@example.com",
        "1987-01-01",
        "12345:12350:12346,12347",
        "J***",
        "[REDACTED]",
    ] {
        let hint = if clean == "1987-01-01" {
            "date_of_birth"
        } else {
            ""
        };
        assert_eq!(detectors(clean, hint), [], "{clean}");
    }
}
