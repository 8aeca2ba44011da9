//! A large table's first pass read and loaded in key ranges side by side (`streams`): range
//! boundaries on composite, text and masked keys, `kill -9` of either agent in the middle of a
//! range, rows written into a range while it is read. Each ends with the target equal to the
//! masked source (`maskbus verify` exits 0, and row by row where the bank's oracle applies).

use crate::support::*;

/// Ranges of a few hundred rows, so that small tables split (the default is 50,000).
const RANGED: &str = "streams = 4\nrange_rows = 150\npage_size = 40\npages_per_request = 2\n";

const SCHEMA: &str = r#"
CREATE SCHEMA geo;
-- A composite key whose first column repeats: a bound falls inside a run of one region.
CREATE TABLE geo.sites (
    region text NOT NULL, n integer NOT NULL, owner_email text,
    PRIMARY KEY (region, n));
INSERT INTO geo.sites SELECT 'r' || (i % 7), i, 'owner' || i || '@example.com'
  FROM generate_series(1, 1500) i;
-- A text key in a collation's order, with values that sort differently bytewise.
CREATE TABLE geo.tags (code text PRIMARY KEY, label text);
INSERT INTO geo.tags SELECT (ARRAY['a','B','é','Z','ä'])[1 + i % 5] || lpad(i::text, 5, '0'), 'tag ' || i
  FROM generate_series(1, 1200) i;
-- A masked key (an SSN pseudonym) with a child: bounds are masked keys, undone by the producer.
CREATE TABLE public.people (ssn text PRIMARY KEY, name text);
INSERT INTO public.people
  SELECT lpad((100 + i % 600)::text, 3, '0') || '-' || lpad((10 + i % 80)::text, 2, '0') || '-' || lpad((1000 + i)::text, 4, '0'), 'person ' || i
  FROM generate_series(1, 1000) i;
CREATE TABLE public.visits (id bigint PRIMARY KEY, person_ssn text NOT NULL REFERENCES public.people (ssn),
  site_region text, site_n integer, FOREIGN KEY (site_region, site_n) REFERENCES geo.sites (region, n));
INSERT INTO public.visits
  SELECT i, (SELECT ssn FROM public.people ORDER BY ssn OFFSET i % 1000 LIMIT 1),
         'r' || (((i % 1500) + 1) % 7), (i % 1500) + 1
  FROM generate_series(1, 2000) i;
-- The producer splits by the planner's estimate: a table never analyzed is read in one range.
ANALYZE;
"#;

const POLICY: &str = r#"
["geo.sites"]
region = "keep"
n = "keep"
owner_email = { pseudonym = "email" }

["geo.tags"]
code = "keep"
label = "keep"

[people]
ssn = { pseudonym = "ssn" }
name = { pseudonym = "last_name" }

[visits]
id = "keep"
person_ssn = { pseudonym = "ssn" }
site_region = "keep"
site_n = "keep"
"#;

fn verify_equal(consumer: &str) {
    let run = maskbus(&["verify", "--config", consumer]).success();
    assert!(
        run.stdout.contains("the target equals the masked source"),
        "{}",
        run.stdout
    );
}

async fn count(url: &str, sql: &str) -> i64 {
    connect(url).await.query_one(sql, &[]).await.unwrap().get(0)
}

