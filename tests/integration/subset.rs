//! Subsets (issue 16): a subset by condition and one by fraction, on the bank and on the zoo
//! (cycles, a 10,000-deep self-reference, composite and uuid keys, partitions), synced into an
//! empty target. Checked against an oracle (`subset_oracle.rs`), independent of the closure's
//! SQL: it loads every key and foreign key column of the source and walks the foreign keys in
//! memory.
//! The target must hold exactly the closure, every foreign key must hold, and a delta must keep
//! all of that.

use crate::subset_oracle::{assert_foreign_keys_hold, oracle, target_keys, Kept};
use crate::support::*;
use maskbus_mask::Policy;
use maskbus_pg::tokio_postgres::Client;
use maskbus_pg::{ForeignKey, TableRef};

/// The target holds exactly the closure (no row missing, no row extra), table by table, and its
/// foreign keys hold.
async fn assert_target_is_closure(
    dbs: &TestDatabases,
    policy: &Policy,
    expected: &Kept,
    outside_whole: &[&str],
) {
    let got = target_keys(&dbs.url("dst"), policy).await;
    let source = target_keys(&dbs.url("src"), policy).await;
    let mut nonempty = 0;
    for (table, keys) in &got {
        if outside_whole.contains(&table.to_string().as_str()) {
            assert_eq!(keys, &source[table], "{table}: copied whole");
            continue;
        }
        let want = &expected[table];
        let missing = want.difference(keys).count();
        let extra = keys.difference(want).count();
        assert_eq!((missing, extra), (0, 0), "{table}: rows missing and extra");
        if !keys.is_empty() {
            nonempty += 1;
        }
    }
    assert!(nonempty >= 3, "a subset this test can learn from: {got:?}");
    assert_foreign_keys_hold(&dbs.url("dst"), policy).await;
}

fn write_subsets(files: &ConfigFiles, text: &str) -> String {
    files.write("subsets.toml", text)
}

fn t(name: &str) -> TableRef {
    TableRef::parse(&maskbus_mask::qualify(name))
}

