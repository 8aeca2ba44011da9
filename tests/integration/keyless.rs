//! Tables without a usable key (issue 54, item 1): a history table with exact duplicate rows and
//! a table whose only unique index has a nullable column sync whole each pass as multisets
//! (duplicates stay duplicates), follow inserts, deletes of one of two duplicates and updates,
//! cost no writes when unchanged, and verify says equal only when every row's count matches.

use crate::support::*;

const SCHEMA: &str = "
    CREATE TABLE history (customer int NOT NULL, event text NOT NULL, name text, at date);
    -- 60 rows: 42 distinct, 18 of them twice.
    INSERT INTO history
        SELECT i % 7, 'event ' || i, 'Person ' || i, date '2020-01-01' + i FROM generate_series(1, 42) i;
    INSERT INTO history SELECT * FROM history ORDER BY event LIMIT 18;
    CREATE TABLE tags (code text, label text NOT NULL, UNIQUE (code));
    INSERT INTO tags VALUES ('a', 'first'), ('b', 'second'), (NULL, 'no code'), (NULL, 'no code');";

const POLICY: &str = "[history]\ncustomer = \"keep\"\nevent = \"keep\"\n\
    name = { pseudonym = \"last_name\" }\nat = \"keep\"\n\
    [tags]\ncode = \"keep\"\nlabel = \"keep\"\n";

/// Each row of `table` as text with how many copies it has, sorted: the table as a multiset.
async fn multiset(url: &str, table: &str) -> Vec<String> {
    first_column::<String>(
        &connect(url).await,
        &format!(
            "SELECT r || ' x' || count(*) FROM (SELECT t::text AS r FROM {table} t) s GROUP BY r ORDER BY r"
        ),
    )
    .await
}

/// The history's kept columns as a multiset (its names are masked, so differ from the source's).
async fn kept_multiset(url: &str) -> Vec<String> {
    first_column::<String>(
        &connect(url).await,
        "SELECT customer || '|' || event || '|' || coalesce(at::text, '-') || ' x' || count(*)
           FROM history GROUP BY customer, event, at ORDER BY 1",
    )
    .await
}

async fn count(url: &str, sql: &str) -> i64 {
    connect(url).await.query_one(sql, &[]).await.unwrap().get(0)
}

/// Where each row of `table` lies and which transaction wrote it: unchanged only when no row
/// was written, deleted or moved.
async fn written_rows(url: &str, table: &str) -> String {
    connect(url)
        .await
        .query_one(
            &format!("SELECT string_agg(ctid::text || xmin::text, ',' ORDER BY ctid) FROM {table}"),
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[track_caller]
fn verify_says(synced: &Synced, equal: bool) {
    let verified = maskbus(&["verify", "--config", &synced.consumer]);
    let said_equal = verified
        .stdout
        .contains("the target equals the masked source");
    assert_eq!(
        (said_equal, verified.code == 0),
        (equal, equal),
        "{}\n{}",
        verified.stdout,
        verified.stderr
    );
}

#[tokio::test]
async fn keyless_tables_sync_as_multisets_and_follow_changes() {
    // Pages of 7 rows: a keyless table's pages follow its row locations.
    let synced = Synced::start_with(
        "keyless_multiset",
        SCHEMA,
        POLICY,
        "",
        "page_size = 7\npages_per_request = 2",
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let run = synced.sync();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(count(&dst, "SELECT count(*) FROM history").await, 60);
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM (SELECT DISTINCT h FROM history h) d"
        )
        .await,
        42
    );
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    // The names are masked, each the same way each time (duplicates stay duplicates).
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM history WHERE name LIKE 'Person %'"
        )
        .await,
        0
    );
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    verify_says(&synced, true);

    // An unchanged table costs no writes: the masked multiset is the same each pass.
    let history_masked = multiset(&dst, "history").await;
    let before = (
        written_rows(&dst, "history").await,
        written_rows(&dst, "tags").await,
    );
    synced.sync().success();
    assert_eq!(multiset(&dst, "history").await, history_masked);
    assert_eq!(
        (
            written_rows(&dst, "history").await,
            written_rows(&dst, "tags").await
        ),
        before,
        "an unchanged keyless table is not written"
    );

    // A duplicate more, one of two duplicates deleted, an update, in both tables.
    connect(&src)
        .await
        .batch_execute(
            "INSERT INTO history SELECT * FROM history WHERE event = 'event 30' LIMIT 1;
             DELETE FROM history WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 1');
             UPDATE history SET at = date '1999-12-31' WHERE event = 'event 40';
             DELETE FROM tags WHERE ctid = (SELECT min(ctid) FROM tags WHERE code IS NULL);
             UPDATE tags SET label = 'changed' WHERE code = 'a';
             INSERT INTO tags VALUES (NULL, 'later');",
        )
        .await
        .unwrap();
    // Verify sees the drift before a pass (one duplicate missing is a difference).
    verify_says(&synced, false);
    synced.sync().success();
    assert_eq!(count(&dst, "SELECT count(*) FROM history").await, 60);
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    verify_says(&synced, true);

    // One copy of a duplicate gone from the target alone: verify says not equal, repair mends.
    connect(&dst)
        .await
        .batch_execute(
            "DELETE FROM history WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 2')",
        )
        .await
        .unwrap();
    verify_says(&synced, false);
    maskbus(&["verify", "--config", &synced.consumer, "--repair"]).success();
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    verify_says(&synced, true);
}

#[tokio::test]
async fn the_change_stream_refuses_a_keyless_table_by_name_and_says_how_to_fix_it() {
    // REPLICA IDENTITY FULL: a publication carries its deletes, but the stream names each
    // change by key, and this table has none.
    let schema = format!("{SCHEMA}\nALTER TABLE history REPLICA IDENTITY FULL;");
    let synced = Synced::start_with(
        "keyless_stream",
        &schema,
        POLICY,
        "slot = \"maskbus_keyless_stream\"",
        "mode = \"stream\"\nrequest_timeout = \"3s\"",
    )
    .await;
    let run = synced.sync();
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for needed in [
        "public.history",
        "a table needs a primary key",
        "watermark mode",
    ] {
        assert!(
            run.stderr.contains(needed),
            "{needed:?} not in\n{}",
            run.stderr
        );
    }
}
