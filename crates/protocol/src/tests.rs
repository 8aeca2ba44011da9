//! The protocol's parsing and shapes, tested as an attacker would send them.

use super::*;
use serde_json::json;

#[test]
fn snapshots_are_checked_for_shape() {
    for good in ["10:14:", "10:14:10,12", "1:1:"] {
        assert!(Snapshot::is_well_formed(good), "{good}");
    }
    for bad in ["", "10", "10:14", "a:b:", "10:14:x", "10:14:1,,2", "-1:2:"] {
        assert!(!Snapshot::is_well_formed(bad), "{bad}");
    }
}

#[test]
fn a_page_request_round_trips() {
    let request = Request::Page {
        v: VERSION,
        entity: "sales.orders".into(),
        since: Some(Snapshot("10:14:10,12".into())),
        until: None,
        after: Some(vec!["41".into(), "2024-01-01".into()]),
        after_tag: Some("a".repeat(CURSOR_TAG_LETTERS)),
        through: Some(vec!["90".into(), "2025-01-01".into()]),
        through_tag: Some("p".repeat(CURSOR_TAG_LETTERS)),
        limit: 200,
        pages: None,
        subset: Some("texas".into()),
    };
    let body = serde_json::to_value(&request).unwrap();
    assert_eq!(body["since"], json!("10:14:10,12"));
    assert_eq!(body["after"], json!(["41", "2024-01-01"]));
    assert_eq!(body["through"], json!(["90", "2025-01-01"]));
    let next = request
        .continuation(
            true,
            None,
            Some(vec!["50".into(), "2024-06-01".into()]),
            Some("b".repeat(CURSOR_TAG_LETTERS)),
        )
        .unwrap();
    assert!(
        matches!(&next, Request::Page { through: Some(t), through_tag: Some(tt), after_tag: Some(at), .. }
            if t[0] == "90" && tt.starts_with('p') && at.starts_with('b')),
        "a range's next request keeps its end, and each cursor its tag"
    );
    assert_eq!(body["subset"], json!("texas"));
    assert_eq!(parse_request(&body), Ok(request));
    // A subset is asked for by name; anything else (SQL, say) is refused before a lookup.
    let mut hostile = body.clone();
    hostile["subset"] = json!("x' OR 1=1 --");
    assert_eq!(
        parse_request(&hostile).map_err(|e| e.code()),
        Err(ErrorCode::UnknownSubset)
    );
}

#[test]
fn bad_requests_get_error_codes_not_panics() {
    let cases = [
        (json!("SELECT * FROM customers"), ErrorCode::Malformed),
        (json!([1, 2]), ErrorCode::Malformed),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 100000}),
            ErrorCode::LimitTooLarge,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 0}),
            ErrorCode::LimitTooLarge,
        ),
        (
            json!({"type": "page", "v": 1, "entity": "customers", "limit": 10}),
            ErrorCode::UnsupportedVersion,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers; DROP TABLE customers", "limit": 10}),
            ErrorCode::UnknownEntity,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "where": "1=1"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "since": "-1"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after": "0 OR 1=1"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id"], "keys": []}),
            ErrorCode::LimitTooLarge,
        ),
        (
            json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id"], "keys": [["1", "2"]]}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id; --"], "keys": [["1"]]}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "a.b.c", "limit": 10}),
            ErrorCode::UnknownEntity,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after": []}),
            ErrorCode::Malformed,
        ),
        (json!({"type": "drop", "v": 1}), ErrorCode::Malformed),
        (
            json!({"type": "changes", "v": 2, "limit": 0}),
            ErrorCode::LimitTooLarge,
        ),
        (
            json!({"type": "changes", "v": 2, "limit": 10, "wait_ms": 3_600_000}),
            ErrorCode::LimitTooLarge,
        ),
        (
            json!({"type": "changes", "v": 2, "limit": 10, "after": "0/1; DROP TABLE t"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "changes", "v": 2, "limit": 10, "join": "all"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "hashes", "v": 2, "entity": "customers", "after": []}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "hashes", "v": 2, "entity": "customers", "through": ["x".repeat(MAX_KEY_VALUE_BYTES + 1)]}),
            ErrorCode::KeyTooLong,
        ),
        (
            json!({"type": "hashes", "v": 2, "entity": "customers; --"}),
            ErrorCode::UnknownEntity,
        ),
        // A cursor's tag comes with its cursor, in a tag's shape.
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after_tag": "a".repeat(32)}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after": ["1"], "after_tag": "0123456789abcdef0123456789abcdef"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "through": ["1"], "through_tag": "a"}),
            ErrorCode::Malformed,
        ),
        (
            json!({"type": "hashes", "v": 2, "entity": "customers", "through_tag": "a".repeat(32)}),
            ErrorCode::Malformed,
        ),
    ];
    // An attacker's 1 MB field name comes back as a short excerpt, not whole.
    let huge = format!("f{}", "x".repeat(1 << 20));
    let error = parse_request(&json!({"type": "page", "v": 2, "entity": "t", "limit": 1, huge: 1}))
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::Malformed);
    let sent = serde_json::to_string(&error).unwrap();
    assert!(sent.len() < 300, "{} bytes", sent.len());
    for (body, code) in cases {
        assert_eq!(parse_request(&body).unwrap_err().code(), code, "{body}");
    }
}

