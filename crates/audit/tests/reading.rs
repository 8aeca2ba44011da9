//! How values are read (issue 52): numbers in exponent form by their digits, documents inside
//! cells for what their text does not show, kept cells for distinctive real values, and
//! identifiers as names.

use maskbus_audit::{scan_text, Context, Detector, ExactMatcher, Finding, Scanner};
use std::collections::HashSet;

fn detectors(findings: &[Finding]) -> Vec<Detector> {
    findings.iter().map(|f| f.hit.detector).collect()
}

fn found(body: &str) -> Vec<Detector> {
    detectors(&scan_text(body, Context::default()).unwrap())
}

/// An SSN or a card in exponent form is read by its digits wherever it sits: a JSON number, a
/// string (as a spreadsheet writes a number), a cell, a field of a document in a cell. Each is
/// found as the same number written plainly is.
#[test]
fn a_number_in_exponent_form_is_read_as_the_same_number_written_plainly() {
    let forms = [
        ("2.2430828e8", "224308280", Detector::Ssn),
        ("2.2430828E+08", "224308280", Detector::Ssn),
        ("22430828e1", "224308280", Detector::Ssn),
        ("0.22430828e9", "224308280", Detector::Ssn),
        ("4.111111111111111e15", "4111111111111111", Detector::Card),
    ];
    for (exponent, plain, detector) in forms {
        for shape in [
            r#"{"n":NUMBER}"#,
            r#"{"n":"NUMBER"}"#,
            r#"{"n":" NUMBER "}"#,
            r#"{"columns":["a"],"rows":[["NUMBER"]]}"#,
            r#"{"columns":["a"],"rows":[[NUMBER]]}"#,
            r#"{"columns":["doc"],"rows":[["{\"x\":NUMBER}"]]}"#,
        ] {
            let written = |n: &str| found(&shape.replace("NUMBER", n));
            assert_eq!(written(exponent), [detector], "{exponent} in {shape}");
            assert_eq!(written(exponent), written(plain), "{exponent} in {shape}");
        }
    }
    // Under a measure's name it is that measure, in either notation.
    assert_eq!(found(r#"{"bytes":"2.2430828e8"}"#), []);
    assert_eq!(found(r#"{"bytes":"224308280"}"#), []);
    // Not integral, or no number at all: nothing to read.
    for clean in [
        "2.2430828e-8",
        "2.5e3",
        "1e400",
        "e8",
        "2.2430828e",
        "version 2.2430828e8x",
    ] {
        assert_eq!(found(&format!(r#"{{"n":"{clean}"}}"#)), [], "{clean}");
    }
}

/// A document in a cell is read for what the cell's text does not show (escapes, numbers in
/// another notation, values split over its fields), never twice for what it does.
#[test]
fn a_document_in_a_cell_adds_what_its_text_hides_and_nothing_twice() {
    let cell = |doc: &str| {
        let body = serde_json::json!({"columns": ["id", "payload"], "rows": [["1", doc]]});
        found(&body.to_string())
    };
    assert_eq!(cell(r#"{"ssn":"224-30-8280"}"#), [Detector::Ssn]);
    assert_eq!(cell(r#"{"ssn":224308280}"#), [Detector::Ssn]);
    assert_eq!(
        cell(r#"{"ssn":"\u0032\u0032\u0034-30-8280"}"#),
        [Detector::Ssn]
    );
    assert_eq!(cell(r#"{"ssn":2.2430828e8}"#), [Detector::Ssn]);
    assert_eq!(
        cell(r#"{"\u0032\u0032\u0034308280":"key"}"#),
        [Detector::Ssn]
    );
    assert_eq!(cell(r#"{"theme":"dark","lang":"en"}"#), []);
}

fn page_with_kept_log(cells: &[&str]) -> String {
    let rows: Vec<serde_json::Value> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| serde_json::json!([i.to_string(), c]))
        .collect();
    serde_json::json!({
        "type": "page", "entity": "public.django_admin_log",
        "columns": ["id", "object_repr"], "rows": rows,
    })
    .to_string()
}

/// A kept column is searched for real values where they are distinctive: a username that is
/// a kept log's whole cell is found, as is a value of digits, of several words or of letters
/// and digits anywhere in it; a surname inside a merchant's name is there by policy.
#[test]
fn a_kept_cell_is_searched_for_distinctive_real_values() {
    let mut matcher = ExactMatcher::new([3; 32]);
    for real in [
        "jdoe",
        "asmith77",
        "Lockman",
        "224-30-8280",
        "Eleanora Lockman",
    ] {
        matcher.add(real);
    }
    let kept: HashSet<(String, String)> = [(
        "public.django_admin_log".to_string(),
        "object_repr".to_string(),
    )]
    .into();
    let context = Context {
        exact: Some(&matcher),
        kept: Some(&kept),
        reviewed: None,
    };
    let mut scanner = Scanner::default();
    let mut scan = |cells: &[&str]| {
        detectors(
            &scanner
                .scan_text(&page_with_kept_log(cells), context)
                .unwrap(),
        )
    };
    for leak in [
        "jdoe",
        "JDoe",
        "changed by asmith77",
        "ssn 224 30 8280 on file",
        "letter to Eleanora LOCKMAN",
    ] {
        assert!(scan(&[leak]).contains(&Detector::SourceValue), "{leak}");
    }
    for by_policy in [
        "Lockman Group",
        "POS PURCHASE LOCKMAN GROUP",
        "jdoe and friends",
    ] {
        assert_eq!(scan(&[by_policy]), [], "{by_policy}");
    }
    // Reviewed, the column is not read at all.
    let reviewed = kept.clone();
    let reviewed_context = Context {
        reviewed: Some(&reviewed),
        ..context
    };
    let body = page_with_kept_log(&["jdoe"]);
    assert_eq!(scan_text(&body, reviewed_context).unwrap(), []);
}

/// An index's name with `account` in it and a hash a framework appended is read as a name: not
/// an account number, under any key, in any schema reply.
#[test]
fn an_identifier_with_a_hash_suffix_is_no_account_number() {
    let name = "account_emailaddress_user_id_2c513194";
    let definition =
        format!("CREATE INDEX {name} ON public.account_emailaddress USING btree (user_id)");
    let bodies = [
        serde_json::json!({ name: definition }),
        serde_json::json!({"indexes": [{"table": {"schema": "public", "name": "account_emailaddress"}, "name": name, "definition": definition}]}),
    ];
    for body in bodies {
        assert_eq!(found(&body.to_string()), [], "{body}");
    }
    assert_eq!(maskbus_audit::name_looks_like_pii(name), None);
    assert_eq!(maskbus_audit::sql_looks_like_pii(name, &definition), None);
}
