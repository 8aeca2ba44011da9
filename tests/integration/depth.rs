//! Masking in depth (issue 28), end to end: a UNIQUE SSN column masked by a pseudonym keeps
//! its values distinct, array elements and JSON keys are masked, and the wire audit, holding the
//! pseudonym key, tells the fakes (shaped like real SSNs) from real values: no finding.

use crate::support::*;
use std::collections::{HashMap, HashSet};

const ROWS: i64 = 100_000;

const SCHEMA: &str = "
    CREATE TABLE people (
        id bigint PRIMARY KEY,
        ssn text NOT NULL UNIQUE,
        tags text[],
        doc jsonb,
        notes text
    );
    INSERT INTO people
    SELECT i,
           -- 100,000 distinct SSNs that could have been issued: areas 101 to 111, group 45.
           lpad((101 + i / 9999)::text, 3, '0') || '-45-' || lpad((1 + i % 9999)::text, 4, '0'),
           CASE WHEN i % 100 = 0
                THEN ARRAY['vip', lpad((101 + i / 9999)::text, 3, '0') || ' 45 ' || lpad((1 + i % 9999)::text, 4, '0'),
                           'dave' || i || '.smith@yahoo.com', NULL]
           END,
           CASE WHEN i % 100 = 0
                THEN jsonb_build_object('tier', 'gold', '224-30-' || lpad((i % 10000)::text, 4, '0'), true,
                                        'meta.source', 'SSN 224' || chr(10) || '30' || chr(10) || '8280', 'big', 12345678901234567890123::numeric)
           END,
           CASE WHEN i % 100 = 0 THEN 'called 224 -- 30 -- 8280, mail dave.smith＠yahoo.com' END
      FROM generate_series(0, 99999) i;";

const POLICY: &str = r#"
[people]
id = "keep"
ssn = { pseudonym = "ssn" }
tags = "scrub"
doc = { json = { "$.tier" = "keep", "$.meta.source" = "keep", "$.big" = "keep" } }
notes = "scrub"
"#;

#[tokio::test]
async fn a_unique_ssn_column_syncs_under_a_pseudonym_with_as_many_fakes_and_audits_clean() {
    let test = "depth_unique";
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(SCHEMA)
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let policy = files.write("policy.toml", POLICY);
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &policy,
    ])
    .success();
    let (producer, consumer) = write_agent_configs(
        &files,
        &crate::zoo::zoo_urls(&dbs),
        &format!("policy = \"{policy}\"\n"),
        "",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    let rows = |url: String| async move {
        connect(&url)
            .await
            .query(
                "SELECT id, ssn, tags::text, doc::text, notes FROM people ORDER BY id",
                &[],
            )
            .await
            .unwrap()
    };
    let (real, masked) = (rows(dbs.url("src")).await, rows(dbs.url("dst")).await);
    assert_eq!(masked.len() as i64, ROWS);
    let real_ssns: HashMap<i64, String> = real.iter().map(|r| (r.get(0), r.get(1))).collect();
    let fakes: HashSet<String> = masked.iter().map(|r| r.get::<_, String>(1)).collect();
    assert_eq!(
        fakes.len() as i64,
        ROWS,
        "100,000 SSNs, 100,000 distinct fakes"
    );
    for row in &masked {
        let (id, fake): (i64, String) = (row.get(0), row.get(1));
        assert_ne!(real_ssns[&id], fake, "row {id} kept its SSN");
        assert!(
            maskbus_pii::is_issuable_ssn_text(&fake),
            "{fake}: SSN-shaped and valid"
        );
    }
    let sample = masked.iter().find(|r| r.get::<_, i64>(0) == 500).unwrap();
    let tags: String = sample.get(2);
    assert!(
        tags == "{vip,\"### ## ####\",d***@yahoo.com,NULL}",
        "each element scrubbed: {tags}"
    );
    let doc: serde_json::Value = serde_json::from_str(&sample.get::<_, String>(3)).unwrap();
    assert_eq!(doc["tier"], "gold");
    assert_eq!(
        doc["meta.source"], "SSN ###\n##\n####",
        "a member named meta.source is not the path $.meta.source"
    );
    assert!(
        doc.get("###-##-####").is_some(),
        "the key holding an SSN is masked: {doc}"
    );
    assert!(
        sample
            .get::<_, String>(3)
            .contains("12345678901234567890123"),
        "a kept number keeps its digits"
    );
    assert_eq!(
        sample.get::<_, String>(4),
        "called ### -- ## -- ####, mail d***＠yahoo.com"
    );
    // The fakes look like real SSNs; the audit holds the key (the producer's config) and
    // tells them apart: no finding.
    crate::zoo::assert_audit_clean(&dbs, &producer);
    // Without the key the fakes cannot be told from real SSNs, and the audit says so.
    let keyless = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--source",
        &dbs.url("src"),
        "--policy",
        &policy,
    ]);
    assert_ne!(keyless.code, 0, "{}", keyless.stderr);
    assert!(
        keyless
            .stderr
            .contains("only the pseudonym key tells them apart"),
        "{}",
        keyless.stderr
    );
}
