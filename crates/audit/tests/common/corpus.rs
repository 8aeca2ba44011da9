//! The audit's corpora, shared by its tests and by `scripts/bench` (which prints precision and
//! recall on them): planted leaks that must all be found, and clean data of other domains on
//! which nothing may be.

use maskbus_audit::Detector;
use serde_json::{json, Value};

fn parse(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// Leaks planted in every shape an evader (or an accident) gives them, with the detector that
/// must find each.
pub fn planted() -> Vec<(&'static str, Value, Detector)> {
    vec![
        ("plain ssn", json!({"note": "224-30-8280"}), Detector::Ssn),
        ("bare ssn", json!({"note": "224308280"}), Detector::Ssn),
        ("spaced ssn", json!({"note": "224 30 8280"}), Detector::Ssn),
        ("dotted ssn", json!({"note": "224.30.8280"}), Detector::Ssn),
        ("slashed ssn", json!({"note": "224/30/8280"}), Detector::Ssn),
        ("ssn as a number", json!({"n": 224308280}), Detector::Ssn),
        (
            "plain card",
            json!({"pan": "4111111111111111"}),
            Detector::Card,
        ),
        (
            "spaced card",
            json!({"x": "4111 1111 1111 1111"}),
            Detector::Card,
        ),
        (
            "dashed card",
            json!({"x": "4111-1111-1111-1111"}),
            Detector::Card,
        ),
        (
            "dotted card",
            json!({"x": "4111.1111.1111.1111"}),
            Detector::Card,
        ),
        ("amex", json!({"x": "3782 822463 10005"}), Detector::Card),
        (
            "19-digit card",
            json!({"x": "6011000990139424124"}),
            Detector::Card,
        ),
        (
            "zero-width ssn",
            json!({"x": "224\u{200B}-30-\u{200D}8280"}),
            Detector::Ssn,
        ),
        (
            "zero-width card",
            json!({"x": "4111\u{2060}1111\u{FEFF}1111\u{200C}1111"}),
            Detector::Card,
        ),
        (
            "full-width ssn",
            json!({"x": "２２４-３０-８２８０"}),
            Detector::Ssn,
        ),
        (
            "full-width card",
            json!({"x": "４１１１ １１１１ １１１１ １１１１"}),
            Detector::Card,
        ),
        (
            "arabic-indic ssn",
            json!({"x": "٢٢٤-٣٠-٨٢٨٠"}),
            Detector::Ssn,
        ),
        (
            "escaped ssn",
            parse(r#"{"x": "\u0032\u0032\u0034-30-8280"}"#),
            Detector::Ssn,
        ),
        (
            "escaped card",
            parse(r#"{"x": "\u0034111111111111111"}"#),
            Detector::Card,
        ),
        (
            "card split over fields",
            json!({"a": "4111 1111", "b": "1111 1111"}),
            Detector::Card,
        ),
        (
            "card split in four",
            json!({"p1": "4111", "p2": "1111", "p3": "1111", "p4": "1111"}),
            Detector::Card,
        ),
        (
            "ssn split over fields",
            json!({"area": "224", "group": "30", "serial": "8280"}),
            Detector::Ssn,
        ),
        ("ssn in a key", json!({"224-30-8280": true}), Detector::Ssn),
        (
            "card in a key",
            json!({"cards": {"4111111111111111": "visa"}}),
            Detector::Card,
        ),
        (
            "nested arrays",
            json!({"a": [[1, [{"b": ["x", "224-30-8280"]}]]]}),
            Detector::Ssn,
        ),
        (
            "unmasked email",
            json!({"contact": "dave@yahoo.com"}),
            Detector::Email,
        ),
        (
            "email in prose",
            json!({"note": "write to Eleanora.Lockman@gmail.com today"}),
            Detector::Email,
        ),
        ("phone", json!({"x": "(212) 555-0143"}), Detector::Phone),
        (
            "phone by field name",
            json!({"phone": "2125550143"}),
            Detector::Phone,
        ),
        (
            "intl phone",
            json!({"x": "+1 212 555 0143"}),
            Detector::Phone,
        ),
        (
            "routing number",
            json!({"routing_number": "021000021"}),
            Detector::RoutingNumber,
        ),
        (
            "account number",
            json!({"account_number": "123456789"}),
            Detector::AccountNumber,
        ),
        (
            "birth date",
            json!({"date_of_birth": "1987-04-04"}),
            Detector::BirthDate,
        ),
        (
            "unmasked page column",
            json!({"columns": ["id", "routing_number", "date_of_birth"], "rows": [["1", "021000021", "1987-04-04"]]}),
            Detector::RoutingNumber,
        ),
        (
            "birth date in a page",
            json!({"columns": ["id", "date_of_birth"], "rows": [["1", "1987-04-04"]]}),
            Detector::BirthDate,
        ),
        (
            "ssn behind a 0: prefix",
            json!({"v": "0:224308280"}),
            Detector::Ssn,
        ),
        (
            "card behind a 1: prefix",
            json!({"v": "1:4111111111111111"}),
            Detector::Card,
        ),
        (
            "US birth date",
            json!({"dob": "04/23/1987"}),
            Detector::BirthDate,
        ),
        (
            "European birth date",
            json!({"born": "23.04.1987"}),
            Detector::BirthDate,
        ),
        (
            "full-width ssn",
            json!({"note": "２２４-３０-８２８０"}),
            Detector::Ssn,
        ),
        (
            "Arabic-Indic card",
            json!({"note": "٤١١١ ١١١١ ١١١١ ١١١١"}),
            Detector::Card,
        ),
        // Issue 28's held-out forms.
        (
            "ssn over line breaks",
            json!({"note": "224\n30\n8280"}),
            Detector::Ssn,
        ),
        (
            "ssn over hashes",
            json!({"note": "224#30#8280"}),
            Detector::Ssn,
        ),
        (
            "ssn over long dashes",
            json!({"note": "224 -- 30 -- 8280"}),
            Detector::Ssn,
        ),
        ("ssn over x", json!({"note": "224x30x8280"}), Detector::Ssn),
        (
            "ssn with a joining word",
            json!({"note": "224-30 and 8280"}),
            Detector::Ssn,
        ),
        (
            "superscript ssn",
            json!({"note": "²²⁴-³⁰-⁸²⁸⁰"}),
            Detector::Ssn,
        ),
        ("circled ssn", json!({"note": "②②④-③⓪-⑧②⑧⓪"}), Detector::Ssn),
        (
            "float form of an ssn",
            parse(r#"{"n": 2.2430828e8}"#),
            Detector::Ssn,
        ),
        (
            "second email after a comma",
            json!({"to": "a@b.co,dave.smith@yahoo.com"}),
            Detector::Email,
        ),
        (
            "email after a line break",
            json!({"note": "call\ndave.smith@yahoo.com"}),
            Detector::Email,
        ),
        (
            "full-width at sign",
            json!({"note": "dave.smith＠yahoo.com"}),
            Detector::Email,
        ),
        (
            "full-width dot",
            json!({"note": "dave.smith@yahoo．com"}),
            Detector::Email,
        ),
        (
            "email on a host without a dot",
            json!({"note": "dave.smith@intranet"}),
            Detector::Email,
        ),
        (
            "email with the at sign as a word",
            json!({"note": "write to dave.smith (at) yahoo.com"}),
            Detector::Email,
        ),
        (
            "email with the at sign as an entity",
            json!({"note": "dave.smith&#64;yahoo.com"}),
            Detector::Email,
        ),
        (
            "email with the at sign percent-encoded",
            json!({"note": "mailto:dave.smith%40yahoo.com"}),
            Detector::Email,
        ),
        (
            "ssn split by markup",
            json!({"html": "<p>SSN 224<br>30<br>8280</p>"}),
            Detector::Ssn,
        ),
        (
            "ssn split over table cells",
            json!({"html": "<tr><td>224</td><td>30</td><td>8280</td></tr>"}),
            Detector::Ssn,
        ),
        (
            "ssn with a Hangul vowel as dashes",
            json!({"note": "224ㅡ30ㅡ8280"}),
            Detector::Ssn,
        ),
        (
            "email as a JSON key",
            json!({"dave.smith@yahoo.com": "primary"}),
            Detector::Email,
        ),
        (
            "ssn as a JSON key",
            json!({"224-30-8280": true}),
            Detector::Ssn,
        ),
        (
            "card over four string fields",
            json!({"pay": {"a": "4111", "b": "1111", "c": "1111", "d": "1111"}}),
            Detector::Card,
        ),
        (
            "card over four numeric fields",
            json!({"pay": {"a": 4111, "b": 1111, "c": 1111, "d": 1111}}),
            Detector::Card,
        ),
        (
            "ssn over two fields",
            json!({"a": "224-30", "b": "8280"}),
            Detector::Ssn,
        ),
        (
            "card split inside a JSON document in a cell",
            json!({"columns": ["id", "doc"], "rows": [["1", "{\"a\":\"4111\",\"b\":\"1111\",\"c\":\"1111\",\"d\":\"1111\"}"]]}),
            Detector::Card,
        ),
        (
            "ssn over two cells of a row",
            json!({"columns": ["id", "ssn_a", "ssn_b"], "rows": [["1", "224-30", "8280"]]}),
            Detector::Ssn,
        ),
        (
            "card over four cells of a row",
            json!({"columns": ["c1", "c2", "c3", "c4"], "rows": [["4111", "1111", "1111", "1111"]]}),
            Detector::Card,
        ),
        (
            "birth date with a month's name",
            json!({"date_of_birth": "July 23, 1984"}),
            Detector::BirthDate,
        ),
        (
            "birth date day first",
            json!({"dob": "23 Jul 1984"}),
            Detector::BirthDate,
        ),
        (
            "birth date in free text",
            json!({"note": "born 23rd July 1984 in Ohio"}),
            Detector::BirthDate,
        ),
        (
            "ssn in exponent form, as a spreadsheet writes it",
            json!({"columns": ["id", "tax_id"], "rows": [["1", "2.2430828E+08"]]}),
            Detector::Ssn,
        ),
        (
            "card in exponent form in a document in a cell",
            json!({"columns": ["id", "payload"], "rows": [["1", "{\"pan\": 4.111111111111111e15}"]]}),
            Detector::Card,
        ),
        (
            "escaped ssn in a document in a cell",
            json!({"columns": ["id", "payload"], "rows": [["1", "{\"note\": \"\\u0032\\u0032\\u0034-30-8280\"}"]]}),
            Detector::Ssn,
        ),
    ]
}

/// Clean traffic that once cost users hours of false alarms (issue 52), each read as the wire
/// audit reads it with the producer's config: real values of the source in the exact matcher
/// (less any that is its column's own name, as the audit loads them), the policy's kept
/// columns, the auditor's reviewed ones.
pub struct Judged {
    pub name: &'static str,
    pub body: Value,
    /// (column, real value) of the source's masked columns.
    pub real: Vec<(&'static str, &'static str)>,
    /// (entity, column) the policy keeps.
    pub kept: Vec<(&'static str, &'static str)>,
    /// (entity, column) an auditor reviewed as holding no PII.
    pub reviewed: Vec<(&'static str, &'static str)>,
}

pub fn clean_judged() -> Vec<Judged> {
    let users = |password: &str| {
        json!({
            "type": "page", "v": 2, "entity": "public.auth_user",
            "columns": ["id", "username", "password", "last_login"],
            "rows": (1..=50).map(|i| json!([i.to_string(), format!("u{i:03}"), password, "2025-03-01 10:11:12+00"])).collect::<Vec<_>>(),
        })
    };
    let index = "account_emailaddress_user_id_2c513194";
    let definition =
        format!("CREATE INDEX {index} ON public.account_emailaddress USING btree (user_id)");
    let settings: Vec<Value> = (1..=50)
        .map(|i| {
            json!([
                i.to_string(),
                format!("{{\"theme\": \"dark\", \"support_line\": \"(212) 555-{:04}\", \"build\": 224308280}}", 100 + i)
            ])
        })
        .collect();
    vec![
        Judged {
            name: "every password is the literal `password`, its column's name",
            body: users("[REDACTED]"),
            real: vec![
                ("password", "password"),
                ("password", "Password"),
                ("password", "PASSWORD"),
                ("username", "eleanora_lockman1"),
            ],
            kept: vec![("public.auth_user", "last_login")],
            reviewed: vec![],
        },
        Judged {
            name: "a schema reply naming the column `password`",
            body: json!({"type": "schema", "v": 2, "schema": {"tables": [{"table": {"schema": "public", "name": "auth_user"}, "columns": [{"name": "password", "sql_type": "text", "not_null": true}]}]}, "left_out": []}),
            real: vec![("password", "password"), ("Password", "PASSWORD")],
            kept: vec![],
            reviewed: vec![],
        },
        Judged {
            name: "an index name with `account` and a hash suffix",
            body: json!({"type": "schema", "v": 2, "schema": {"indexes": [{"table": {"schema": "public", "name": "account_emailaddress"}, "name": index, "definition": definition}]}, "left_out": []}),
            real: vec![],
            kept: vec![],
            reviewed: vec![],
        },
        Judged {
            name: "an index name with a hash suffix as a key",
            body: json!({ index: definition, "account_emailaddress_email_03be32b2_like": "CREATE INDEX ... (email varchar_pattern_ops)" }),
            real: vec![],
            kept: vec![],
            reviewed: vec![],
        },
        Judged {
            name: "a json column kept leaf by leaf on purpose, reviewed",
            body: json!({"type": "page", "v": 2, "entity": "public.accounts", "columns": ["id", "settings"], "rows": settings}),
            real: vec![("email", "eleanora_lockman1@gmail.com")],
            kept: vec![],
            reviewed: vec![("public.accounts", "settings")],
        },
    ]
}

/// Clean rows of retail orders, HR records and clinic visits: identifiers that identify no
/// person, amounts, ZIP+4 codes, addresses, floats, uuids, IPs, timestamps.
pub fn clean_other_domains() -> Vec<Value> {
    const DEPARTMENTS: [&str; 3] = ["Finance", "Ops", "Retail"];
    let mut bodies = Vec::new();
    for i in 0u64..300 {
        bodies.push(json!({
            "order_id": 100_000 + i, "sku": format!("SKU-{:05}-{}", i * 7, i % 9),
            "total": format!("{}.{:02}", 10 + i * 37 % 9000, i % 100),
            "total_thousands": format!("{},{:03}.{:02}", 1 + i % 9, i * 13 % 1000, i % 100),
            "zip": format!("{:05}-{:04}", 10_000 + i * 211 % 89_999, i * 7 % 10_000),
            "placed_at": format!("2025-{:02}-{:02} {:02}:{:02}:{:02}.{:06}+00", 1 + i % 12, 1 + i % 28, i % 24, i % 60, i % 60, i * 997 % 1_000_000),
            "ship_to": format!("{} Market Street, Suite {}", 100 + i, i % 50),
            "weight_kg": (i as f64) / 3.0 + 0.1,
            "tracking": format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", i * 2_654_435_761 % 4_294_967_296, i % 65_536, (i * 31) % 65_536, (i * 17) % 65_536, i * 1_000_003),
            "client_ip": format!("10.{}.{}.{}", i % 256, (i * 3) % 256, (i * 7) % 256),
        }));
        bodies.push(json!({
            "employee_no": format!("E{:06}", i), "department": DEPARTMENTS[i as usize % 3],
            "salary": 40_000 + i * 113, "started_on": format!("20{:02}-0{}-1{}", 10 + i % 15, 1 + i % 9, i % 9),
            "office_ext": format!("x{}", 1000 + i), "badge": format!("B-{}-{}", i % 97, i % 13),
        }));
        bodies.push(json!({
            "visit": i, "clinic": format!("Clinic {}", i % 40), "room": format!("{}{:02}", 1 + i % 5, i % 30),
            "duration_min": 15 + i % 45, "copay": format!("{}.00", 10 + i % 40),
            "at": format!("2026-01-{:02}T{:02}:{:02}:00Z", 1 + i % 28, 8 + i % 9, i % 60),
        }));
    }
    bodies
}
