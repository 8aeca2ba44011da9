//! The two corpora the audit is judged by: planted leaks it must all find, and clean traffic
//! (what maskbus really puts on the bus) on which it must find nothing.

#[path = "common/corpus.rs"]
mod corpus;

use maskbus_audit::{scan, Context, Detector, ExactMatcher};
use maskbus_mask::{Policy, PseudonymKey};
use serde_json::{json, Value};

fn findings(body: &Value) -> Vec<Detector> {
    scan(body, Context::default())
        .into_iter()
        .map(|f| f.hit.detector)
        .collect()
}

#[test]
fn every_planted_leak_is_found() {
    let planted = corpus::planted();
    let mut missed = Vec::new();
    for (name, body, detector) in &planted {
        if !findings(body).contains(detector) {
            missed.push(*name);
        }
    }
    assert!(missed.is_empty(), "missed planted leaks: {missed:?}");
}

/// The audit reads bodies as text (`scan_text`, the wire-audit's path); every body of both
/// corpora gives the same findings, at the same paths, as the parsed value does.
#[test]
fn text_and_parsed_bodies_give_the_same_findings() {
    let mut bodies: Vec<Value> = corpus::planted().into_iter().map(|(_, b, _)| b).collect();
    bodies.extend(corpus::clean_other_domains());
    let mut scanner = maskbus_audit::Scanner::default();
    for body in &bodies {
        let text = body.to_string();
        let from_text = scanner.scan_text(&text, Context::default()).unwrap();
        assert_eq!(from_text, scan(body, Context::default()), "in {text}");
    }
}

/// Clean data from other domains (retail orders, HR records, clinic visits), in the shapes
/// real rows take: identifiers that identify no person, amounts, ZIP+4 codes, addresses,
/// floats, uuids, IPs, timestamps. Zero findings; every line a chance for a false one.
#[test]
fn clean_data_of_other_domains_has_no_findings() {
    let bodies = corpus::clean_other_domains();
    let mut noisy = Vec::new();
    for body in &bodies {
        let found = findings(body);
        if !found.is_empty() {
            noisy.push(format!("{found:?} in {body}"));
        }
    }
    assert!(
        noisy.is_empty(),
        "{} false findings in {} clean bodies:\n{}",
        noisy.len(),
        bodies.len(),
        noisy[..noisy.len().min(10)].join("\n")
    );
}

/// The findings of a judged clean body, read as the wire audit reads it with the producer's
/// config (the exact matcher loaded as it loads it, kept and reviewed columns).
fn judged_findings(case: &corpus::Judged) -> Vec<maskbus_audit::Finding> {
    use maskbus_audit::exact::is_its_column_name;
    use std::collections::HashSet;
    let mut matcher = ExactMatcher::new([5; 32]);
    for (column, value) in &case.real {
        if !is_its_column_name(column, value) {
            matcher.add(&maskbus_audit::normalize::normalize(value));
        }
    }
    let pairs = |list: &[(&str, &str)]| -> HashSet<(String, String)> {
        list.iter()
            .map(|(e, c)| (e.to_string(), c.to_string()))
            .collect()
    };
    let (kept, reviewed) = (pairs(&case.kept), pairs(&case.reviewed));
    let context = Context {
        exact: Some(&matcher),
        kept: Some(&kept),
        reviewed: Some(&reviewed),
    };
    let text = case.body.to_string();
    let found = maskbus_audit::scan_text(&text, context).unwrap();
    assert_eq!(found, scan(&case.body, context), "{}", case.name);
    found
}

/// Issue 52's false alarms: a column whose every value is its own name, index names with a
/// hash suffix, a json column kept leaf by leaf and reviewed. Zero findings.
#[test]
fn false_alarms_that_cost_users_hours_are_gone() {
    let noisy: Vec<String> = corpus::clean_judged()
        .iter()
        .filter_map(|case| {
            let found = judged_findings(case);
            (!found.is_empty()).then(|| format!("{}: {found:?}", case.name))
        })
        .collect();
    assert!(noisy.is_empty(), "false alarms:\n{}", noisy.join("\n"));
    // The way out of the json column is the review: unreviewed, its leaves are read.
    let mut unreviewed = corpus::clean_judged().pop().unwrap();
    unreviewed.reviewed.clear();
    assert!(!judged_findings(&unreviewed).is_empty());
}

