//! The wire audit's precision and recall on its corpora (crates/audit/tests/common/corpus.rs):
//! every planted leak should be found by the detector meant for it (recall), and clean data of
//! other domains, plus real bank rows masked by the real policy, should give no finding
//! (precision). Prints one JSON line for scripts/bench.

#[path = "../../../audit/tests/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use maskbus_audit::{scan, Context};
use maskbus_mask::{Policy, PseudonymKey};
use serde_json::{json, Value};

/// Masked bank rows in the reply shape: clean traffic as maskbus really sends it.
fn masked_bank_pages() -> Vec<Value> {
    let Ok(policy) = Policy::bank() else {
        return Vec::new();
    };
    let policy = policy.with_key(PseudonymKey::new(b"audit-quality"));
    let columns = [
        "id",
        "first_name",
        "last_name",
        "email",
        "ssn",
        "date_of_birth",
        "phone",
        "created_at",
    ];
    let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let Ok(masker) = policy.masker("customers", &names) else {
        return Vec::new();
    };
    let customers: Vec<_> = maskbus_bank::generate::customers(7, 1, 300).collect();
    customers
        .chunks(50)
        .map(|chunk| {
            let rows: Vec<Value> = chunk
                .iter()
                .filter_map(|c| masker.mask(c.text_values()).ok())
                .map(|row| json!(row.values()))
                .collect();
            json!({"type": "page", "v": 2, "entity": "public.customers", "columns": columns, "rows": rows})
        })
        .collect()
}

/// Whether a judged clean body gives no finding.
fn judged_clean(case: &corpus::Judged) -> bool {
    use std::collections::HashSet;
    let mut matcher = maskbus_audit::ExactMatcher::new([5; 32]);
    for (column, value) in &case.real {
        if !maskbus_audit::exact::is_its_column_name(column, value) {
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
    scan(&case.body, context).is_empty()
}

fn main() {
    let planted = corpus::planted();
    let found = planted
        .iter()
        .filter(|(_, body, detector)| {
            scan(body, Context::default())
                .iter()
                .any(|f| f.hit.detector == *detector)
        })
        .count();
    let mut clean = corpus::clean_other_domains();
    clean.extend(masked_bank_pages());
    let mut noisy = clean
        .iter()
        .filter(|body| !scan(body, Context::default()).is_empty())
        .count();
    // The false alarms of issue 52, read with the source's real values, kept and reviewed
    // columns, as the wire audit reads them with the producer's config.
    let judged = corpus::clean_judged();
    noisy += judged.iter().filter(|case| !judged_clean(case)).count();
    let clean_count = clean.len() + judged.len();
    let recall = found as f64 / planted.len().max(1) as f64;
    // Per message: of the messages flagged, how many held a leak.
    let precision = found as f64 / (found + noisy).max(1) as f64;
    println!(
        "{}",
        json!({
            "bench": "audit_quality", "planted": planted.len(), "found": found,
            "clean": clean_count, "false_alarms": noisy, "recall": recall, "precision": precision,
        })
    );
}
