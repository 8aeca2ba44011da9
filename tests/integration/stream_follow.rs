//! Stream mode follows every table it can, whatever one table does (issue 53): a table that
//! fails at its first copy, a child whose parent fails, a table added to the policy while
//! following, and a publication made by a DBA, read by a role that holds only SELECT and
//! REPLICATION.

use crate::support::*;
use maskbus_pg::tokio_postgres::Client;

/// A card and an SSN in a kept column: the producer's egress guard holds its table back.
const LEAK: &str = "paid by 4532 0151 1283 0366, ssn 219-09-9999";

const SCHEMA: &str = "
    CREATE TABLE others (id int PRIMARY KEY, name text);
    CREATE TABLE parents (id int PRIMARY KEY, name text);
    CREATE TABLE kids (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parents (id), name text);
    CREATE TABLE extra (id int PRIMARY KEY, name text);";

fn policy(tables: &[&str]) -> String {
    let mut text = String::new();
    for table in tables {
        let columns: &[&str] = if *table == "kids" {
            &["id", "parent_id", "name"]
        } else {
            &["id", "name"]
        };
        text.push_str(&format!("[{table}]\n"));
        for column in columns {
            text.push_str(&format!("{column} = \"keep\"\n"));
        }
    }
    text
}

/// The three databases with [`SCHEMA`] in the source, a bus, a policy file over `tables`, and a
/// producer with a slot (its config with `producer_extra`) and a consumer in stream mode.
struct Follow {
    dbs: TestDatabases,
    files: ConfigFiles,
    policy: String,
    producer: String,
    consumer: String,
    slot: String,
}

impl Follow {
    async fn new(test: &str, tables: &[&str], producer_extra: &str) -> Self {
        let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
        connect(&dbs.url("src"))
            .await
            .batch_execute(SCHEMA)
            .await
            .unwrap();
        maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
        let files = ConfigFiles::new(test);
        let policy = files.write("policy.toml", &policy(tables));
        let slot = format!("maskbus_{test}");
        let urls = AgentUrls {
            producer_bus: dbs.url("bus"),
            consumer_bus: dbs.url("bus"),
            source: dbs.url("src"),
            target: dbs.url("dst"),
        };
        let (producer, consumer) = write_agent_configs(
            &files,
            &urls,
            &format!("policy = \"{policy}\"\nslot = \"{slot}\"\n{producer_extra}\n"),
            "mode = \"stream\"\nrequest_timeout = \"3s\"\nfollow_interval = \"100ms\"\n",
        );
        Follow {
            dbs,
            files,
            policy,
            producer,
            consumer,
            slot,
        }
    }

    async fn source(&self) -> Client {
        let src = connect(&self.dbs.url("src")).await;
        src.batch_execute("SET synchronous_commit = on")
            .await
            .unwrap();
        src
    }

    fn once(&self) -> Run {
        maskbus(&["run", "--config", &self.consumer, "--once"])
    }

    fn drop_slot(&self) {
        maskbus(&["slot", "drop", &self.slot, "--config", &self.producer]).success();
    }
}

