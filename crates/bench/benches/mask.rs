//! Masking bank-customer rows on one core: the figure behind "at least 1,000,000 rows/s/core".
//!
//! The rows carry every customer column, so the run covers the bank policy's heaviest table:
//! a keyed pseudonym, first_letter, email, ssn, year_only and last_four, plus keeps.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use maskbus_mask::{Policy, PseudonymKey};
use std::hint::black_box;

const ROWS: usize = 10_000;

fn customer_rows() -> Vec<Vec<Option<String>>> {
    (0..ROWS)
        .map(|i| {
            vec![
                Some(i.to_string()),
                Some(["Alice", "Bob", "Carmen", "Dmitri"][i % 4].to_string()),
                Some(["Johnson", "Okafor", "Nguyen", "Smith"][i % 4].to_string()),
                Some(format!("person.number{i}@yahoo.com")),
                Some(format!(
                    "{:03}-{:02}-{:04}",
                    100 + i % 700,
                    1 + i % 98,
                    1 + i % 9998
                )),
                Some(format!(
                    "19{:02}-{:02}-{:02}",
                    40 + i % 60,
                    1 + i % 12,
                    1 + i % 28
                )),
                (i % 10 != 0).then(|| format!("(212) 555-{:04}", i % 10_000)),
                Some("2024-03-05 12:34:56+00".to_string()),
            ]
        })
        .collect()
}

fn mask_customers(c: &mut Criterion) {
    let policy = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"bench key"));
    let columns: Vec<String> = [
        "id",
        "first_name",
        "last_name",
        "email",
        "ssn",
        "date_of_birth",
        "phone",
        "created_at",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let masker = policy.masker("customers", &columns).unwrap();
    let rows = customer_rows();
    let mut group = c.benchmark_group("mask");
    group.throughput(Throughput::Elements(ROWS as u64));
    // The baseline, in the same run: merely moving the same rows (no masking).
    group.bench_function("clone_rows", |b| {
        b.iter_batched(
            || rows.clone(),
            |rows| {
                for row in rows {
                    black_box(row);
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("customers_rows", |b| {
        b.iter_batched(
            || rows.clone(),
            |rows| {
                for row in rows {
                    black_box(masker.mask(row).unwrap());
                }
            },
            BatchSize::LargeInput,
        )
    });
    // The egress guard's share of that: the audit's checks of each masked row (the cells the
    // guard reads, kept ones as kept), with an exact matcher of 200,000 real values, as a
    // producer runs them.
    let mut matcher = maskbus_audit::ExactMatcher::new([5; 32]);
    for i in 0..100_000 {
        matcher.add(&format!("surname{i}"));
        matcher.add(&format!("{:09}", 100_000_000 + i * 7));
    }
    let rules = policy.entity("customers").unwrap();
    let kept: std::collections::HashSet<(String, String)> = columns
        .iter()
        .filter(|c| rules.rule(c) == Some(&maskbus_mask::Rule::Keep))
        .map(|c| ("public.customers".to_string(), c.clone()))
        .collect();
    let read: Vec<bool> = columns
        .iter()
        .map(|c| rules.rule(c).is_some_and(maskbus_mask::egress::reads))
        .collect();
    let check = maskbus_audit::RowCheck::new(
        "public.customers",
        columns.iter().map(String::as_str),
        maskbus_audit::Context {
            exact: Some(&matcher),
            kept: Some(&kept),
            reviewed: None,
        },
    );
    let masked: Vec<Vec<Option<String>>> = rows
        .iter()
        .map(|r| {
            let row = masker.mask(r.clone()).unwrap();
            row.values()
                .iter()
                .zip(&read)
                .map(|(v, read)| v.clone().filter(|_| *read))
                .collect()
        })
        .collect();
    group.bench_function("guard_rows", |b| {
        b.iter(|| {
            for row in &masked {
                let cells: Vec<Option<&str>> = row.iter().map(Option::as_deref).collect();
                black_box(check.check(&cells));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, mask_customers);
criterion_main!(benches);