/// The most common state among the seeded addresses (the seed decides which).
async fn busiest_state(src: &Client) -> String {
    src.query_one(
        "SELECT state FROM addresses GROUP BY state ORDER BY count(*) DESC, state LIMIT 1",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn a_bank_subset_by_condition_is_whole_and_its_delta_keeps_it_whole() {
    let dbs = seeded("subset_bank", "400").await;
    let src = connect(&dbs.url("src")).await;
    let state = busiest_state(&src).await;
    let condition = format!(
        "EXISTS (SELECT 1 FROM addresses a WHERE a.customer_id = customers.id AND a.state = '{state}')"
    );
    let files = ConfigFiles::new("subset_bank");
    let subsets = write_subsets(
        &files,
        &format!("[subsets.one_state]\nwhere = {{ customers = \"{condition}\" }}\n"),
    );
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("subsets = \"{subsets}\""),
        // Small pages: the kept keys are read a slice at a time, the cursor found among them.
        "subset = \"one_state\"\npage_size = 7\npages_per_request = 2",
    );
    // The plan, before anything moves: counts per table, never a value.
    let plan = maskbus(&["subset", "plan", "--config", &producer]).success();
    assert!(plan.stdout.contains("public.customers"), "{}", plan.stdout);
    assert!(plan.stdout.contains("root"), "{}", plan.stdout);
    assert!(
        !plan.stdout.contains('@'),
        "no value in a plan: {}",
        plan.stdout
    );

    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let policy = bank_policy();
    let roots = [(t("customers"), condition.clone())];
    let expected = oracle(&dbs.url("src"), &policy, &roots, None, &[]).await;
    assert_target_is_closure(&dbs, &policy, &expected, &[]).await;
    let dst = connect(&dbs.url("dst")).await;
    let off: i64 = dst
        .query_one(
            &format!("SELECT count(*) FROM customers WHERE NOT ({condition})"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(off, 0, "every customer in the target matches the condition");
    let kept = expected[&t("customers")].len();
    assert!(kept > 5 && kept < 400, "{kept}");
    // The rows are masked like any others: verify, subset-aware, finds the target equal.
    maskbus(&["verify", "--config", &consumer]).success();

    // The delta: a new transaction of a kept account arrives; a new customer elsewhere does
    // not; a new transaction of a kept account that uses another customer's card brings that
    // card, its account and its customer along.
    let kept_account: i64 = dst
        .query_one("SELECT min(id) FROM accounts", &[])
        .await
        .unwrap()
        .get(0);
    let foreign_card: i64 = src
        .query_one(
            &format!(
                "SELECT min(c.id) FROM cards c JOIN accounts a ON a.id = c.account_id WHERE a.customer_id NOT IN (SELECT customers.id FROM customers WHERE {condition})"
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    src.batch_execute(&format!(
        "INSERT INTO transactions (id, account_id, card_id, amount, posted_at, merchant, description)
              VALUES (90000001, {kept_account}, NULL, 5.00, now(), 'Shop', 'kept account'),
                     (90000002, {kept_account}, {foreign_card}, 7.00, now(), 'Shop', 'borrowed card');
         INSERT INTO customers (id, first_name, last_name, email, ssn, date_of_birth, phone, created_at)
              VALUES (90000003, 'Out', 'Side', 'out@example.com', '123-45-6789', '1970-01-01', '555-0100', now());
         INSERT INTO addresses (id, customer_id, street, city, state, zip)
              VALUES (90000004, 90000003, '1 Road', 'Town', 'ZZ', '00000');"
    ))
    .await
    .unwrap();
    // `status` asks the producer one row a table within the subset: behind now (a kept
    // account has new transactions), caught up after the delta.
    let behind = maskbus(&["status", "--config", &consumer, "--json"]);
    assert_eq!(behind.code, 6, "{}{}", behind.stdout, behind.stderr);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let caught_up = maskbus(&["status", "--config", &consumer, "--json"]);
    assert_eq!(
        caught_up.code, 0,
        "{}{}",
        caught_up.stdout, caught_up.stderr
    );
    let expected = oracle(&dbs.url("src"), &policy, &roots, None, &[]).await;
    assert!(expected[&t("transactions")].contains(&vec!["90000002".to_string()]));
    assert!(!expected[&t("customers")].contains(&vec!["90000003".to_string()]));
    assert_target_is_closure(&dbs, &policy, &expected, &[]).await;
    let borrowed: i64 = dst
        .query_one("SELECT count(*) FROM cards WHERE id = $1", &[&foreign_card])
        .await
        .unwrap()
        .get(0);
    assert_eq!(borrowed, 1, "the card a kept transaction uses came along");

    // A customer moves into the state: the rows that join the subset without changing (its
    // accounts, cards, transactions) are what a delta cannot see; the pass's delete check
    // (verify within the subset) finds them missing and brings them. One that moves out leaves
    // the same way.
    let joiner: i64 = src
        .query_one(
            &format!("SELECT min(customers.id) FROM customers WHERE NOT ({condition}) AND EXISTS (SELECT 1 FROM accounts a WHERE a.customer_id = customers.id)"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    // A kept customer no other customer's rows lead to (no transaction crosses between its
    // cards and another customer's accounts, either way).
    let leaver: i64 = src
        .query_one(
            &format!("SELECT min(customers.id) FROM customers WHERE {condition} AND NOT EXISTS (SELECT 1 FROM transactions t JOIN accounts a ON a.id = t.account_id JOIN cards k ON k.id = t.card_id JOIN accounts b ON b.id = k.account_id WHERE a.customer_id <> b.customer_id AND customers.id IN (a.customer_id, b.customer_id))"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    src.batch_execute(&format!(
        "UPDATE addresses SET state = '{state}' WHERE customer_id = {joiner};
         UPDATE addresses SET state = 'ZZ' WHERE customer_id = {leaver};"
    ))
    .await
    .unwrap();
    let followed = maskbus(&["run", "--config", &consumer, "--once", "--verify"]);
    assert_eq!(
        followed.code, 0,
        "the pass brings the joiner's rows and takes the leaver's: {}",
        followed.stderr
    );
    let expected = oracle(&dbs.url("src"), &policy, &roots, None, &[]).await;
    assert!(expected[&t("customers")].contains(&vec![joiner.to_string()]));
    assert!(
        !expected[&t("customers")].contains(&vec![leaver.to_string()]),
        "customer {leaver} left"
    );
    assert_target_is_closure(&dbs, &policy, &expected, &[]).await;
    maskbus(&["verify", "--config", &consumer]).success();

    // A subset the producer does not define: a clear refusal, nothing written.
    let before = target_keys(&dbs.url("dst"), &policy).await;
    let unknown = files.write(
        "unknown.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nsubset = \"nope\"\n",
            dbs.url("bus"),
            writer_url(&dbs.url("dst"))
        ),
    );
    let refused = maskbus(&["run", "--config", &unknown, "--once"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains("holds subset \"one_state\", and the config asks for subset \"nope\""),
        "a target keeps its subset: {}",
        refused.stderr
    );
    assert_eq!(target_keys(&dbs.url("dst"), &policy).await, before);
    // Into an empty target, the producer refuses a name it does not define.
    let empty = TestDatabases::create("subset_bank_empty", &["dst"]).await;
    maskbus(&[
        "bank",
        "init",
        "--source",
        &dbs.url("src"),
        "--target",
        &empty.url("dst"),
    ])
    .success();
    let unknown = files.write(
        "unknown.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nsubset = \"nope\"\n",
            dbs.url("bus"),
            writer_url(&empty.url("dst"))
        ),
    );
    let refused = maskbus(&["run", "--config", &unknown, "--once"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("unknown_subset") && refused.stderr.contains("subset nope"),
        "{}",
        refused.stderr
    );
    // A condition that names a column the table lacks is refused before anything moves.
    write_subsets(
        &files,
        "[subsets.typo]\nwhere = { customers = \"stat = 'TX'\" }\n",
    );
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
        "--subsets",
        &subsets,
    ]);
    assert_eq!(
        check.code, 1,
        "policy check reads the subsets too: {}",
        check.stdout
    );
    let typo = maskbus(&["subset", "plan", "--config", &producer]);
    assert_eq!(typo.code, 1, "{}", typo.stderr);
    assert!(
        typo.stdout
            .contains("the condition on public.customers does not plan"),
        "{}",
        typo.stdout
    );
}

#[tokio::test]
async fn a_bank_subset_by_fraction_picks_the_same_rows_every_run() {
    let dbs = seeded("subset_fraction", "500").await;
    let files = ConfigFiles::new("subset_fraction");
    let subsets = write_subsets(
        &files,
        "[subsets.tenth]\nfraction = { customers = 0.1 }\nseed = \"s-2026\"\n",
    );
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("subsets = \"{subsets}\""),
        "subset = \"tenth\"",
    );
    let first = maskbus(&["subset", "plan", "--config", &producer, "--json"]).success();
    let again = maskbus(&["subset", "plan", "--config", &producer, "--json"]).success();
    assert_eq!(first.stdout, again.stdout, "the same rows every run");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    // The definition: the keyed hash of the key, below the fraction of 2^32.
    let picked = "('x' || substr(md5('s-2026:' || ARRAY[customers.id::text]::text[]::text), 1, 8))::bit(32)::bigint < 429496730";
    let policy = bank_policy();
    let expected = oracle(
        &dbs.url("src"),
        &policy,
        &[(t("customers"), picked.into())],
        None,
        &[],
    )
    .await;
    let kept = expected[&t("customers")].len();
    assert!((20..=90).contains(&kept), "about a tenth of 500: {kept}");
    assert_target_is_closure(&dbs, &policy, &expected, &[]).await;
}

/// A key of `columns` (name, type) from `source`.
fn key_def(columns: &[(&str, &str)], source: maskbus_pg::KeySource) -> maskbus_pg::KeyDef {
    maskbus_pg::KeyDef {
        columns: columns
            .iter()
            .map(|(name, sql_type)| maskbus_pg::KeyColumn {
                name: name.to_string(),
                sql_type: sql_type.to_string(),
            })
            .collect(),
        source,
    }
}

/// The kept rows `(t, k)` of `closure` on `client` as the producer computes them (the roots in
/// a statement of their own, then the rest from them), sorted.
async fn kept_rows(
    client: &Client,
    closure: &maskbus_pg::closure::Closure,
) -> Vec<(i32, Vec<String>)> {
    let limit = 1_000_000i64;
    let roots = client.query(&closure.root_rows(), &[&limit]).await.unwrap();
    let tables: Vec<i32> = roots.iter().map(|r| r.get(0)).collect();
    let keys: Vec<String> = roots.iter().map(|r| r.get(1)).collect();
    let mut kept: Vec<(i32, Vec<String>)> = client
        .query(&closure.kept_rows_from(), &[&limit, &tables, &keys])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    kept.sort();
    kept
}

/// The closure's fraction, however it is spelled in SQL, picks exactly the rows of the
/// definition (`the keyed hash of the key below the fraction of 2^32`), on keys of integers
/// (one and two columns, negative, the extremes), uuids and hostile text (quotes, commas,
/// braces, spaces, `NULL`, empty), at the edges of the fraction.
#[tokio::test]
async fn a_fraction_picks_the_rows_of_its_definition_on_every_kind_of_key() {
    use maskbus_pg::closure::{Closure, ClosureTable, Pick, Root};
    use maskbus_pg::KeySource::PrimaryKey;
    let dbs = TestDatabases::create("subset_fraction_keys", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE ints (id bigint PRIMARY KEY);
         INSERT INTO ints SELECT g FROM generate_series(-3000, 3000) g;
         INSERT INTO ints VALUES (9223372036854775807), (-9223372036854775808);
         CREATE TABLE pairs (a integer, b smallint, PRIMARY KEY (a, b));
         INSERT INTO pairs SELECT g % 97, g % 300 FROM generate_series(1, 6000) g ON CONFLICT DO NOTHING;
         CREATE TABLE ids (id uuid PRIMARY KEY);
         INSERT INTO ids SELECT md5(g::text)::uuid FROM generate_series(1, 3000) g;
         CREATE TABLE names (id text PRIMARY KEY);
         INSERT INTO names SELECT 'n' || g FROM generate_series(1, 2000) g;
         INSERT INTO names VALUES (''), ('NULL'), ('null'), ('a,b'), ('{x}'), ('say \"hi\"'),
             ('back\\slash'), (' lead'), ('tab	x'), ('é');",
    )
    .await
    .unwrap();
    let tables = [
        ("ints", key_def(&[("id", "bigint")], PrimaryKey)),
        (
            "pairs",
            key_def(&[("a", "integer"), ("b", "smallint")], PrimaryKey),
        ),
        ("ids", key_def(&[("id", "uuid")], PrimaryKey)),
        ("names", key_def(&[("id", "text")], PrimaryKey)),
    ];
    for (name, key) in tables {
        let array: Vec<String> = key.names().iter().map(|c| format!("{c}::text")).collect();
        let array = format!("ARRAY[{}]::text[]", array.join(", "));
        for fraction in [0.0, 1e-9, 0.01, 0.37, 0.5, 0.999_999_999, 1.0] {
            let closure = Closure {
                tables: vec![ClosureTable {
                    table: TableRef::new("public", name),
                    key: key.clone(),
                }],
                roots: vec![Root {
                    table: 0,
                    pick: Pick::Fraction {
                        fraction,
                        seed: "s-1".into(),
                    },
                }],
                down: vec![],
                up: vec![],
            };
            let threshold = (fraction * 4_294_967_296.0f64).round() as i64;
            let mut want: Vec<Vec<String>> = src
                .query(
                    &format!(
                        "SELECT {array} FROM {name} WHERE ('x' || substr(md5('s-1:' || {array}::text), 1, 8))::bit(32)::bigint < $1"
                    ),
                    &[&threshold],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            want.sort();
            let got: Vec<Vec<String>> = kept_rows(&src, &closure)
                .await
                .into_iter()
                .map(|(_, k)| k)
                .collect();
            assert_eq!(got, want, "{name} at {fraction}");
        }
    }
}

/// Every "Seq Scan" node on `table` in an `EXPLAIN (ANALYZE, FORMAT JSON)` plan: how many
/// times each ran.
fn seq_scan_loops(plan: &serde_json::Value, table: &str, loops: &mut Vec<u64>) {
    if plan["Node Type"] == "Seq Scan" && plan["Relation Name"] == table {
        loops.push(plan["Actual Loops"].as_u64().unwrap_or(0));
    }
    for child in plan["Plans"].as_array().into_iter().flatten() {
        seq_scan_loops(child, table, loops);
    }
}

/// A foreign key without an index on the child's columns: the closure joins each round's rows
/// to the child as a set, so the child is scanned once per round, not once per parent row (a
/// step per row made a 100,000-row child scanned for each of thousands of rows: minutes).
#[tokio::test]
async fn a_foreign_key_without_an_index_is_followed_by_a_scan_per_round_not_per_row() {
    use maskbus_pg::closure::{Closure, ClosureTable, Link, Pick, Root};
    use maskbus_pg::KeySource::PrimaryKey;
    let dbs = TestDatabases::create("subset_unindexed", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE shops (id bigint PRIMARY KEY);
         CREATE TABLE orders (id bigint PRIMARY KEY, shop_id bigint NOT NULL REFERENCES shops);
         CREATE TABLE lines (id bigint PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders);
         INSERT INTO shops SELECT g FROM generate_series(1, 2000) g;
         INSERT INTO orders SELECT g, 1 + g % 2000 FROM generate_series(1, 20000) g;
         INSERT INTO lines SELECT g, 1 + g % 20000 FROM generate_series(1, 40000) g;
         ANALYZE;",
    )
    .await
    .unwrap();
    let table = |name: &str| ClosureTable {
        table: TableRef::new("public", name),
        key: key_def(&[("id", "bigint")], PrimaryKey),
    };
    let link = |child, column: &str, parent| Link {
        child,
        columns: vec![column.into()],
        parent,
        parent_columns: vec!["id".into()],
    };
    let closure = Closure {
        tables: vec![table("shops"), table("orders"), table("lines")],
        roots: vec![Root {
            table: 0,
            pick: Pick::Condition("shops.id <= 200".into()),
        }],
        down: vec![link(1, "shop_id", 0), link(2, "order_id", 1)],
        up: vec![link(1, "shop_id", 0), link(2, "order_id", 1)],
    };
    let kept = kept_rows(&src, &closure).await;
    let count = |t: i32| kept.iter().filter(|(table, _)| *table == t).count();
    // 200 shops, each with 10 orders, each with 2 lines.
    assert_eq!((count(0), count(1), count(2)), (200, 2000, 4000));
    // The same statement, explained as it ran.
    let limit = 1_000_000i64;
    let roots = src.query(&closure.root_rows(), &[&limit]).await.unwrap();
    let tables: Vec<i32> = roots.iter().map(|r| r.get(0)).collect();
    let keys: Vec<String> = roots.iter().map(|r| r.get(1)).collect();
    let explained: serde_json::Value = src
        .query_one(
            &format!(
                "EXPLAIN (ANALYZE, FORMAT JSON) {}",
                closure.kept_rows_from()
            ),
            &[&limit, &tables, &keys],
        )
        .await
        .unwrap()
        .get(0);
    for child in ["orders", "lines"] {
        let mut loops = Vec::new();
        seq_scan_loops(&explained[0]["Plan"], child, &mut loops);
        assert!(
            !loops.is_empty(),
            "{child} has no index to probe: {explained}"
        );
        // A few rounds (down two levels, then nothing new), never one per row found.
        assert!(
            loops.iter().all(|&n| n <= 8),
            "{child} scanned {loops:?} times: {explained}"
        );
    }
}

/// A key the policy names may repeat: every row of a kept key is shipped, so the parents of
/// every one of them are kept, not only of the row the step down happened to read.
#[tokio::test]
async fn the_parents_of_every_row_of_a_repeated_policy_key_are_kept() {
    use maskbus_pg::closure::{Closure, ClosureTable, Link, Pick, Root};
    use maskbus_pg::KeySource;
    let dbs = TestDatabases::create("subset_repeated_key", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE parent (id bigint PRIMARY KEY);
         CREATE TABLE other (id bigint PRIMARY KEY);
         CREATE TABLE child (code text NOT NULL, parent_id bigint NOT NULL REFERENCES parent,
             other_id bigint NOT NULL REFERENCES other);
         INSERT INTO parent VALUES (1), (2); INSERT INTO other VALUES (10), (20);
         INSERT INTO child VALUES ('A', 1, 10), ('A', 2, 20);",
    )
    .await
    .unwrap();
    let table = |name: &str, key| ClosureTable {
        table: TableRef::new("public", name),
        key,
    };
    let link = |column: &str, parent| Link {
        child: 2,
        columns: vec![column.into()],
        parent,
        parent_columns: vec!["id".into()],
    };
    let closure = Closure {
        tables: vec![
            table(
                "parent",
                key_def(&[("id", "bigint")], KeySource::PrimaryKey),
            ),
            table("other", key_def(&[("id", "bigint")], KeySource::PrimaryKey)),
            table("child", key_def(&[("code", "text")], KeySource::Policy)),
        ],
        roots: vec![Root {
            table: 0,
            pick: Pick::Condition("parent.id = 1".into()),
        }],
        down: vec![link("parent_id", 0)],
        up: vec![link("parent_id", 0), link("other_id", 1)],
    };
    let want: Vec<(i32, Vec<String>)> = vec![
        (0, vec!["1".into()]),
        (0, vec!["2".into()]),
        (1, vec!["10".into()]),
        (1, vec!["20".into()]),
        (2, vec!["A".into()]),
    ];
    assert_eq!(kept_rows(&src, &closure).await, want);
}

#[tokio::test]
async fn zoo_subsets_through_cycles_self_references_and_composite_keys() {
    let subsets_text = "\
[subsets.some]
where = { \"zoo.keepers\" = \"id <= 40\", \"zoo.enclosures\" = \"id % 5 = 0\", \"zoo.staff\" = \"id = 20\" }
outside = \"whole\"

[[virtual_foreign_keys]]
name = \"nest_of_keeper\"
table = \"zoo.nests\"
columns = [\"id\"]
parent = \"zoo.keepers\"
parent_columns = [\"id\"]

[subsets.animals]
fraction = { \"zoo.animals\" = 0.2 }
";
    // By condition, tables outside copied whole.
    let files = ConfigFiles::new("subset_zoo");
    let path = write_subsets(&files, subsets_text);
    let (dbs, _files, producer, consumer) = crate::zoo::zoo_with(
        "subset_zoo",
        &format!("subsets = \"{path}\""),
        "subset = \"some\"",
    )
    .await;
    maskbus(&["subset", "plan", "--config", &producer]).success();
    let producer_run = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let policy = crate::zoo::zoo_policy();
    let roots = [
        (t("zoo.keepers"), "id <= 40".to_string()),
        (t("zoo.enclosures"), "id % 5 = 0".to_string()),
        (t("zoo.staff"), "id = 20".to_string()),
    ];
    let nest_of_keeper = ForeignKey {
        name: "nest_of_keeper".into(),
        table: t("zoo.nests"),
        columns: vec!["id".into()],
        parent: t("zoo.keepers"),
        parent_columns: vec!["id".into()],
        nullable: false,
        deferrable: false,
    };
    let virtual_fks = [nest_of_keeper];
    let expected = oracle(&dbs.url("src"), &policy, &roots, None, &virtual_fks).await;
    // The virtual foreign key is followed down from kept keepers (and the nests' cycle with
    // the eggs up from there).
    assert!(expected[&t("zoo.nests")].contains(&vec!["40".to_string()]));
    assert!(!expected[&t("zoo.eggs")].is_empty());
    // Reached from no root: copied whole.
    let outside = ["zoo.visits", "zoo.pens", "zoo.gates"];
    for table in outside {
        assert!(
            expected[&t(table)].is_empty(),
            "{table} is outside the closure"
        );
    }
    assert_target_is_closure(&dbs, &policy, &expected, &outside).await;
    // The self-reference: the chain below and above staff 20 is whole.
    assert_eq!(expected[&t("zoo.staff")].len(), 10_000);
    // The cycle: teams of kept enclosures, their caretakers, and the teams those head.
    assert!(!expected[&t("zoo.caretakers")].is_empty());
    // Composite keys and partitions: the species links and events of kept animals.
    assert!(!expected[&t("zoo.animal_species")].is_empty());
    assert!(!expected[&t("zoo.events")].is_empty());

    // The delta keeps the subset: a feeding of a kept animal arrives, one of an animal outside
    // does not.
    let src = connect(&dbs.url("src")).await;
    let dst = connect(&dbs.url("dst")).await;
    let kept_animal: String = dst
        .query_one("SELECT min(id::text) FROM zoo.animals", &[])
        .await
        .unwrap()
        .get(0);
    let other_animal: String = src
        .query_one(
            "SELECT min(id::text) FROM zoo.animals WHERE keeper_id > 40",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(!expected[&t("zoo.animals")].contains(&vec![other_animal.clone()]));
    src.execute(
        "INSERT INTO zoo.feedings (animal_id, fed_at, grams) VALUES ($1::text::uuid, now(), 1), ($2::text::uuid, now(), 2)",
        &[&kept_animal, &other_animal],
    )
    .await
    .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let expected = oracle(&dbs.url("src"), &policy, &roots, None, &virtual_fks).await;
    assert_target_is_closure(&dbs, &policy, &expected, &outside).await;
    drop(producer_run);

    // By fraction, tables outside left empty, into a second target.
    let second = TestDatabases::create("subset_zoo_fraction", &["dst", "bus"]).await;
    connect(&second.url("dst"))
        .await
        .batch_execute(include_str!("../fixtures/zoo/schema.sql"))
        .await
        .unwrap();
    maskbus(&["bus", "init", "--bus", &second.url("bus")]).success();
    let files = ConfigFiles::new("subset_zoo_fraction");
    let (producer, consumer) = write_agent_configs(
        &files,
        &AgentUrls {
            producer_bus: second.url("bus"),
            consumer_bus: second.url("bus"),
            source: dbs.url("src"),
            target: second.url("dst"),
        },
        &format!(
            "policy = \"{}\"\nsubsets = \"{path}\"",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/fixtures/zoo/policy.toml"
            )
        ),
        "all_or_nothing = true\nsubset = \"animals\"\npage_size = 3\npages_per_request = 2",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let picked = "('x' || substr(md5('animals:' || ARRAY[animals.id::text]::text[]::text), 1, 8))::bit(32)::bigint < 858993459";
    let expected = oracle(
        &dbs.url("src"),
        &policy,
        &[(t("zoo.animals"), picked.into())],
        None,
        &[],
    )
    .await;
    let kept = expected[&t("zoo.animals")].len();
    assert!(
        (250..=550).contains(&kept),
        "about a fifth of 2,000: {kept}"
    );
    let got = target_keys(&second.url("dst"), &policy).await;
    for (table, keys) in &got {
        assert_eq!(keys, &expected[table], "{table}");
    }
    assert!(
        got[&t("zoo.staff")].is_empty(),
        "outside the closure: left empty"
    );
    assert_foreign_keys_hold(&second.url("dst"), &policy).await;
}
