//! `maskbus policy init` measured against hand labels on public sample schemas nobody here wrote
//! (tests/data/schemas: each SQL file says where it comes from and under which licence; each
//! `NAME.labels.toml` labels every column as `safe`, or `pii` / `secret` with its kind, written
//! from the columns and their rows before any maskbus command ran on them).
//!
//! Recall: the share of PII and secret columns that init does not propose `keep` for (a table
//! left out of the policy is not synced, so its columns count as masked). Precision: of the
//! columns proposed masked, the share labelled PII or secret. Issue 54 sets recall >= 0.98 with no
//! PII column kept, and precision >= 0.90, per schema.

use crate::support::{connect, maskbus, ConfigFiles, TestDatabases};
use std::collections::{BTreeMap, BTreeSet};

const SCHEMAS: &[(&str, &str, &str)] = &[
    (
        "chinook",
        include_str!("../data/schemas/chinook.sql"),
        include_str!("../data/schemas/chinook.labels.toml"),
    ),
    (
        "northwind",
        include_str!("../data/schemas/northwind.sql"),
        include_str!("../data/schemas/northwind.labels.toml"),
    ),
    (
        "django_apps",
        include_str!("../data/schemas/django_apps.sql"),
        include_str!("../data/schemas/django_apps.labels.toml"),
    ),
    // Ours, not public: a store shaped like dellstore2 (card expiries, a keyless history), and
    // one column of each kind issue 54 found missed.
    (
        "store",
        include_str!("../data/schemas/store.sql"),
        include_str!("../data/schemas/store.labels.toml"),
    ),
    (
        "missed_kinds",
        include_str!("../data/schemas/missed_kinds.sql"),
        include_str!("../data/schemas/missed_kinds.labels.toml"),
    ),
];

const MIN_RECALL: f64 = 0.98;
const MIN_PRECISION: f64 = 0.90;

/// `table.column` → whether it is labelled PII or secret.
fn labels(text: &str) -> BTreeMap<String, bool> {
    let doc: toml::Table = text.parse().expect("labels parse");
    let mut out = BTreeMap::new();
    for (table, columns) in doc {
        for (column, label) in columns.as_table().expect("a table of columns") {
            let label = match label {
                toml::Value::String(s) => s.clone(),
                toml::Value::Table(t) => t["label"].as_str().expect("label").to_string(),
                other => panic!("{table}.{column}: bad label {other:?}"),
            };
            let personal = match label.as_str() {
                "pii" | "secret" => true,
                "safe" => false,
                other => panic!("{table}.{column}: unknown label {other}"),
            };
            out.insert(format!("{table}.{column}"), personal);
        }
    }
    out
}

struct Score {
    personal: usize,
    caught: usize,
    masked: usize,
    masked_personal: usize,
    missed: Vec<String>,
    false_alarms: Vec<String>,
}

impl Score {
    fn recall(&self) -> f64 {
        self.caught as f64 / self.personal.max(1) as f64
    }
    fn precision(&self) -> f64 {
        self.masked_personal as f64 / self.masked.max(1) as f64
    }
}

async fn measure(name: &str, sql: &str, label_text: &str) -> Score {
    let test = format!("policy_recall_{name}");
    let dbs = TestDatabases::create(&test, &["src"]).await;
    let client = connect(&dbs.url("src")).await;
    client.batch_execute(sql).await.unwrap();
    // Every column of the source is labelled, and every label names a column.
    let columns: BTreeSet<String> = client
        .query(
            "SELECT table_name || '.' || column_name FROM information_schema.columns \
             WHERE table_schema = 'public'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let labels = labels(label_text);
    let labelled: BTreeSet<String> = labels.keys().cloned().collect();
    assert_eq!(
        columns, labelled,
        "{name}: the labels and the schema differ"
    );

    let files = ConfigFiles::new(&test);
    let path = files.write("policy.toml", "");
    maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--output",
        &path,
    ])
    .success();
    let text = std::fs::read_to_string(&path).unwrap();
    let policy = maskbus_mask::Policy::from_toml("init", &text).unwrap();
    let mut score = Score {
        personal: 0,
        caught: 0,
        masked: 0,
        masked_personal: 0,
        missed: Vec::new(),
        false_alarms: Vec::new(),
    };
    for (column, &personal) in &labels {
        let (table, col) = column.split_once('.').unwrap();
        // A table left out of the policy is not synced: nothing of it is kept.
        let kept = policy
            .entity(table)
            .is_some_and(|e| e.rule(col).is_some_and(|r| r.name() == "keep"));
        if personal {
            score.personal += 1;
            if kept {
                score.missed.push(column.clone());
            } else {
                score.caught += 1;
            }
        }
        if !kept {
            score.masked += 1;
            if personal {
                score.masked_personal += 1;
            } else {
                score.false_alarms.push(column.clone());
            }
        }
    }
    println!(
        "policy init on {name}: recall {}/{} = {:.3}, precision {}/{} = {:.3}; missed {:?}; false alarms {:?}",
        score.caught,
        score.personal,
        score.recall(),
        score.masked_personal,
        score.masked,
        score.precision(),
        score.missed,
        score.false_alarms,
    );
    score
}

