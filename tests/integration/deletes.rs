//! Deletes in watermark mode (issue 53): each pass ends by comparing the tables it synced with
//! the masked source by key-range hashes, as `maskbus verify` does, and deletes what the source
//! no longer has, so no verify is needed; `status` says caught up only once deletes are
//! followed too. Failures are per table: a table that fails closed leaves the others' deletes
//! and repairs alone and is named by verify, which does not say equal; a repair that must delete
//! a child before its parent, or write a parent before its child, succeeds, and one that still
//! fails names its table while the others are repaired.

use crate::support::*;

const SCHEMA: &str = "
    CREATE TABLE parents (id int PRIMARY KEY, name text NOT NULL);
    CREATE TABLE children (
        id int PRIMARY KEY,
        parent_id int NOT NULL REFERENCES parents ON DELETE CASCADE,
        note text
    );
    CREATE TABLE items (id int PRIMARY KEY, label text);
    INSERT INTO parents SELECT i, 'parent ' || i FROM generate_series(1, 40) i;
    INSERT INTO children SELECT i, 1 + i % 40, 'note ' || i FROM generate_series(1, 400) i;
    -- Three buckets of verify's 1,000 keys.
    INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 3000) i;";

const POLICY: &str = "[parents]\nid = \"keep\"\nname = \"keep\"\n\
    [children]\nid = \"keep\"\nparent_id = \"keep\"\nnote = \"keep\"\n\
    [items]\nid = \"keep\"\nlabel = \"keep\"\n";

/// Every row of `tables` as text, in key order (every rule is `keep`: the masked source is the
/// source).
async fn rows_of(url: &str, tables: &[&str]) -> Vec<String> {
    let client = connect(url).await;
    let mut all = Vec::new();
    for table in tables {
        all.extend(
            first_column::<String>(
                &client,
                &format!("SELECT '{table} ' || t::text FROM {table} t ORDER BY id"),
            )
            .await,
        );
    }
    all
}

#[track_caller]
fn assert_equal(source: Vec<String>, target: Vec<String>) {
    assert_eq!(target.len(), source.len(), "row counts differ");
    assert_eq!(target, source);
}

/// The consumer's config with one more line (same target, same bus).
fn consumer_with(synced: &Synced, name: &str, extra: &str) -> String {
    let text = std::fs::read_to_string(&synced.consumer).unwrap();
    synced.files.write(name, &format!("{text}{extra}\n"))
}

