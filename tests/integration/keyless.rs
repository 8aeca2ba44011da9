//! Tables without a usable key (issue 54, item 1): a history table with exact duplicate rows and
//! a table whose only unique index has a nullable column sync whole each pass as multisets
//! (duplicates stay duplicates), follow inserts, deletes of one of two duplicates and updates,
//! cost no writes when unchanged, and verify says equal only when every row's count matches. In
//! stream mode (issue 54) such a table with REPLICA IDENTITY FULL is followed by its whole old
//! rows, one copy per delete; one without is refused by name while the others stream.

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

/// The consumer config of a stream test (a short request timeout, a quick follow interval).
const STREAM: &str = "mode = \"stream\"\nrequest_timeout = \"3s\"\nfollow_interval = \"100ms\"";

/// How many copies of each kept history row with this event the table `url` holds.
async fn copies(url: &str, event: &str) -> i64 {
    count(
        url,
        &format!("SELECT count(*) FROM history WHERE event = '{event}'"),
    )
    .await
}

/// The rows the target has applied from the change stream, and the snapshots the keyless
/// tables' copies reached: unchanged while the stream (not a copy again) follows them.
async fn streamed(url: &str) -> (i64, Vec<String>) {
    let client = connect(url).await;
    let rows: i64 = client
        .query_one("SELECT rows_applied FROM maskbus.stream_state", &[])
        .await
        .unwrap()
        .get(0);
    let copies = first_column::<String>(
        &client,
        "SELECT entity || ' ' || coalesce(synced_until, '-') FROM maskbus.sync_state
          WHERE entity IN ('public.history', 'public.tags') ORDER BY 1",
    )
    .await;
    (rows, copies)
}

#[tokio::test]
async fn the_change_stream_follows_keyless_tables_by_their_whole_rows_duplicates_kept() {
    // Both keyless tables stream by their whole old rows.
    let schema = format!(
        "{SCHEMA}\nALTER TABLE history REPLICA IDENTITY FULL;\nALTER TABLE tags REPLICA IDENTITY FULL;"
    );
    let synced = Synced::start_with(
        "keyless_stream_follow",
        &schema,
        POLICY,
        "slot = \"maskbus_keyless_stream_follow\"",
        STREAM,
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    // The stream starts, the tables are copied (converged at the copy's snapshot, the join).
    synced.sync().success();
    assert_eq!(count(&dst, "SELECT count(*) FROM history").await, 60);
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    assert_eq!(copies(&dst, "event 2").await, 2);
    let (applied, copied) = streamed(&dst).await;
    assert_eq!(copied.len(), 2, "{copied:?}");

    // Inserts (a third copy of a duplicate, a second of a single row), one of two duplicates
    // deleted, one of two duplicates updated (a kept column, and a masked one: its old row
    // is found by its masked value), a single row updated, in several transactions; and the
    // same in the table whose only unique index has a nullable column (NULLs kept).
    let session = connect(&src).await;
    session
        .batch_execute(
            "SET synchronous_commit = on;
             INSERT INTO history SELECT * FROM history WHERE event = 'event 2' LIMIT 1;
             INSERT INTO history SELECT * FROM history WHERE event = 'event 30' LIMIT 1;
             DELETE FROM history WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 1');
             BEGIN;
             UPDATE history SET at = date '1999-12-31'
              WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 10');
             UPDATE history SET name = 'Someone Else'
              WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 12');
             UPDATE history SET at = NULL WHERE event = 'event 40';
             UPDATE history SET customer = customer + 100 WHERE event IN ('event 20', 'event 21');
             UPDATE history SET at = date '2001-01-01' WHERE event = 'event 41';
             UPDATE history SET at = date '2002-02-02' WHERE event = 'event 41';
             COMMIT;
             DELETE FROM tags WHERE ctid = (SELECT min(ctid) FROM tags WHERE code IS NULL);
             UPDATE tags SET label = 'changed' WHERE code = 'a';
             INSERT INTO tags VALUES (NULL, 'later'), (NULL, 'later');",
        )
        .await
        .unwrap();
    synced.sync().success();
    // Applied from the stream, each row change one row written or deleted (history: 2
    // inserts, 1 delete, 3 + 4 updates of 2, and a row updated twice in one transaction whose
    // middle version never lands: 2; tags: 1 delete, 1 update of 2, 2 inserts), the tables
    // not copied again.
    assert_eq!(streamed(&dst).await, (applied + 24, copied.clone()));
    assert_eq!(count(&dst, "SELECT count(*) FROM history").await, 61);
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    assert_eq!(
        (
            copies(&dst, "event 1").await,
            copies(&dst, "event 2").await,
            copies(&dst, "event 30").await
        ),
        (1, 3, 2),
        "one copy deleted, one copy added: duplicates stay duplicates"
    );
    // The updated copy and its untouched twin: two rows, no longer equal.
    assert_eq!(
        count(
            &dst,
            "SELECT count(DISTINCT h) FROM history h WHERE event IN ('event 10', 'event 12')"
        )
        .await,
        4
    );
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM history WHERE name LIKE 'Person %' OR name = 'Someone Else'"
        )
        .await,
        0,
        "names stay masked"
    );
    verify_says(&synced, true);

    // Every copy of a row deleted, and the table emptied and filled again.
    session
        .batch_execute(
            "DELETE FROM history WHERE event = 'event 2';
             TRUNCATE tags; INSERT INTO tags VALUES (NULL, 'again'), (NULL, 'again');",
        )
        .await
        .unwrap();
    synced.sync().success();
    assert_eq!(streamed(&dst).await.1, copied);
    assert_eq!(copies(&dst, "event 2").await, 0);
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    verify_says(&synced, true);
    maskbus(&[
        "slot",
        "drop",
        "maskbus_keyless_stream_follow",
        "--config",
        &synced.producer,
    ])
    .success();
}

