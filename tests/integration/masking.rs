//! The masking boundary against a real schema: `maskbus policy check`, and masked rows of a
//! seeded bank going back into the same column types.

use crate::support::{bank_databases, connect, maskbus, BANK_POLICY_PATH};
use maskbus_pii::{is_issuable_ssn_text, luhn_valid};

#[tokio::test]
async fn the_bank_policy_fits_the_bank_schema() {
    let dbs = bank_databases("policy_ok").await;
    let run = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
    ])
    .success();
    assert!(
        run.stdout
            .contains("| public.customers | ssn | character varying(11) | ssn | ok |"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("0 errors, 0 warnings"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn policy_check_flags_schema_drift_and_exits_1() {
    let dbs = bank_databases("policy_drift").await;
    let db = connect(&dbs.url("src")).await;
    db.batch_execute(
        "ALTER TABLE customers ADD COLUMN passport varchar(20);
         ALTER TABLE customers ADD CONSTRAINT customers_email_key UNIQUE (email);
         ALTER TABLE customers ALTER COLUMN ssn TYPE varchar(9);
         ALTER TABLE cards DROP COLUMN brand;",
    )
    .await
    .unwrap();
    let run = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for expected in [
        "| public.customers | passport | character varying(20) | - | **ERROR**: no rule",
        "| public.customers | email | character varying(254) | email | **ERROR**: UNIQUE column with lossy rule",
        "| public.customers | ssn | character varying(9) | ssn | **ERROR**: rule ssn writes up to 11 characters",
        "| public.cards | brand | - | keep | **ERROR**: the policy has a rule for a column the table does not have",
        "4 errors",
    ] {
        assert!(run.stdout.contains(expected), "missing {expected:?} in\n{}", run.stdout);
    }
}

#[tokio::test]
async fn policy_check_reads_a_policy_file_and_reports_bad_ones_clearly() {
    let dbs = bank_databases("policy_file").await;
    let dir = std::env::temp_dir().join(format!("maskbus-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[customers]\nssn = \"scramble\"\n").unwrap();
    let run = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("customers.ssn: unknown rule \"scramble\""),
        "{}",
        run.stderr
    );

    let partial = dir.join("partial.toml");
    std::fs::write(&partial, "[customers]\nid = \"keep\"\n").unwrap();
    let run = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        partial.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("| public.customers | ssn | character varying(11) | - | **ERROR**: no rule"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("| public.accounts | id | bigint | - | warning: table not in the policy"),
        "{}",
        run.stdout
    );
}

fn copy_escape(value: &Option<String>) -> String {
    match value {
        None => "\\N".into(),
        Some(v) => v
            .replace('\\', "\\\\")
            .replace('\t', "\\t")
            .replace('\n', "\\n")
            .replace('\r', "\\r"),
    }
}

/// Every seeded row, masked by the bank policy, inserts into the identical test schema, and what
/// lands there carries no real SSN, card or routing number.
#[tokio::test]
async fn masked_bank_rows_fit_the_original_column_types() {
    use futures_util::SinkExt;
    let dbs = bank_databases("mask_fits").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "200"]).success();
    let src = connect(&dbs.url("src")).await;
    let dst = connect(&dbs.url("dst")).await;
    let policy = crate::support::bank_policy();
    for table in maskbus_bank::TABLES {
        let (columns, _) = crate::support::text_select(&policy, table);
        let mut copy = String::new();
        for masked in crate::support::masked_source_rows(&src, &policy, table).await {
            copy.push_str(
                &masked
                    .iter()
                    .map(copy_escape)
                    .collect::<Vec<_>>()
                    .join("\t"),
            );
            copy.push('\n');
        }
        let sink = dst
            .copy_in::<_, bytes::Bytes>(&format!(
                "COPY {table} ({}) FROM STDIN",
                columns.join(", ")
            ))
            .await
            .unwrap();
        futures_util::pin_mut!(sink);
        sink.send(bytes::Bytes::from(copy)).await.unwrap();
        sink.finish().await.unwrap();
    }
    for row in dst
        .query(
            "SELECT ssn, last_name, email, date_of_birth::text FROM customers",
            &[],
        )
        .await
        .unwrap()
    {
        let ssn: String = row.get(0);
        assert!(
            ssn.starts_with("***-**-") && !is_issuable_ssn_text(&ssn),
            "{ssn}"
        );
        assert!(row.get::<_, String>(1).ends_with("***"));
        assert!(row.get::<_, String>(2).contains("***@"));
        assert!(row.get::<_, String>(3).ends_with("-01-01"));
    }
    for row in dst
        .query("SELECT card_number FROM cards", &[])
        .await
        .unwrap()
    {
        let card: String = row.get(0);
        assert!(
            card.contains(" **** **** ") && !luhn_valid(&card.replace(' ', "")),
            "{card}"
        );
    }
    let intact_routing: i64 = dst
        .query_one(
            "SELECT count(*) FROM accounts WHERE routing_number ~ '^[0-9]{9}$'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(intact_routing, 0);
}