#[test]
fn a_page_reads_the_same_whatever_the_order_of_its_fields() {
    let raw = |text: &str| serde_json::value::RawValue::from_string(text.to_string()).unwrap();
    let fields = r#""v":2,"entity":"public.t","key":["id"],"columns":["id","name"],"rows":[["1",null],["2","b\"c"]],"next_after":["2"],"more":false,"since":null,"until":"5:9:""#;
    let first = ReceivedReply::from_body(&raw(&format!(r#"{{"type":"page",{fields}}}"#)));
    let last = ReceivedReply::from_body(&raw(&format!(r#"{{{fields},"type":"page"}}"#)));
    let (Ok(ReceivedReply::Page(first)), Ok(ReceivedReply::Page(last))) = (first, last) else {
        panic!("both are pages");
    };
    assert_eq!(first, last);
    assert_eq!(first.rows.len(), 2);
    assert_eq!(first.rows.row(1).get(1), Some("b\"c"));
    let error = raw(r#"{"type":"error","v":2,"error":{"code":"malformed","message":"m"}}"#);
    assert!(matches!(
        ReceivedReply::from_body(&error),
        Ok(ReceivedReply::Error { .. })
    ));
    let number_cell = format!(
        r#"{{"type":"page",{}}}"#,
        fields.replace(r#"["1",null]"#, "[1,null]")
    );
    assert!(ReceivedReply::from_body(&raw(&number_cell)).is_err());
}

#[test]
fn a_snapshot_reads_its_bounds_and_running_transactions() {
    let s = Snapshot("10:14:10,12".into());
    assert_eq!(s.bounds(), Some((10, 14)));
    assert_eq!(s.running().collect::<Vec<_>>(), [10, 12]);
    assert_eq!(Snapshot("7:7:".into()).running().count(), 0);
    assert_eq!(Snapshot("nonsense".into()).bounds(), None);
}

#[test]
fn a_ranges_request_asks_for_two_to_the_most_streams() {
    let ask = |streams: u32| json!({"type": "ranges", "v": 2, "entity": "transactions", "streams": streams, "min_rows": 1000});
    assert!(parse_request(&ask(2)).is_ok());
    assert!(parse_request(&ask(MAX_STREAMS)).is_ok());
    for bad in [0, 1, MAX_STREAMS + 1] {
        assert_eq!(
            parse_request(&ask(bad)).unwrap_err().code(),
            ErrorCode::LimitTooLarge
        );
    }
    let long = json!({"type": "page", "v": 2, "entity": "t", "limit": 10, "through": ["x".repeat(MAX_KEY_VALUE_BYTES + 1)]});
    assert_eq!(
        parse_request(&long).unwrap_err().code(),
        ErrorCode::KeyTooLong
    );
}
