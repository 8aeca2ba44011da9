//! Scale-out: two producers serve one mailbox, two consumer workers share one target (each its
//! share of the tables, each its own reply mailbox), and all of them are killed and restarted
//! at moments chosen by the sync's own progress. The target ends equal to the masked source,
//! row by row, nothing doubled, every index and foreign key back.

use crate::support::*;
use crate::zoo::{assert_target_is_masked_source_by, zoo, zoo_policy};

/// Rows the workers have committed so far, by their watermarks.
async fn landed(url: &str) -> i64 {
    let client = connect(url).await;
    let marked: bool = client
        .query_one("SELECT to_regclass('maskbus.sync_state') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0);
    if !marked {
        return 0;
    }
    client
        .query_one(
            "SELECT coalesce(sum(rows_synced), 0)::bigint FROM maskbus.sync_state",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn two_producers_and_two_workers_killed_and_restarted_end_equal_to_the_masked_source() {
    // Small pages, one per request: the sync takes long enough to be cut short several times.
    let (dbs, files, producer, _) = zoo("scale", "").await;
    let worker = |n: u32| {
        files.write(
            &format!("worker{n}.toml"),
            &format!(
                "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\n\
                 page_size = 50\npages_per_request = 1\nworkers = 2\nworker = {n}\n",
                dbs.url("bus"),
                writer_url(&dbs.url("dst"))
            ),
        )
    };
    let (one, two) = (worker(1), worker(2));
    let dst = dbs.url("dst");
    let mut producers = [
        Background::spawn(&["run", "--config", &producer]),
        Background::spawn(&["run", "--config", &producer]),
    ];
    let mut workers = [
        Background::spawn(&["run", "--config", &one, "--once"]),
        Background::spawn(&["run", "--config", &two, "--once"]),
    ];
    // Three crashes at growing marks of progress: a worker, a producer, then the other worker.
    for (round, mark) in [2_000i64, 6_000, 12_000].into_iter().enumerate() {
        wait_until("the sync to make progress", || async {
            landed(&dst).await >= mark
        })
        .await;
        match round {
            0 => {
                workers[0].kill9();
                workers[0] = Background::spawn(&["run", "--config", &one, "--once"]);
            }
            1 => {
                producers[1].kill9();
                producers[1] = Background::spawn(&["run", "--config", &producer]);
            }
            _ => {
                workers[1].kill9();
                workers[1] = Background::spawn(&["run", "--config", &two, "--once"]);
            }
        }
    }
    for w in &mut workers {
        w.kill9();
    }
    // Both workers run to the end, at the same time.
    let finish = |config: String| {
        std::thread::spawn(move || maskbus(&["run", "--config", &config, "--once"]))
    };
    let (a, b) = (finish(one.clone()), finish(two.clone()));
    for run in [a.join().unwrap(), b.join().unwrap()] {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_target_is_masked_source_by(&dbs, &zoo_policy()).await;
    // Each worker kept its own watermarks: every table has exactly one, and every one is done.
    let unfinished: i64 = connect(&dst)
        .await
        .query_one(
            "SELECT count(*) FROM maskbus.sync_state WHERE pass_until IS NOT NULL OR synced_until IS NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(unfinished, 0);
    // A second round of both moves nothing: the watermarks are exact.
    let (a, b) = (finish(one), finish(two));
    for run in [a.join().unwrap(), b.join().unwrap()] {
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("synced 0 rows") || run.stderr.contains("synced 0 rows"),
            "{}{}",
            run.stdout,
            run.stderr
        );
    }
}