#[tokio::test]
async fn a_watermark_pass_follows_deletes_and_status_waits_for_them() {
    let synced = Synced::start("deletes_watermark", SCHEMA, POLICY).await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let tables = ["parents", "children", "items"];
    synced.sync().success();
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    let status = maskbus(&["status", "--config", &synced.consumer]);
    assert_eq!(status.code, 0, "{}\n{}", status.stdout, status.stderr);
    assert!(status.stdout.contains("caught up"), "{}", status.stdout);

    // Deletes: a parent and, by cascade, its children; a child alone; rows in the middle of
    // key ranges (and of a bucket), the last row; with an update and an insert beside them.
    connect(&src)
        .await
        .batch_execute(
            "DELETE FROM parents WHERE id = 7;
             DELETE FROM children WHERE id = 100;
             DELETE FROM items WHERE id IN (1500, 2500, 2501, 3000);
             DELETE FROM items WHERE id BETWEEN 1200 AND 1210;
             UPDATE items SET label = 'changed' WHERE id = 10;
             INSERT INTO items VALUES (3500, 'new');",
        )
        .await
        .unwrap();

    // A pass without the delete check brings the update and the insert, not the deletes, and
    // status does not say caught up.
    let unchecked = consumer_with(&synced, "unchecked.toml", "follow_deletes = false");
    maskbus(&["run", "--config", &unchecked, "--once"]).success();
    let target = rows_of(&dst, &tables).await;
    assert!(target.contains(&"items (10,changed)".to_string()));
    assert!(target.contains(&"items (3500,new)".to_string()));
    assert!(target.contains(&"items (1500,\"item 1500\")".to_string()));
    assert!(target.contains(&"parents (7,\"parent 7\")".to_string()));
    let status = maskbus(&["status", "--config", &synced.consumer]);
    assert_eq!(status.code, 6, "{}\n{}", status.stdout, status.stderr);
    assert!(
        status
            .stdout
            .contains("rows deleted on the source are not followed"),
        "{}",
        status.stdout
    );

    // The pass itself follows them: no verify.
    let run = maskbus_with_env(
        &["run", "--config", &synced.consumer, "--once"],
        &[("MASKBUS_LOG", "info")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("followed the source's deletes"),
        "{}",
        run.stderr
    );
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    let status = maskbus(&["status", "--config", &synced.consumer]);
    assert_eq!(status.code, 0, "{}\n{}", status.stdout, status.stderr);
    assert!(status.stdout.contains("caught up"), "{}", status.stdout);

    // A pass with nothing to follow deletes nothing, and verify agrees.
    let run = maskbus_with_env(
        &["run", "--config", &synced.consumer, "--once"],
        &[("MASKBUS_LOG", "info")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stderr.contains("followed the source's deletes"),
        "{}",
        run.stderr
    );
    let verified = maskbus(&["verify", "--config", &synced.consumer]);
    assert_eq!(verified.code, 0, "{}\n{}", verified.stdout, verified.stderr);
    assert!(verified
        .stdout
        .contains("the target equals the masked source"));
}

#[tokio::test]
async fn a_failing_table_leaves_the_others_deletes_and_repairs_and_verify_names_it() {
    let schema = format!(
        "{SCHEMA}
         CREATE TABLE broken (id int PRIMARY KEY, label text);
         INSERT INTO broken SELECT i, 'broken ' || i FROM generate_series(1, 50) i;"
    );
    let policy = format!("{POLICY}[broken]\nid = \"keep\"\nlabel = \"keep\"\n");
    let synced = Synced::start("deletes_failing", &schema, &policy).await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let tables = ["parents", "children", "items"];
    synced.sync().success();

    // A column without a rule: broken fails closed. Deletes in the others, and in it.
    connect(&src)
        .await
        .batch_execute(
            "ALTER TABLE broken ADD COLUMN nickname text;
             DELETE FROM broken WHERE id = 5;
             DELETE FROM parents WHERE id = 3;
             DELETE FROM items WHERE id IN (999, 1000, 1001, 2222);",
        )
        .await
        .unwrap();
    let run = synced.sync();
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("public.broken") && run.stderr.contains("nickname"),
        "{}",
        run.stderr
    );
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    let held: i64 = connect(&dst)
        .await
        .query_one("SELECT count(*) FROM broken WHERE id = 5", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(held, 1, "nothing is written into the table that fails");

    // run --once --repair with the table still failing (and no delete check, so the repair has
    // work to do): the others are repaired, the failing one is named, and the exit says so.
    connect(&dst)
        .await
        .batch_execute(
            "DELETE FROM items WHERE id = 42;
             UPDATE items SET label = 'tampered' WHERE id = 43;
             INSERT INTO items VALUES (9999, 'extra');
             DELETE FROM children WHERE id = 10;",
        )
        .await
        .unwrap();
    let unchecked = consumer_with(&synced, "unchecked.toml", "follow_deletes = false");
    let repaired = maskbus(&["run", "--config", &unchecked, "--once", "--repair"]);
    assert_eq!(repaired.code, 3, "{}\n{}", repaired.stdout, repaired.stderr);
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    assert!(
        repaired.stdout.contains("not verified: public.broken"),
        "{}",
        repaired.stdout
    );
    assert!(
        repaired.stderr.contains("not repaired: public.broken"),
        "{}",
        repaired.stderr
    );
    assert!(
        repaired.stdout.contains("3 rows written") && repaired.stdout.contains("1 rows deleted"),
        "{}",
        repaired.stdout
    );

    // verify names the table it could not compare, and does not say equal.
    let verified = maskbus(&["verify", "--config", &synced.consumer]);
    assert_eq!(verified.code, 4, "{}\n{}", verified.stdout, verified.stderr);
    assert!(
        verified.stdout.contains("not verified: public.broken")
            && verified.stdout.contains("nickname"),
        "{}",
        verified.stdout
    );
    assert!(
        !verified
            .stdout
            .contains("the target equals the masked source"),
        "{}",
        verified.stdout
    );
    assert!(
        verified
            .stdout
            .contains("NOT EQUAL: 1 served table(s) left out"),
        "{}",
        verified.stdout
    );
    let json = maskbus(&["verify", "--config", &synced.consumer, "--json"]);
    assert_eq!(json.code, 4, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["not_verified"][0]["entity"], "public.broken");
    // verify --repair does not pretend either.
    let repair = maskbus(&["verify", "--config", &synced.consumer, "--repair"]);
    assert_eq!(repair.code, 4, "{}\n{}", repair.stdout, repair.stderr);
    let status = maskbus(&["status", "--config", &synced.consumer]);
    assert_eq!(status.code, 6, "{}", status.stdout);
}

#[tokio::test]
async fn verify_repair_deletes_children_before_parents_and_writes_parents_before_children() {
    // A foreign key that is neither deferrable nor cascading: the order is the target's to get
    // right.
    let schema = "
        CREATE TABLE parents (id int PRIMARY KEY, name text NOT NULL);
        CREATE TABLE children (
            id int PRIMARY KEY,
            parent_id int NOT NULL REFERENCES parents,
            note text
        );
        INSERT INTO parents SELECT i, 'parent ' || i FROM generate_series(1, 40) i;
        INSERT INTO children SELECT i, 1 + i % 40, 'note ' || i FROM generate_series(1, 400) i;";
    let policy = "[parents]\nid = \"keep\"\nname = \"keep\"\n\
        [children]\nid = \"keep\"\nparent_id = \"keep\"\nnote = \"keep\"\n";
    let synced = Synced::start_with(
        "deletes_repair_order",
        schema,
        policy,
        "",
        "follow_deletes = false\n",
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let tables = ["parents", "children"];
    synced.sync().success();

    // On the source: a parent deleted with its children (the children must go first); the
    // children of another moved to a third and it deleted (they must be rewritten before it
    // can go); a new parent with a new child (the parent must come first).
    connect(&src)
        .await
        .batch_execute(
            "DELETE FROM children WHERE parent_id = 2; DELETE FROM parents WHERE id = 2;
             UPDATE children SET parent_id = 1 WHERE parent_id = 3; DELETE FROM parents WHERE id = 3;
             INSERT INTO parents VALUES (100, 'parent 100');
             INSERT INTO children VALUES (1000, 100, 'note 1000');",
        )
        .await
        .unwrap();
    let drift = maskbus(&["verify", "--config", &synced.consumer]);
    assert_eq!(drift.code, 4, "{}\n{}", drift.stdout, drift.stderr);
    let repaired = maskbus(&["verify", "--config", &synced.consumer, "--repair"]);
    assert_eq!(repaired.code, 0, "{}\n{}", repaired.stdout, repaired.stderr);
    // The deletes of both tables in one transaction could not go first (parent 3 still had
    // children pointing at it): deleted table by table, the parent's after the writes.
    assert!(
        repaired.stderr.contains("deleting table by table"),
        "{}",
        repaired.stderr
    );
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    maskbus(&["verify", "--config", &synced.consumer]).success();

    // A row of a table the test team made still points at a parent the source deleted: that
    // table's repair fails, by name, and the other is repaired.
    connect(&dst)
        .await
        .batch_execute(
            "CREATE TABLE team_notes (id int PRIMARY KEY, parent_id int REFERENCES parents);
             INSERT INTO team_notes VALUES (1, 4);",
        )
        .await
        .unwrap();
    connect(&src)
        .await
        .batch_execute(
            "DELETE FROM children WHERE parent_id = 4; DELETE FROM parents WHERE id = 4;
             UPDATE children SET note = 'moved' WHERE id = 5;",
        )
        .await
        .unwrap();
    let partly = maskbus(&["verify", "--config", &synced.consumer, "--repair"]);
    assert_eq!(partly.code, 4, "{}\n{}", partly.stdout, partly.stderr);
    assert!(
        partly.stdout.contains("not repaired: public.parents"),
        "{}",
        partly.stdout
    );
    assert!(
        !partly.stdout.contains("not repaired: public.children"),
        "{}",
        partly.stdout
    );
    assert_eq!(
        rows_of(&dst, &["children"]).await,
        rows_of(&src, &["children"]).await,
        "the other table is repaired"
    );
    let status = maskbus(&["status", "--config", &synced.consumer]);
    assert_eq!(status.code, 6, "{}", status.stdout);

    // The team lets go of it: the next repair finishes.
    connect(&dst)
        .await
        .batch_execute("DROP TABLE team_notes")
        .await
        .unwrap();
    maskbus(&["verify", "--config", &synced.consumer, "--repair"]).success();
    assert_equal(rows_of(&src, &tables).await, rows_of(&dst, &tables).await);
    maskbus(&["verify", "--config", &synced.consumer]).success();
}
