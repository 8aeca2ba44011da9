//! The egress guard's time per row beside the masking's, on one core: run by hand with
//! `cargo test --release -p maskbus-mask --test guard_cost -- --ignored --nocapture` (the
//! ratio travels, not the figures; `scripts/bench` row 6b measures it against the sync).

use maskbus_mask::{Policy, PseudonymKey};
use std::time::Instant;

#[test]
#[ignore = "a measurement, run by hand in release"]
fn the_guards_share_of_masking() {
    let policy = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"bench key"));
    let columns: Vec<String> = ["id", "account_id", "amount", "description", "posted_at"]
        .map(String::from)
        .to_vec();
    let masker = policy.masker("transactions", &columns).unwrap();
    let rows: Vec<Vec<Option<String>>> = (0..100_000)
        .map(|i| {
            vec![
                Some(i.to_string()),
                Some((i % 977).to_string()),
                Some(format!("{}.{:02}", i % 5000, i % 100)),
                Some(
                    [
                        "coffee at the corner",
                        "rent for March",
                        "transfer to savings",
                    ][i % 3]
                        .into(),
                ),
                Some("2024-03-05 12:34:56+00".into()),
            ]
        })
        .collect();
    let started = Instant::now();
    let masked: Vec<_> = rows
        .iter()
        .map(|r| masker.mask(r.clone()).unwrap())
        .collect();
    let with_guard = started.elapsed();
    let check = maskbus_audit::RowCheck::new(
        "public.transactions",
        columns.iter().map(String::as_str),
        maskbus_audit::Context::default(),
    );
    let started = Instant::now();
    for row in &masked {
        let cells: Vec<Option<&str>> = row.values().iter().map(Option::as_deref).collect();
        std::hint::black_box(check.check(&cells));
    }
    let guard_alone = started.elapsed();
    // With an exact matcher of a million real values, as a producer loads them.
    let mut matcher = maskbus_audit::ExactMatcher::new([5; 32]);
    for i in 0..500_000 {
        matcher.add(&format!("surname{i}"));
        matcher.add(&format!("{:09}", 100_000_000 + i * 7));
    }
    let exact = maskbus_audit::RowCheck::new(
        "public.transactions",
        columns.iter().map(String::as_str),
        maskbus_audit::Context {
            exact: Some(&matcher),
            kept: None,
            reviewed: None,
        },
    );
    let started = Instant::now();
    for row in &masked {
        let cells: Vec<Option<&str>> = row.values().iter().map(Option::as_deref).collect();
        std::hint::black_box(exact.check(&cells));
    }
    let with_exact = started.elapsed();
    println!(
        "the guard with an exact matcher of {} values: {with_exact:?} ({:.0} rows/s)",
        matcher.len(),
        100_000.0 / with_exact.as_secs_f64()
    );
    println!(
        "100,000 transactions: masked with the guard in {with_guard:?}, the guard alone {guard_alone:?} ({:.0} rows/s): the guard is {:.2} of masking",
        100_000.0 / guard_alone.as_secs_f64(),
        guard_alone.as_secs_f64() / with_guard.as_secs_f64()
    );
}

#[test]
#[ignore = "a measurement, run by hand in release"]
fn the_guards_cost_by_cell() {
    let mut matcher = maskbus_audit::ExactMatcher::new([5; 32]);
    for i in 0..100_000 {
        matcher.add(&format!("surname{i}"));
        matcher.add(&format!("{:09}", 100_000_000 + i * 7));
    }
    let kept: std::collections::HashSet<(String, String)> = [
        ("public.c".to_string(), "id".to_string()),
        ("public.c".to_string(), "created_at".to_string()),
    ]
    .into();
    for (column, value) in [
        ("id", "12345"),
        ("email", "p***@yahoo.com"),
        ("phone", "(***) ***-0143"),
        ("created_at", "2024-03-05 12:34:56+00"),
    ] {
        for exact in [None, Some(&matcher)] {
            let check = maskbus_audit::RowCheck::new(
                "public.c",
                [column],
                maskbus_audit::Context {
                    exact,
                    kept: Some(&kept),
                    reviewed: None,
                },
            );
            let started = Instant::now();
            for _ in 0..100_000 {
                std::hint::black_box(check.check(&[Some(value)]));
            }
            println!(
                "{column:<12} exact {:<5} {:>6.0} ns",
                exact.is_some(),
                started.elapsed().as_nanos() as f64 / 100_000.0
            );
        }
    }
}