#[tokio::test]
async fn a_keyless_table_without_replica_identity_full_is_refused_by_name_while_the_others_stream()
{
    // history has the default replica identity, which is none without a primary key; tags has
    // REPLICA IDENTITY FULL, notes a primary key.
    let schema = format!(
        "{SCHEMA}\nALTER TABLE tags REPLICA IDENTITY FULL;
         CREATE TABLE notes (id int PRIMARY KEY, body text);
         INSERT INTO notes VALUES (1, 'one'), (2, 'two');"
    );
    let policy = format!("{POLICY}[notes]\nid = \"keep\"\nbody = \"keep\"\n");
    let synced = Synced::start_with(
        "keyless_stream_refused",
        &schema,
        &policy,
        "slot = \"maskbus_keyless_stream_refused\"",
        STREAM,
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let said = |run: &Run| format!("{}\n{}", run.stdout, run.stderr);
    let first = synced.sync();
    assert_ne!(first.code, 0, "{}", said(&first));
    for needed in [
        "public.history",
        "REPLICA IDENTITY FULL",
        "[maskbus.keys]",
        "watermark mode",
    ] {
        assert!(
            said(&first).contains(needed),
            "{needed:?} not in\n{}",
            said(&first)
        );
    }
    assert!(!said(&first).contains("public.tags ("), "{}", said(&first));
    // The others were copied and stream.
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    assert_eq!(multiset(&src, "notes").await, multiset(&dst, "notes").await);
    let session = connect(&src).await;
    // Left out of the publication: the source still takes its deletes and updates.
    session
        .batch_execute(
            "SET synchronous_commit = on;
             DELETE FROM history WHERE event = 'event 5';
             UPDATE history SET at = NULL WHERE event = 'event 6';
             INSERT INTO notes VALUES (3, 'three'); DELETE FROM notes WHERE id = 1;
             DELETE FROM tags WHERE ctid = (SELECT min(ctid) FROM tags WHERE code IS NULL);",
        )
        .await
        .unwrap();
    assert_eq!(
        count(
            &src,
            "SELECT count(*) FROM pg_publication_tables WHERE tablename = 'history'"
        )
        .await,
        0
    );
    let again = synced.sync();
    assert_ne!(again.code, 0, "{}", said(&again));
    assert!(said(&again).contains("public.history"), "{}", said(&again));
    assert_eq!(multiset(&src, "tags").await, multiset(&dst, "tags").await);
    assert_eq!(multiset(&src, "notes").await, multiset(&dst, "notes").await);

    // Given REPLICA IDENTITY FULL, it is published, copied and followed.
    session
        .batch_execute("ALTER TABLE history REPLICA IDENTITY FULL;")
        .await
        .unwrap();
    let follower = &synced;
    wait_until(
        "history followed",
        || async move { follower.sync().code == 0 },
    )
    .await;
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    let (applied, copied) = streamed(&dst).await;
    session
        .batch_execute(
            "DELETE FROM history WHERE ctid = (SELECT min(ctid) FROM history WHERE event = 'event 11');",
        )
        .await
        .unwrap();
    synced.sync().success();
    // One copy deleted by the stream, no copy again.
    assert_eq!(streamed(&dst).await, (applied + 1, copied));
    assert_eq!(copies(&dst, "event 11").await, 1);
    assert_eq!(kept_multiset(&src).await, kept_multiset(&dst).await);
    verify_says(&synced, true);
    maskbus(&[
        "slot",
        "drop",
        "maskbus_keyless_stream_refused",
        "--config",
        &synced.producer,
    ])
    .success();
}

/// Owners (keyed, the subset's roots by region), the shops their visits use (keyed, reached only
/// as parents of visits), visits (keyless, duplicates), and notes that reference nothing
/// (keyless, outside the subset).
const SUBSET_SCHEMA: &str = "
    CREATE TABLE owners (id int PRIMARY KEY, region text NOT NULL, name text);
    INSERT INTO owners VALUES (1, 'north', 'Ann'), (2, 'north', 'Bob'), (3, 'south', 'Cid');
    CREATE TABLE shops (id int PRIMARY KEY, label text NOT NULL);
    INSERT INTO shops VALUES (10, 'ten'), (11, 'eleven'), (12, 'twelve');
    CREATE TABLE visits (owner_id int REFERENCES owners (id), shop_id int REFERENCES shops (id),
                         note text NOT NULL);
    INSERT INTO visits VALUES (1, 10, 'a'), (1, 10, 'a'), (2, 11, 'b'), (3, 12, 'c'),
                              (3, 12, 'c'), (3, 10, 'd'), (NULL, 11, 'e');
    CREATE TABLE jottings (note text);
    INSERT INTO jottings VALUES ('z'), ('z');";

const SUBSET_POLICY: &str = "[owners]\nid = \"keep\"\nregion = \"keep\"\nname = \"keep\"\n\
    [shops]\nid = \"keep\"\nlabel = \"keep\"\n\
    [visits]\nowner_id = \"keep\"\nshop_id = \"keep\"\nnote = \"keep\"\n\
    [jottings]\nnote = \"keep\"\n";

#[tokio::test]
async fn a_subset_holds_the_keyless_rows_its_foreign_keys_bring_and_follows_them() {
    let subsets = ConfigFiles::new("keyless_subset_file");
    let file = subsets.write(
        "subsets.toml",
        "[subsets.north]\nwhere = { owners = \"owners.region = 'north'\" }\n",
    );
    // Pages of 2 rows: a keyless table's filtered pages follow its row locations.
    let synced = Synced::start_with(
        "keyless_subset",
        SUBSET_SCHEMA,
        SUBSET_POLICY,
        &format!("subsets = \"{file}\""),
        "subset = \"north\"\npage_size = 2\npages_per_request = 2",
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    let plan = maskbus(&["subset", "plan", "--config", &synced.producer]).success();
    // The plan counts the visits the subset holds, and names the unreached table outside.
    let line = |table: &str| {
        plan.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(table))
            .unwrap_or_else(|| panic!("{table} not in\n{}", plan.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(line("public.visits")[1..3], ["3", "7"], "{}", plan.stdout);
    assert!(
        line("public.jottings").contains(&"outside"),
        "{}",
        plan.stdout
    );

    let run = synced.sync();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let ids = |url: String, table: &'static str| async move {
        first_column::<i32>(
            &connect(&url).await,
            &format!("SELECT id FROM {table} ORDER BY id"),
        )
        .await
    };
    assert_eq!(ids(dst.clone(), "owners").await, [1, 2]);
    // The visits of the north's owners, duplicates kept; a visit of the south's owner or of
    // no owner stays out, as a keyed child would.
    assert_eq!(
        multiset(&dst, "visits").await,
        ["(1,10,a) x2", "(2,11,b) x1"]
    );
    // Their shops come along as parents (12 is only visited from the south).
    assert_eq!(ids(dst.clone(), "shops").await, [10, 11]);
    // A keyless table nothing in the subset reaches is outside it: empty by default.
    assert_eq!(count(&dst, "SELECT count(*) FROM jottings").await, 0);
    // The target keeps the foreign keys, so every visit's owner and shop is there.
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'visits'::regclass"
        )
        .await,
        2
    );
    maskbus(&["verify", "--config", &synced.consumer]).success();

    // One of two duplicates deleted, a visit added to a shop not yet in the subset, a visit
    // moved to the south (it leaves the subset unchanged in itself), one added in the south.
    connect(&src)
        .await
        .batch_execute(
            "DELETE FROM visits WHERE ctid = (SELECT min(ctid) FROM visits WHERE note = 'a');
             INSERT INTO visits VALUES (2, 12, 'f'), (3, 11, 'g');
             UPDATE visits SET owner_id = 3 WHERE note = 'b';",
        )
        .await
        .unwrap();
    let run = synced.sync();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        multiset(&dst, "visits").await,
        ["(1,10,a) x1", "(2,12,f) x1"]
    );
    // The new visit's shop came along; the shop no kept row references any more left.
    assert_eq!(ids(dst.clone(), "shops").await, [10, 12]);
    assert_eq!(count(&dst, "SELECT count(*) FROM jottings").await, 0);
    maskbus(&["verify", "--config", &synced.consumer]).success();

    // The target alone loses a visit and the shop it references: the repair asks for the
    // shop first, then puts the visit back.
    connect(&dst)
        .await
        .batch_execute("DELETE FROM visits WHERE note = 'f'; DELETE FROM shops WHERE id = 12;")
        .await
        .unwrap();
    maskbus(&["verify", "--config", &synced.consumer, "--repair"]).success();
    assert_eq!(
        multiset(&dst, "visits").await,
        ["(1,10,a) x1", "(2,12,f) x1"]
    );
    assert_eq!(ids(dst.clone(), "shops").await, [10, 12]);
    maskbus(&["verify", "--config", &synced.consumer]).success();
}