/// Real bank rows, masked by the real policy, in the real reply shape: zero findings.
#[test]
fn masked_bank_traffic_is_clean() {
    let policy = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"corpus"));
    let mut bodies = Vec::new();
    let customers: Vec<_> = maskbus_bank::generate::customers(42, 1, 2000).collect();
    let columns = maskbus_bank::generate::Customer::COLUMNS;
    let masker = policy
        .masker("customers", &columns.map(String::from))
        .unwrap();
    let rows: Vec<Value> = customers
        .iter()
        .map(|c| serde_json::to_value(masker.mask(c.text_values()).unwrap()).unwrap())
        .collect();
    for chunk in rows.chunks(200) {
        bodies.push(json!({
            "type": "page", "v": 1, "entity": "customers", "key": "id", "columns": columns,
            "rows": chunk, "next_after": 200, "more": true,
            "since": "745:745:", "until": "1290:1301:1290,1295"
        }));
    }
    // Accounts and cards, masked.
    let summaries: Vec<_> = customers
        .iter()
        .map(|c| maskbus_bank::generate::CustomerSummary {
            id: c.id,
            created_at: c.created_at,
        })
        .collect();
    let routing = maskbus_bank::generate::routing_numbers(42);
    let account_columns = [
        "id",
        "customer_id",
        "account_number",
        "routing_number",
        "account_type",
        "balance",
        "opened_at",
    ];
    let masker = policy
        .masker("accounts", &account_columns.map(String::from))
        .unwrap();
    let rows: Vec<Value> = maskbus_bank::generate::accounts(42, 1, &summaries, &routing)
        .map(|a| {
            let values = vec![
                Some(a.id.to_string()),
                Some(a.customer_id.to_string()),
                Some(a.account_number.clone()),
                Some(a.routing_number.clone()),
                Some(a.account_type.as_str().to_string()),
                Some(maskbus_bank::generate::cents_text(a.balance_cents)),
                Some(a.opened_at.to_rfc3339()),
            ];
            serde_json::to_value(masker.mask(values).unwrap()).unwrap()
        })
        .collect();
    bodies.push(json!({"type": "page", "columns": account_columns, "rows": rows}));
    let card_masker = policy
        .masker(
            "cards",
            &["id".into(), "card_number".into(), "expiry".into()],
        )
        .unwrap();
    let mut rng = maskbus_bank::generate::stream(42, "corpus", 0);
    let rows: Vec<Value> = (0..5000)
        .map(|i| {
            let (_, number) = maskbus_bank::generate::card_number(&mut rng);
            let values = vec![
                Some(i.to_string()),
                Some(number),
                Some("2027-02-01".to_string()),
            ];
            serde_json::to_value(card_masker.mask(values).unwrap()).unwrap()
        })
        .collect();
    bodies.push(json!({"type": "page", "columns": ["id", "card_number", "expiry"], "rows": rows}));
    // Transactions at a large bank's scale: ids and foreign keys of six and seven digits.
    bodies.push(json!({
        "type": "page", "entity": "transactions",
        "columns": ["id", "account_id", "card_id", "amount", "posted_at", "merchant", "description"],
        "rows": (0..500).map(|i| json!([
            (1_000_000 + i * 7919).to_string(), (100_000 + i * 104_729 % 900_000).to_string(),
            (145_000 + i).to_string(), "-123.45", "2025-06-01 10:11:12+00", "Lockman Group", "POS PURCHASE LOCKMAN GROUP"
        ])).collect::<Vec<_>>()
    }));
    // Requests, error replies, amounts, zip codes, ids.
    bodies.push(json!({"type": "page", "v": 1, "entity": "transactions", "since": "812:820:812,815", "until": null, "after": 123456, "limit": 200}));
    bodies.push(json!({"type": "error", "v": 1, "error": {"code": "limit_too_large", "message": "limit 100000 is outside 1..=200"}}));
    bodies.push(json!({"zip": ["62704", "00501", "99950"], "amounts": ["-1234.56", "99999.99", "0.01"], "ids": [1, 2, 999999999]}));

    let noisy: Vec<_> = bodies
        .iter()
        .flat_map(|b| scan(b, Context::default()))
        .collect();
    assert!(
        noisy.is_empty(),
        "false alarms on clean traffic: {:?}",
        &noisy[..noisy.len().min(5)]
    );
}