/// [`wait_until`], showing the end of the agents' `logs` if it times out.
async fn wait_showing<F, Fut>(what: &str, logs: &[&str], mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !check().await {
        if std::time::Instant::now() >= deadline {
            let shown: Vec<String> = logs
                .iter()
                .map(|log| {
                    let text = std::fs::read_to_string(log).unwrap_or_default();
                    let tail: Vec<&str> = text
                        .lines()
                        .filter(|l| !l.contains("changes applied") && !l.contains("served request"))
                        .rev()
                        .take(60)
                        .collect();
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                })
                .collect();
            panic!("timed out waiting for {what}:\n{}", shown.join("\n----\n"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Rows of `table`, 0 while the table does not exist.
async fn count(client: &Client, table: &str) -> i64 {
    let exists: bool = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await
        .unwrap()
        .get(0);
    if !exists {
        return 0;
    }
    client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap()
        .get(0)
}

/// The ids of `table`, in order.
async fn ids(client: &Client, table: &str) -> Vec<i32> {
    first_column(client, &format!("SELECT id FROM {table} ORDER BY id")).await
}

/// The tables the target reports failing.
async fn failing(dst: &Client) -> Vec<String> {
    first_column(
        dst,
        "SELECT entity FROM maskbus.table_failures ORDER BY entity",
    )
    .await
}

#[tokio::test]
async fn a_table_failing_at_its_first_copy_leaves_the_follower_following_the_others() {
    let test = "follow_first_copy";
    let f = Follow::new(test, &["others", "extra"], "").await;
    let src = f.source().await;
    src.batch_execute(&format!(
        "INSERT INTO others SELECT g, 'o' || g FROM generate_series(1, 5) g;
         INSERT INTO extra VALUES (1, '{LEAK}');"
    ))
    .await
    .unwrap();
    let _producer = Background::spawn(&["run", "--config", &f.producer]);
    // Caught up with one table failing: exit 3, the table named.
    let first = f.once();
    assert_eq!(first.code, 3, "{}{}", first.stdout, first.stderr);
    assert!(first.stderr.contains("extra"), "{}", first.stderr);
    let dst = connect(&f.dbs.url("dst")).await;
    assert_eq!(ids(&dst, "others").await, vec![1, 2, 3, 4, 5]);
    assert_eq!(failing(&dst).await, vec!["public.extra".to_string()]);

    // Following: the others' changes arrive after the failure.
    let log = f.files.write("consumer.log", "");
    let _follower = Background::spawn_logged(&["run", "--config", &f.consumer], &log);
    src.batch_execute("INSERT INTO others SELECT g, 'o' || g FROM generate_series(6, 10) g; DELETE FROM others WHERE id = 1")
        .await
        .unwrap();
    wait_until("the others' changes", || async {
        ids(&dst, "others").await == (2..=10).collect::<Vec<_>>()
    })
    .await;
    assert_eq!(count(&dst, "extra").await, 0);
    assert!(failing(&dst).await.contains(&"public.extra".to_string()));

    // Fixed on the source: copied again at a later look, then followed.
    src.batch_execute("UPDATE extra SET name = 'fine' WHERE id = 1")
        .await
        .unwrap();
    wait_until("the failing table copied again", || async {
        count(&dst, "extra").await == 1
    })
    .await;
    src.batch_execute("INSERT INTO extra VALUES (2, 'two')")
        .await
        .unwrap();
    wait_until("the table followed", || async {
        ids(&dst, "extra").await == vec![1, 2]
    })
    .await;
    wait_until("no table reported failing", || async {
        failing(&dst).await.is_empty()
    })
    .await;
    drop(_follower);
    f.once().success();
    f.drop_slot();
}

#[tokio::test]
async fn a_child_whose_parent_fails_waits_and_both_converge_once_the_parent_is_fixed() {
    let test = "follow_parent_skipped";
    let f = Follow::new(test, &["others", "parents", "kids"], "").await;
    let src = f.source().await;
    src.batch_execute(
        "INSERT INTO others VALUES (1, 'o');
         INSERT INTO parents VALUES (1, 'p');
         INSERT INTO kids VALUES (1, 1, 'k');",
    )
    .await
    .unwrap();
    let _producer = Background::spawn(&["run", "--config", &f.producer]);
    f.once().success();
    let log = f.files.write("consumer.log", "");
    let _follower = Background::spawn_logged(&["run", "--config", &f.consumer], &log);
    let dst = connect(&f.dbs.url("dst")).await;

    // The parent row fails closed (the guard refuses it); its child arrives in the next
    // transaction, and another table's change after both.
    src.batch_execute(&format!("INSERT INTO parents VALUES (2, '{LEAK}')"))
        .await
        .unwrap();
    src.batch_execute("INSERT INTO kids VALUES (2, 2, 'k2')")
        .await
        .unwrap();
    src.batch_execute("INSERT INTO others VALUES (2, 'o2'), (3, 'o3')")
        .await
        .unwrap();
    wait_until("the other table follows past the child", || async {
        ids(&dst, "others").await == vec![1, 2, 3]
    })
    .await;
    wait_until("the child reported failing", || async {
        failing(&dst).await.contains(&"public.kids".to_string())
    })
    .await;
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("waits for its parent"), "{logged}");
    assert!(!logged.contains("4532"), "no value in the log");
    // Still following after all that.
    src.batch_execute("INSERT INTO others VALUES (4, 'o4')")
        .await
        .unwrap();
    wait_until("the follower alive", || async {
        ids(&dst, "others").await == vec![1, 2, 3, 4]
    })
    .await;

    // The parent fixed on the source: both converge.
    src.batch_execute("UPDATE parents SET name = 'fixed' WHERE id = 2")
        .await
        .unwrap();
    wait_until("parent and child converge", || async {
        ids(&dst, "parents").await == vec![1, 2] && ids(&dst, "kids").await == vec![1, 2]
    })
    .await;
    src.batch_execute("INSERT INTO kids VALUES (3, 2, 'k3'); DELETE FROM kids WHERE id = 1")
        .await
        .unwrap();
    wait_until("the child followed", || async {
        ids(&dst, "kids").await == vec![2, 3]
    })
    .await;
    wait_until("no table reported failing", || async {
        failing(&dst).await.is_empty()
    })
    .await;
    let name: String = dst
        .query_one("SELECT name FROM parents WHERE id = 2", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(name, "fixed");
    drop(_follower);
    f.once().success();
    f.drop_slot();
}

#[tokio::test]
async fn a_table_added_to_the_policy_while_following_loses_and_doubles_no_insert() {
    let test = "follow_added_table";
    let f = Follow::new(test, &["others"], "").await;
    let src = f.source().await;
    src.batch_execute(
        "INSERT INTO others VALUES (1, 'o');
         INSERT INTO extra SELECT g, 'e' || g FROM generate_series(1, 20) g;",
    )
    .await
    .unwrap();
    let producer = Background::spawn(&["run", "--config", &f.producer]);
    f.once().success();
    let log = f.files.write("consumer.log", "");
    let _follower = Background::spawn_logged(&["run", "--config", &f.consumer], &log);
    let dst = connect(&f.dbs.url("dst")).await;
    let producer_log = f.files.write("producer.log", "");

    // Inserts one row a transaction into the new table, through the producer's restart and the
    // table's copy, until told to stop (then 50 more).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let src = f.source().await;
        tokio::spawn(async move {
            let mut id = 100;
            let mut after_stop = 0;
            while after_stop < 50 {
                src.execute("INSERT INTO extra VALUES ($1, 'w')", &[&id])
                    .await
                    .unwrap();
                id += 1;
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    after_stop += 1;
                }
            }
        })
    };
    // The producer restarted with the table in its policy.
    producer.terminate();
    std::fs::write(&f.policy, policy(&["others", "extra"])).unwrap();
    let _producer = Background::spawn_logged(&["run", "--config", &f.producer], &producer_log);
    wait_showing("the new table's copy", &[&log, &producer_log], || async {
        count(&dst, "extra").await > 0
    })
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.await.unwrap();
    src.batch_execute("INSERT INTO others VALUES (2, 'o2')")
        .await
        .unwrap();
    let want = ids(&src, "extra").await;
    wait_showing(
        "every insert of the new table",
        &[&log, &producer_log],
        || async {
            ids(&dst, "extra").await.len() >= want.len() && ids(&dst, "others").await == vec![1, 2]
        },
    )
    .await;
    assert_eq!(ids(&dst, "extra").await, want, "none lost, none doubled");
    drop(_follower);
    f.once().success();
    assert_eq!(ids(&dst, "extra").await, want);
    f.drop_slot();
}

#[tokio::test]
async fn a_dba_publication_is_read_by_a_select_and_replication_role_and_never_dropped() {
    let test = "follow_dba_publication";
    let roles = TestRoles::create(test, &["reader"]).await;
    let reader = roles.name("reader").to_string();
    let publication = format!("dba_{test}");
    let f = {
        // The source URL names the test's database: made first, then the producer's config
        // written again to reach it as the reader.
        let made = Follow::new(test, &["others", "extra"], "").await;
        let src = made.dbs.url("src");
        let producer = made.files.write(
            "producer.toml",
            &std::fs::read_to_string(&made.producer)
                .unwrap()
                .replace(
                    &format!("source_url = \"{src}\""),
                    &format!("source_url = \"{}\"", roles.url_as(&src, "reader")),
                )
                .replace(
                    "slot = ",
                    &format!("publication = \"{publication}\"\nslot = "),
                ),
        );
        Follow { producer, ..made }
    };
    let admin = connect(&f.dbs.url("src")).await;
    admin
        .batch_execute(&format!(
            "ALTER ROLE {reader} REPLICATION;
             GRANT SELECT ON others, extra TO {reader};
             CREATE PUBLICATION {publication} FOR TABLE others;
             INSERT INTO others VALUES (1, 'o');
             INSERT INTO extra VALUES (1, 'e');"
        ))
        .await
        .unwrap();
    let producer_log = f.files.write("producer.log", "");
    let _producer = Background::spawn_logged(&["run", "--config", &f.producer], &producer_log);
    // The publication lacks a table of the policy: it fails closed by name, the other streams.
    let first = f.once();
    assert_eq!(first.code, 3, "{}{}", first.stdout, first.stderr);
    assert!(first.stderr.contains("public.extra"), "{}", first.stderr);
    let dst = connect(&f.dbs.url("dst")).await;
    let src = f.source().await;
    src.batch_execute(
        "INSERT INTO others VALUES (2, 'o2'); UPDATE others SET name = 'x' WHERE id = 1",
    )
    .await
    .unwrap();
    assert_eq!(f.once().code, 3);
    assert_eq!(ids(&dst, "others").await, vec![1, 2]);
    let logged = std::fs::read_to_string(&producer_log).unwrap();
    assert!(
        logged.contains("the publication lacks these tables") && logged.contains("public.extra"),
        "{logged}"
    );

    // The DBA adds it: copied, then followed.
    admin
        .batch_execute(&format!("ALTER PUBLICATION {publication} ADD TABLE extra"))
        .await
        .unwrap();
    let added = f.once();
    assert_eq!(
        added.code,
        0,
        "{}{}\n{}",
        added.stdout,
        added.stderr,
        std::fs::read_to_string(&producer_log).unwrap()
    );
    src.batch_execute("INSERT INTO extra VALUES (2, 'e2')")
        .await
        .unwrap();
    f.once().success();
    assert_eq!(ids(&dst, "extra").await, vec![1, 2]);
    assert_eq!(ids(&dst, "others").await, vec![1, 2]);

    // Never dropped by the producer, not even with its slot.
    f.drop_slot();
    let kept: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_publication WHERE pubname = $1",
            &[&publication],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 1, "the DBA's publication stays");
    let logged = std::fs::read_to_string(&producer_log).unwrap();
    assert!(!logged.contains("permission denied"), "{logged}");
}