/// A keyless table whose column is named `x` (the stage's own alias once) converges, and an
/// inheritance child the test team made under an owned keyless table keeps its rows: a plain
/// scan of the parent returns the child's rows too, and the multiset is the parent's own (and
/// its partitions') only.
#[tokio::test]
async fn a_column_named_x_converges_and_an_inheritance_child_the_team_made_is_never_touched() {
    let synced = Synced::start(
        "keyless_inherit",
        "CREATE TABLE points (x int NOT NULL, y int);
         INSERT INTO points SELECT i % 5, i FROM generate_series(1, 20) i;
         INSERT INTO points SELECT * FROM points LIMIT 4;",
        "[points]\nx = \"keep\"\ny = \"keep\"\n",
    )
    .await;
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    synced.sync().success();
    assert_eq!(
        multiset(&src, "points").await,
        multiset(&dst, "points").await
    );
    // The test team's own table under it, with rows the source does not have.
    connect(&dst)
        .await
        .batch_execute(
            "CREATE TABLE mine (note text) INHERITS (points);
             INSERT INTO mine VALUES (100, 100, 'ours'), (101, 101, 'ours');",
        )
        .await
        .unwrap();
    connect(&src)
        .await
        .batch_execute(
            "DELETE FROM points WHERE ctid = (SELECT min(ctid) FROM points WHERE y = 1);
             INSERT INTO points VALUES (7, 700);",
        )
        .await
        .unwrap();
    synced.sync().success();
    assert_eq!(
        multiset(&src, "points").await,
        multiset(&dst, "ONLY points").await
    );
    assert_eq!(count(&dst, "SELECT count(*) FROM mine").await, 2);
}