#[test]
fn exact_match_finds_a_real_value_in_any_shape_and_nothing_in_masked_output() {
    let mut matcher = ExactMatcher::new([9; 32]);
    for value in [
        "483-77-7589",
        "Lockman",
        "eleanora_lockman1@gmail.com",
        "(332) 425-5381",
    ] {
        assert!(matcher.add(value));
    }
    let leaks = [
        json!({"x": "483 77 7589"}),
        json!({"x": ["４８３７７７５８９"]}),
        json!({"last": "LOCKMAN"}),
        json!({"Lockman": 1}),
        json!({"p": "332.425.5381"}),
    ];
    let context = Context {
        exact: Some(&matcher),
        kept: None,
        reviewed: None,
    };
    for leak in &leaks {
        assert!(
            scan(leak, context)
                .iter()
                .any(|f| f.hit.detector == Detector::SourceValue),
            "{leak}"
        );
    }
    let masked = json!({"columns": ["ssn", "last_name", "email", "phone"], "rows": [["***-**-7589", "L***", "e***@gmail.com", "(***) ***-5381"]]});
    assert!(scan(&masked, context).is_empty());
    // A kept column may hold a word that is also a real surname inside a longer name: there by
    // policy. The same surname as a kept cell's whole, or a real SSN in one, is found.
    let kept: std::collections::HashSet<(String, String)> =
        [("transactions".to_string(), "merchant".to_string())].into();
    let page = |cell: &str| json!({"entity": "transactions", "columns": ["id", "merchant"], "rows": [["1", cell]]});
    let kept_context = Context {
        exact: Some(&matcher),
        kept: Some(&kept),
        reviewed: None,
    };
    assert!(!scan(&page("Lockman Group"), context).is_empty());
    assert!(scan(&page("Lockman Group"), kept_context).is_empty());
    for leak in ["LOCKMAN", "paid for 483 77 7589"] {
        assert!(!scan(&page(leak), kept_context).is_empty(), "{leak}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// Whatever arrives on the wire, in any field, the audit reads it without panicking.
    #[test]
    fn any_text_anywhere_is_scanned_without_panic(text in "\\PC{0,40}", digits in "[0-9０-９٠-٩ -]{0,30}") {
        let mut matcher = ExactMatcher::new([1; 32]);
        matcher.add(&text);
        let body = json!({
            "date_of_birth": text, "dob": digits, "phone": digits, "account_number": digits,
            text.clone(): digits, "columns": ["date_of_birth", "routing_number"], "rows": [[text, digits]],
            "a": digits, "b": digits,
        });
        let _ = scan(&body, Context { exact: Some(&matcher), kept: None, reviewed: None });
    }
}

#[test]
fn a_huge_body_is_scanned_in_windows_and_a_leak_on_a_boundary_is_found() {
    use maskbus_audit::scan_text_in_windows;
    let window = 1 << 16;
    // An issuable SSN straddling the first window boundary, in 1 MB of filler.
    let mut text = "x ".repeat(window / 2 - 5);
    text.push_str("224-30-8280 ");
    text.push_str(&"y ".repeat(500_000));
    let findings = scan_text_in_windows(&text, Context::default(), window, 256);
    assert!(
        !findings.is_empty(),
        "the SSN across the boundary was missed"
    );
    assert!(findings[0].path.contains("as text"), "{}", findings[0].path);
    let clean = "z ".repeat(600_000);
    assert!(scan_text_in_windows(&clean, Context::default(), window, 256).is_empty());
}