#[tokio::test]
async fn ranges_split_composite_text_and_masked_keys_and_the_target_equals_the_masked_source() {
    let synced = Synced::start_with("ranges_keys", SCHEMA, POLICY, "", RANGED).await;
    let run = maskbus_with_env(
        &["run", "--config", &synced.consumer, "--once"],
        &[("MASKBUS_LOG", "info")],
    )
    .success();
    for entity in ["geo.sites", "geo.tags", "public.people", "public.visits"] {
        assert!(
            run.stderr
                .lines()
                .any(|l| l.contains("reading in ranges side by side") && l.contains(entity)),
            "{entity} was not read in ranges:\n{}",
            run.stderr
        );
    }
    let (src, dst) = (synced.dbs.url("src"), synced.dbs.url("dst"));
    for table in ["geo.sites", "geo.tags", "public.people", "public.visits"] {
        let sql = format!("SELECT count(*) FROM {table}");
        assert_eq!(count(&src, &sql).await, count(&dst, &sql).await, "{table}");
    }
    // Every range finished and was forgotten with the watermark recorded.
    assert_eq!(
        count(&dst, "SELECT count(*) FROM maskbus.sync_ranges").await,
        0
    );
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM maskbus.sync_state WHERE synced_until IS NULL"
        )
        .await,
        0
    );
    // No real SSN crossed, and every visit still finds its person.
    let src_client = connect(&src).await;
    let real: Vec<String> = src_client
        .query("SELECT ssn FROM public.people", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let leaked: i64 = connect(&dst)
        .await
        .query_one(
            "SELECT count(*) FROM public.people WHERE ssn = ANY($1)",
            &[&real],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(leaked, 0, "real SSNs in the target");
    assert_eq!(
        count(
            &dst,
            "SELECT count(*) FROM public.visits v WHERE NOT EXISTS (SELECT 1 FROM public.people p WHERE p.ssn = v.person_ssn)"
        )
        .await,
        0
    );
    verify_equal(&synced.consumer);
}

/// The bank, its consumer slowed to small pages so that a range is caught in the middle.
async fn bank_in_ranges(test: &str) -> (TestDatabases, ConfigFiles, String, String) {
    let dbs = seeded(test, "800").await;
    // The producer splits by the planner's estimate (autovacuum's ANALYZE, as in production).
    connect(&dbs.url("src"))
        .await
        .batch_execute("ANALYZE")
        .await
        .unwrap();
    let files = ConfigFiles::new(test);
    let (producer, consumer) = agent_configs(
        &files,
        &dbs,
        "streams = 3\nrange_rows = 400\npage_size = 25\npages_per_request = 1\nrequest_timeout = \"5s\"\n",
    );
    (dbs, files, producer, consumer)
}

/// Waits until some range of `transactions` has written rows and none of its ranges is done.
async fn wait_mid_range(dst: &str) {
    let dst = connect(dst).await;
    wait_until("a range of transactions to be under way", || async {
        let bookkept: bool = dst
            .query_one("SELECT to_regclass('maskbus.sync_ranges') IS NOT NULL", &[])
            .await
            .unwrap()
            .get(0);
        bookkept
            && dst
                .query_one(
                    "SELECT count(*) FILTER (WHERE rows_synced > 0) > 0 AND bool_and(NOT done)
                       FROM maskbus.sync_ranges WHERE entity = 'public.transactions'",
                    &[],
                )
                .await
                .unwrap()
                .get::<_, Option<bool>>(0)
                .unwrap_or(false)
    })
    .await;
}

#[tokio::test]
async fn kill_9_of_the_consumer_mid_range_then_a_restart_resumes_the_ranges_exactly() {
    let (dbs, _files, producer, consumer) = bank_in_ranges("ranges_kill_consumer").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let mut doomed = Background::spawn(&["run", "--config", &consumer, "--once"]);
    wait_mid_range(&dbs.url("dst")).await;
    doomed.kill9();
    let dst = dbs.url("dst");
    let written = count(&dst, "SELECT count(*) FROM public.transactions").await;
    let recorded = count(
        &dst,
        "SELECT sum(rows_synced)::bigint FROM maskbus.sync_ranges WHERE entity = 'public.transactions'",
    )
    .await;
    // Each page and where its range stands commit together: what is in is what is recorded.
    assert_eq!(written, recorded);
    let all = count(&dbs.url("src"), "SELECT count(*) FROM public.transactions").await;
    assert!(written < all, "killed before the ranges were done");
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    assert_eq!(
        count(&dst, "SELECT count(*) FROM maskbus.sync_ranges").await,
        0
    );
    verify_equal(&consumer);
}

#[tokio::test]
async fn kill_9_of_the_producer_mid_range_and_a_new_producer_answers_the_ranges() {
    let (dbs, _files, producer, consumer) = bank_in_ranges("ranges_kill_producer").await;
    let mut doomed = Background::spawn(&["run", "--config", &producer]);
    let consumer_run = Background::spawn(&["run", "--config", &consumer, "--once"]);
    wait_mid_range(&dbs.url("dst")).await;
    doomed.kill9();
    // The consumer asks again after its request timeout; the requests wait on the bus.
    let _producer = Background::spawn(&["run", "--config", &producer]);
    assert_eq!(consumer_run.wait(), Some(0));
    assert_target_is_masked_source(&dbs).await;
    verify_equal(&consumer);
}

#[tokio::test]
async fn rows_written_into_a_range_while_it_is_read_come_with_the_next_pass() {
    let (dbs, _files, producer, consumer) = bank_in_ranges("ranges_inserts").await;
    let src = connect(&dbs.url("src")).await;
    // Gaps in every range, filled while the pass reads them.
    src.batch_execute(
        "CREATE TABLE held AS SELECT * FROM public.transactions WHERE id % 50 = 0;
         DELETE FROM public.transactions WHERE id % 50 = 0;",
    )
    .await
    .unwrap();
    src.batch_execute("VACUUM ANALYZE public.transactions")
        .await
        .unwrap();
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let first = Background::spawn(&["run", "--config", &consumer, "--once"]);
    wait_mid_range(&dbs.url("dst")).await;
    // Into every range while the pass reads them: rows in the gaps and after the end, and
    // updates of rows already read and of rows not read yet.
    src.batch_execute(
        "INSERT INTO public.transactions SELECT * FROM held;
         INSERT INTO public.transactions (account_id, card_id, amount, posted_at, merchant, description)
           SELECT account_id, card_id, 1.00, posted_at, merchant, 'written during the pass'
             FROM public.transactions ORDER BY id LIMIT 300;
         UPDATE public.transactions SET description = 'changed during the pass' WHERE id % 97 = 0;
         DROP TABLE held;",
    )
    .await
    .unwrap();
    assert_eq!(first.wait(), Some(0));
    // The first pass closed before these writes: the next one brings them.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    verify_equal(&consumer);
}