#[tokio::test]
async fn policy_init_recall_and_precision_on_labelled_public_schemas() {
    let mut failures = Vec::new();
    for (name, sql, labels) in SCHEMAS {
        let score = measure(name, sql, labels).await;
        if !score.missed.is_empty() || score.recall() < MIN_RECALL {
            failures.push(format!("{name}: PII kept: {:?}", score.missed));
        }
        if score.precision() < MIN_PRECISION {
            failures.push(format!(
                "{name}: precision {:.3} < {MIN_PRECISION}: {:?}",
                score.precision(),
                score.false_alarms
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The kinds issue 54 found missed, by their rules: a JSON column's personal leaves get rules of
/// their own (not a scrub that keeps a name's letters), a secret by its table and a session key
/// are hidden whole, and `--update` does not propose again a table the reviewer deleted.
#[tokio::test]
async fn policy_init_hides_each_missed_kind_and_update_remembers_what_was_left_out() {
    let dbs = TestDatabases::create("policy_missed_kinds", &["src"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(include_str!("../data/schemas/missed_kinds.sql"))
        .await
        .unwrap();
    let files = ConfigFiles::new("policy_missed_kinds");
    let path = files.write("policy.toml", "");
    let source = dbs.url("src");
    let init = |extra: &[&str]| {
        let mut args = vec!["policy", "init", "--source", source.as_str()];
        args.extend_from_slice(extra);
        maskbus(&args)
    };
    init(&["--output", &path]).success();
    let text = std::fs::read_to_string(&path).unwrap();
    let policy = maskbus_mask::Policy::from_toml("init", &text).unwrap();
    let rule = |table: &str, column: &str| {
        policy
            .entity(table)
            .and_then(|e| e.rule(column))
            .map(|r| r.name())
            .unwrap_or_else(|| panic!("no rule for {table}.{column}\n{text}"))
    };
    for (table, column, wanted) in [
        ("people", "middle_initial", "null"),
        ("people", "age", "null"),
        ("api_keys", "value", "pseudonym token"),
        ("sessions", "session_key", "pseudonym alnum"),
        ("socialaccount", "uid", "pseudonym token"),
        ("reversion_version", "object_repr", "redact"),
        ("employee", "emp_id", "pseudonym alnum"),
        ("employee", "minit", "null"),
    ] {
        assert_eq!(rule(table, column), wanted, "{table}.{column}\n{text}");
    }
    // JSON leaf by leaf: the name and the TOTP seed each get a rule of their own.
    assert!(
        text.contains("\"$.display_name\" = \"first_letter\""),
        "{text}"
    );
    assert!(
        text.contains("\"$.otp.totp_seed\" = { pseudonym = \"token\" }"),
        "{text}"
    );
    assert!(text.contains("bcc_emails = \"scrub\""), "{text}");
    // The reviewer deletes the mail rules' section: --update leaves it out, and says nothing new.
    let start = text.find("[mail_rules]").unwrap();
    let end = start + text[start..].find("\n\n").unwrap() + 2;
    let reviewed = format!("{}{}", &text[..start], &text[end..]);
    std::fs::write(&path, &reviewed).unwrap();
    let update = init(&["--update", &path]).success();
    let updated = std::fs::read_to_string(&path).unwrap();
    assert!(!updated.contains("[mail_rules]"), "{updated}");
    assert!(
        update.stderr.contains("up to date with the schema"),
        "{}",
        update.stderr
    );
}

/// The store of issue 54, item 2, end to end: `policy init` does not give a card expiry the
/// card rule (which keeps all of `2012/06`), masks the numeric zip, and its policy checks,
/// syncs the keyless history with its duplicates, and audits clean.
#[tokio::test]
async fn policy_init_on_a_store_with_card_expiries_and_a_keyless_history_checks_and_syncs() {
    let dbs = TestDatabases::create("policy_store", &["src", "dst", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(include_str!("../data/schemas/store.sql"))
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let policy = crate::zoo::init_check_sync_audit(&dbs, "policy_store", &[]).await;
    assert!(
        policy.contains("creditcardexpiration = { pseudonym = \"digits\" }"),
        "{policy}"
    );
    assert!(
        policy.contains("zip                  = { pseudonym = \"digits\" }"),
        "{policy}"
    );
    let rows: i64 = connect(&dbs.url("dst"))
        .await
        .query_one("SELECT count(*) FROM cust_hist", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 618);
}
