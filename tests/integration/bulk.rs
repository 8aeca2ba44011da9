//! The first pass into empty tables is a bulk load (indexes and foreign keys lifted, COPY,
//! rebuilt at the end). What happens when a load is cut short, and when what it lifted cannot
//! be rebuilt. (That a completed load leaves the schema exactly as defined is checked by every
//! zoo sync, `zoo.rs: assert_target_is_masked_source_by`.)

use crate::support::*;

#[tokio::test]
async fn a_load_cut_short_is_rebuilt_by_the_next_run_and_an_unrebuildable_key_is_named() {
    let dbs = TestDatabases::create("bulk_restore", &["src", "dst", "bus"]).await;
    let ddl = |n_type: &str| {
        format!(
            "CREATE SCHEMA shop;
             CREATE TABLE shop.parent (id int PRIMARY KEY, label text);
             CREATE INDEX parent_label_idx ON shop.parent (label);
             CREATE TABLE shop.child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES shop.parent);
             CREATE TABLE shop.bad (id int PRIMARY KEY, n {n_type}, child_id int REFERENCES shop.child);"
        )
    };
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(&ddl("text")).await.unwrap();
    src.batch_execute(
        "INSERT INTO shop.parent SELECT i, 'p' || i FROM generate_series(1, 500) i;
         INSERT INTO shop.child SELECT i, 1 + i % 500 FROM generate_series(1, 2000) i;
         INSERT INTO shop.bad VALUES (1, 'not a number');",
    )
    .await
    .unwrap();
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(&ddl("integer")).await.unwrap();
    let defined = schema_objects(&dbs.url("dst")).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("bulk_restore");
    let policy = files.write(
        "policy.toml",
        "[shop.parent]\nid = \"keep\"\nlabel = \"keep\"\n[shop.child]\nid = \"keep\"\nparent_id = \"keep\"\n\
         [shop.bad]\nid = \"keep\"\nn = \"keep\"\nchild_id = \"keep\"\n",
    );
    let urls = AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: dbs.url("src"),
        target: dbs.url("dst"),
    };
    let (producer, strict) = write_agent_configs(
        &files,
        &urls,
        &format!("policy = \"{policy}\""),
        "all_or_nothing = true",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);

    // A load cut short (here by the first permanent error, with all_or_nothing: shop.bad, the
    // leaf, loads first) leaves what it lifted recorded, not forgotten.
    let run = maskbus(&["run", "--config", &strict, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(lifted_count(&dbs.url("dst")).await >= 2);
    assert_ne!(schema_objects(&dbs.url("dst")).await, defined);

    // While the foreign key is off, a row that breaks it is written by hand: the next run cannot
    // rebuild the key, and says which key, on which table, and that the rows are in.
    dst.batch_execute("INSERT INTO shop.child VALUES (999999, 424242)")
        .await
        .unwrap();
    let lenient = files.write(
        "lenient.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\n",
            dbs.url("bus"),
            writer_url(&dbs.url("dst"))
        ),
    );
    let run = maskbus(&["run", "--config", &lenient, "--once"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("rebuilding foreign key child_parent_id_fkey of shop.child failed"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("the rows are in"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("424242"),
        "no value in errors: {}",
        run.stderr
    );
    // The index was rebuilt; the key stays recorded for the next run.
    assert_eq!(lifted_count(&dbs.url("dst")).await, 1);

    // Fixed by hand, the next run rebuilds it: the schema is as defined, every key validated.
    dst.batch_execute("DELETE FROM shop.child WHERE id = 999999")
        .await
        .unwrap();
    let run = maskbus(&["run", "--config", &lenient, "--once"]);
    assert_eq!(run.code, 3, "shop.bad still cannot sync: {}", run.stderr);
    assert_eq!(lifted_count(&dbs.url("dst")).await, 0);
    assert_eq!(schema_objects(&dbs.url("dst")).await, defined);
    let children: i64 = dst
        .query_one("SELECT count(*) FROM shop.child", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(children, 2000);
}

/// One consumer loading every table in bulk goes children first and rebuilds beside the pass:
/// killed with `kill -9` once the leaf table is in but its parents are not, it leaves child rows
/// whose parents are missing and lifted keys behind, and the next run completes the target
/// exactly, every constraint present and validated.
#[tokio::test]
async fn kill_9_after_the_children_are_in_then_a_restart_completes_every_constraint() {
    let dbs = seeded("bulk_kill", "300").await;
    let defined = schema_objects(&dbs.url("dst")).await;
    let files = ConfigFiles::new("bulk_kill");
    let (producer, consumer) = agent_configs(&files, &dbs, "page_size = 50\npages_per_request = 1");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let mut doomed = Background::spawn(&["run", "--config", &consumer, "--once"]);
    let dst = connect(&dbs.url("dst")).await;
    let count = |table: &'static str| {
        let dst = &dst;
        async move {
            dst.query_one(&format!("SELECT count(*) FROM public.{table}"), &[])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    wait_until(
        "the leaf table to be in and the next one loading",
        || async {
            let bookkept: bool = dst
                .query_one("SELECT to_regclass('maskbus.sync_state') IS NOT NULL", &[])
                .await
                .unwrap()
                .get(0);
            bookkept
                && dst
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM maskbus.sync_state
                      WHERE entity = 'public.transactions' AND synced_until IS NOT NULL)",
                        &[],
                    )
                    .await
                    .unwrap()
                    .get::<_, bool>(0)
                && count("cards").await + count("addresses").await > 0
        },
    )
    .await;
    doomed.kill9();
    assert!(
        count("customers").await < 300,
        "the roots load last: killed before all of them were in"
    );
    assert!(count("transactions").await > 0);
    assert!(lifted_count(&dbs.url("dst")).await > 0);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    assert_eq!(lifted_count(&dbs.url("dst")).await, 0);
    assert_eq!(schema_objects(&dbs.url("dst")).await, defined);
}
