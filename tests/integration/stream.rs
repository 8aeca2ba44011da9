//! The change stream end to end, and `maskbus verify`: inserts, updates (of keys too) and
//! deletes of parents with their children reach the target in commit order; kill -9 of either
//! agent mid-stream loses and doubles nothing; an abandoned slot is reported and dropped;
//! verify finds rows changed, added and removed by hand, and --repair makes the target equal;
//! a source the walsender cannot be sure to reach (a URL naming two servers) is read by SQL; a
//! large transaction is applied as it arrives, and either agent killed inside it leaves the
//! target without any of it until it is applied whole.
//!
//! The dev cluster commits with `synchronous_commit = off`, and a slot decodes only WAL flushed
//! to disk: the sessions that change the source here commit synchronously, so a `--once` that
//! follows sees their changes.

use crate::support::*;

/// The bank in three databases, a producer with a slot and a consumer in stream mode.
async fn stream_bank(
    test: &str,
    customers: &str,
    consumer_extra: &str,
) -> (TestDatabases, ConfigFiles, String, String) {
    stream_bank_with(test, customers, "", consumer_extra).await
}

async fn source_session(dbs: &TestDatabases) -> maskbus_pg::tokio_postgres::Client {
    let src = connect(&dbs.url("src")).await;
    src.batch_execute("SET synchronous_commit = on")
        .await
        .unwrap();
    src
}

/// Deletes customer `id` with everything that belongs to it, children first, in one transaction.
const DELETE_CUSTOMER: &str = "
    BEGIN;
    DELETE FROM transactions WHERE account_id IN (SELECT id FROM accounts WHERE customer_id = $ID);
    DELETE FROM cards WHERE account_id IN (SELECT id FROM accounts WHERE customer_id = $ID);
    DELETE FROM accounts WHERE customer_id = $ID;
    DELETE FROM addresses WHERE customer_id = $ID;
    DELETE FROM customers WHERE id = $ID;
    COMMIT;";

async fn stream_state(dst: &maskbus_pg::tokio_postgres::Client) -> (String, bool, i64) {
    let row = dst
        .query_one("SELECT applied_lsn, join_snapshot IS NOT NULL, transactions_applied FROM maskbus.stream_state", &[])
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

/// Deletes the first zoo animal with its children in five tables, in one transaction.
const DELETE_ANIMAL: &str = "
    BEGIN;
    CREATE TEMP TABLE doomed ON COMMIT DROP AS SELECT id FROM zoo.animals ORDER BY id LIMIT 1;
    DELETE FROM zoo.feedings WHERE animal_id IN (SELECT id FROM doomed);
    DELETE FROM zoo.animal_species WHERE animal_id IN (SELECT id FROM doomed);
    DELETE FROM zoo.events WHERE animal_id IN (SELECT id FROM doomed);
    DELETE FROM zoo.adoptions WHERE animal_id IN (SELECT id FROM doomed);
    UPDATE annex.animals SET zoo_animal = NULL WHERE zoo_animal IN (SELECT id FROM doomed);
    DELETE FROM zoo.animals WHERE id IN (SELECT id FROM doomed);
    COMMIT;";

fn slots_named(run: &Run, name: &str) -> usize {
    run.stdout.lines().filter(|l| l.starts_with(name)).count()
}

#[tokio::test]
async fn inserts_updates_and_deletes_stream_in_commit_order_and_the_slot_follows() {
    let (dbs, _files, producer, consumer) = stream_bank("stream_bank", "300", "").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let first = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert!(first.stdout.contains("synced"), "{}", first.stdout);
    assert_target_is_masked_source(&dbs).await;
    let dst = connect(&dbs.url("dst")).await;
    let (_, joined, _) = stream_state(&dst).await;
    assert!(joined, "the copy's snapshot is recorded");

    let src = source_session(&dbs).await;
    // New rows (a customer with an account and a card), updates of masked and kept columns, a
    // key update, and deletes of a parent with all its children.
    src.batch_execute(
        "BEGIN;
         INSERT INTO customers (id, first_name, last_name, email, ssn, date_of_birth, phone, created_at)
              VALUES (100001, 'Zed', 'Stream', 'zed@example.com', '123-45-6789', '1980-02-03', '555-0100', now());
         INSERT INTO accounts (id, customer_id, account_number, routing_number, account_type, balance, opened_at)
              VALUES (900001, 100001, '12345678901', '021000021', 'checking', 10.50, now());
         INSERT INTO cards (id, account_id, card_number, brand, expiry) VALUES (900001, 900001, '4111 1111 1111 1111', 'visa', '2030-01-01');
         COMMIT;
         UPDATE customers SET email = 'moved@example.com', phone = NULL WHERE id = 2;
         UPDATE accounts SET balance = balance + 1 WHERE customer_id = 3;
         UPDATE addresses SET id = 800001 WHERE id = (SELECT min(id) FROM addresses WHERE customer_id = 4);",
    )
    .await
    .unwrap();
    src.batch_execute(&DELETE_CUSTOMER.replace("$ID", "5"))
        .await
        .unwrap();
    let delta = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    let gone: i64 = dst
        .query_one("SELECT count(*) FROM customers WHERE id = 5", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(gone, 0, "the deleted customer left the target");
    let (applied, _, transactions) = stream_state(&dst).await;
    // Three source transactions: the insert, the updates (one implicit transaction), the delete.
    assert_eq!(transactions, 3, "{}", delta.stdout);

    // The slot moves once the consumer confirms: the next request names the applied position,
    // which the producer's walsender reports at its next status update.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let confirmed = || async {
        src.query_one(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'maskbus_stream_bank'",
            &[],
        )
        .await
        .unwrap()
        .get::<_, String>(0)
    };
    wait_until("the slot to stand where the target committed", || async {
        confirmed().await == applied
    })
    .await;
    // And no further: the consumer has confirmed nothing else.
    assert_eq!(confirmed().await, applied);
    // Status knows the stream's position, and asks the producer whether changes wait.
    let status = maskbus(&["status", "--config", &consumer]);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    assert!(
        status.stdout.contains("change stream: applied through ")
            && status.stdout.contains("(3 transactions"),
        "{}",
        status.stdout
    );
    src.batch_execute("UPDATE customers SET phone = '555-0199' WHERE id = 6")
        .await
        .unwrap();
    let status = maskbus(&["status", "--config", &consumer]);
    assert_eq!(status.code, 6, "{}", status.stdout);
    assert!(
        status.stdout.contains("changes wait on the source"),
        "{}",
        status.stdout
    );
    maskbus(&["run", "--config", &consumer, "--once"]).success();

    // A slot no producer names is reported, and dropped on request.
    let src_admin = connect(&dbs.url("src")).await;
    src_admin
        .batch_execute("CREATE PUBLICATION maskbus_forgotten FOR TABLE customers")
        .await
        .unwrap();
    src_admin
        .batch_execute("SELECT pg_create_logical_replication_slot('maskbus_forgotten', 'pgoutput')")
        .await
        .unwrap();
    let listed = maskbus(&["slot", "list", "--config", &producer]);
    assert_eq!(listed.code, 5, "{}{}", listed.stdout, listed.stderr);
    assert_eq!(
        slots_named(&listed, "maskbus_forgotten"),
        1,
        "{}",
        listed.stdout
    );
    assert!(listed.stdout.contains("ABANDONED"), "{}", listed.stdout);
    maskbus(&["slot", "drop", "maskbus_forgotten", "--config", &producer]).success();
    let listed = maskbus(&["slot", "list", "--config", &producer]).success();
    assert_eq!(
        slots_named(&listed, "maskbus_forgotten"),
        0,
        "{}",
        listed.stdout
    );
    assert_eq!(
        slots_named(&listed, "maskbus_stream_bank"),
        1,
        "{}",
        listed.stdout
    );
    // The stream's slot is dropped at the end, or it would keep WAL on the shared cluster.
    maskbus(&["slot", "drop", "maskbus_stream_bank", "--config", &producer]).success();
}

/// `url` naming its server twice (`host:port,host:port`): a failover list whose first entry the
/// SQL connection reaches.
fn naming_two_servers(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (authority, path) = rest.split_once('/').expect("a URL with a database");
    let (user, server) = match authority.rsplit_once('@') {
        Some((user, server)) => (format!("{user}@"), server),
        None => (String::new(), authority),
    };
    format!("{scheme}://{user}{server},{server}/{path}")
}

#[tokio::test]
async fn a_source_url_naming_two_servers_reads_the_slot_by_sql_and_streams_the_same_changes() {
    let test = "stream_by_sql";
    let dbs = seeded(test, "60").await;
    let files = ConfigFiles::new(test);
    let urls = AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: naming_two_servers(&dbs.url("src")),
        target: dbs.url("dst"),
    };
    let (producer, consumer) = write_agent_configs(
        &files,
        &urls,
        &format!("slot = \"maskbus_{test}\""),
        "mode = \"stream\"\nrequest_timeout = \"3s\"\n",
    );
    let log = files.write("producer.log", "");
    let mut producer_run = Background::spawn_logged(&["run", "--config", &producer], &log);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;

    let src = source_session(&dbs).await;
    src.batch_execute(
        "UPDATE customers SET email = 'by-sql@example.com' WHERE id = 2;
         UPDATE accounts SET balance = balance + 1 WHERE customer_id = 3;",
    )
    .await
    .unwrap();
    src.batch_execute(&DELETE_CUSTOMER.replace("$ID", "5"))
        .await
        .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    let dst = connect(&dbs.url("dst")).await;
    let (_, _, transactions) = stream_state(&dst).await;
    // The two updates went in one implicit transaction, the delete in another.
    assert_eq!(transactions, 2);
    maskbus(&[
        "slot",
        "drop",
        &format!("maskbus_{test}"),
        "--config",
        &producer,
    ])
    .success();
    producer_run.kill9();
    let logged = std::fs::read_to_string(&log).unwrap();
    // The SQL interface read the slot (its looks are logged), never a walsender.
    assert!(logged.contains("names several servers"), "{logged}");
    assert!(logged.contains("slot peeked"), "{logged}");
    assert!(!logged.contains("changes streamed"), "{logged}");
    // Not because the source refused a replication connection: it was never asked for one.
    assert!(
        !logged.contains("takes no replication connection"),
        "{logged}"
    );
}

#[tokio::test]
async fn a_followed_slot_can_be_dropped_and_a_consumer_gone_back_starts_over() {
    let (dbs, _files, producer, consumer) = stream_bank("stream_back", "60", "").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let src = source_session(&dbs).await;
    let dst = connect(&dbs.url("dst")).await;
    // Two rounds with a change each: the producer's walsender stays open between them.
    for n in 1..=2 {
        src.batch_execute(&format!(
            "UPDATE accounts SET balance = balance + {n} WHERE customer_id = {n}"
        ))
        .await
        .unwrap();
        maskbus(&["run", "--config", &consumer, "--once"]).success();
    }
    // The slot's rows, and those a walsender reads.
    let slots = |active: bool| {
        let src = &src;
        async move {
            src.query_one(
                "SELECT count(*) FROM pg_replication_slots
                  WHERE slot_name = 'maskbus_stream_back' AND (active OR NOT $1)",
                &[&active],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
        }
    };
    let walsenders = || slots(true);
    assert_eq!(walsenders().await, 1, "the producer keeps reading the slot");

    // The target goes back before what it confirmed (restored from a copy, say): the changes
    // between are gone from the slot, so the consumer is told and copies again.
    dst.batch_execute("UPDATE maskbus.stream_state SET applied_lsn = started_lsn")
        .await
        .unwrap();
    src.batch_execute("UPDATE accounts SET balance = balance + 7 WHERE customer_id = 3")
        .await
        .unwrap();
    let back = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert!(
        back.stderr.contains("the change stream was lost"),
        "{}{}",
        back.stdout,
        back.stderr
    );
    assert_target_is_masked_source(&dbs).await;

    // A slot a producer follows is dropped on request: its walsender is ended first.
    assert_eq!(walsenders().await, 1);
    maskbus(&["slot", "drop", "maskbus_stream_back", "--config", &producer]).success();
    assert_eq!(slots(false).await, 0);
    // The consumer then finds the stream lost, starts it again, and ends equal.
    src.batch_execute("UPDATE accounts SET balance = balance + 9 WHERE customer_id = 4")
        .await
        .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    maskbus(&["slot", "drop", "maskbus_stream_back", "--config", &producer]).success();
}

#[tokio::test]
async fn kill_9_of_either_agent_mid_stream_loses_and_doubles_nothing() {
    let (dbs, _files, producer, consumer) = stream_bank(
        "stream_kill",
        "200",
        "page_size = 20\npages_per_request = 1\nfollow_interval = \"100ms\"",
    )
    .await;
    let mut producer_process = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let src = source_session(&dbs).await;
    // Many small transactions, and a large one, to cut through. (The description is clean: a
    // card in the kept description would be held back by the producer's egress guard, which
    // tests/integration/egress.rs covers.)
    for n in 0..40 {
        src.batch_execute(&format!(
            "UPDATE accounts SET balance = balance + {n} WHERE id % 40 = {n};
             INSERT INTO transactions (account_id, amount, posted_at, merchant, description)
                  SELECT id, 1.25, now(), 'Stream Shop', 'paid at the stream shop' FROM accounts WHERE id % 40 = {n};"
        ))
        .await
        .unwrap();
    }
    src.batch_execute(&DELETE_CUSTOMER.replace("$ID", "7"))
        .await
        .unwrap();
    let dst = connect(&dbs.url("dst")).await;
    let applied = || async {
        dst.query_one("SELECT transactions_applied FROM maskbus.stream_state", &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let before = applied().await;
    let mut follower = Background::spawn(&["run", "--config", &consumer]);
    wait_until("some changes applied", || async {
        applied().await > before + 3
    })
    .await;
    follower.kill9();
    let mid = applied().await;
    let mut follower = Background::spawn(&["run", "--config", &consumer]);
    wait_until("more changes applied", || async {
        applied().await > mid + 3
    })
    .await;
    producer_process.kill9();
    let _producer = Background::spawn(&["run", "--config", &producer]);
    drop(producer_process);
    follower.kill9();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    maskbus(&["slot", "drop", "maskbus_stream_kill", "--config", &producer]).success();
}

/// How many of the bank's transactions carry the big update's mark (an amount no seeded row has).
async fn marked(client: &maskbus_pg::tokio_postgres::Client) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM transactions WHERE amount >= 500000",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// Replies the producer sent before it knew how many its answer would have: a transaction sent
/// as it was masked.
async fn early_replies(bus: &maskbus_pg::tokio_postgres::Client) -> i64 {
    bus.query_one(
        "SELECT count(*) FROM mq.mail WHERE kind = 'changes' AND body LIKE '%\"parts\":0%'",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

/// A large source transaction goes to the consumer as the producer masks it, and the consumer
/// applies it as it comes in one target transaction: killed inside it (its first statement held
/// on a lock), the target holds none of it, and the next run applies all of it.
#[tokio::test]
async fn a_large_transaction_is_applied_as_it_arrives_and_a_consumer_killed_inside_it_leaves_none_of_it(
) {
    let test = "stream_big_consumer";
    let (dbs, files, producer, consumer) =
        stream_bank(test, "600", "follow_interval = \"100ms\"").await;
    let log = files.write("producer.log", "");
    let mut producer_run = Background::spawn_logged(&["run", "--config", &producer], &log);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let dst = connect(&dbs.url("dst")).await;
    let bus = connect(&dbs.url("bus")).await;
    let mut follower = Background::spawn(&["run", "--config", &consumer]);
    // The target's transactions table is held: the follower's first statement waits.
    let holder = connect(&dbs.url("dst")).await;
    holder
        .batch_execute("BEGIN; LOCK TABLE transactions IN SHARE MODE")
        .await
        .unwrap();
    let src = source_session(&dbs).await;
    let changed = src
        .execute(
            "UPDATE transactions SET amount = amount + 1000000 WHERE id <= 5000",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(changed, 5000);
    wait_until("the follower's first statement waits for the lock", || async {
        dst.query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            &[],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
            > 0
    })
    .await;
    // The producer sent the first parts before the rest was masked.
    wait_until("replies sent before the answer was whole", || async {
        early_replies(&bus).await > 0
    })
    .await;
    follower.kill9();
    holder.batch_execute("COMMIT").await.unwrap();
    assert_eq!(
        marked(&dst).await,
        0,
        "nothing of the transaction committed"
    );
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(marked(&dst).await, 5000);
    assert_target_is_masked_source(&dbs).await;
    maskbus(&[
        "slot",
        "drop",
        &format!("maskbus_{test}"),
        "--config",
        &producer,
    ])
    .success();
    producer_run.kill9();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("changes masked as they arrived"),
        "{logged}"
    );
}

/// The producer killed inside a large transaction it was sending (held on a row it reads again
/// from the source, whose table is locked): the consumer, which applied the first replies in its
/// open transaction, hears nothing more, rolls back, and asks again; the producer started again
/// sends the whole transaction, and the target ends equal to the masked source.
#[tokio::test]
async fn the_producer_killed_inside_a_large_transaction_leaves_the_consumer_to_roll_back_and_ask_again(
) {
    let test = "stream_big_producer";
    // Its subject is a transaction sent once committed (with streaming, the row read again
    // from the source would have it sent again then anyway).
    let (dbs, files, producer, consumer) = stream_bank_with(
        test,
        "600",
        "stream_while_written = false",
        "follow_interval = \"100ms\"",
    )
    .await;
    let producer_log = files.write("producer.log", "");
    let mut producer_run = Background::spawn_logged(&["run", "--config", &producer], &producer_log);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let consumer_log = files.write("consumer.log", "");
    let mut follower = Background::spawn_logged(&["run", "--config", &consumer], &consumer_log);
    let dst = connect(&dbs.url("dst")).await;
    let bus = connect(&dbs.url("bus")).await;
    let src = source_session(&dbs).await;
    // A value stored out of line (TOASTed): an update that leaves it alone does not carry it,
    // so the producer reads that row again from the source.
    src.batch_execute(
        "UPDATE transactions SET description = (SELECT string_agg(md5(g::text), ' ') FROM generate_series(1, 400) g) WHERE id = 4001",
    )
    .await
    .unwrap();
    wait_until("the long description arrives", || async {
        dst.query_one(
            "SELECT length(description) > 8000 FROM transactions WHERE id = 4001",
            &[],
        )
        .await
        .unwrap()
        .get::<_, bool>(0)
    })
    .await;
    // 4,000 plain rows, then the row whose description stays: the producer sends the first
    // replies, then waits on the table the test locks as the transaction commits. The lock is
    // asked for while the follower's long poll waits for a change (queued behind the writer, it
    // holds every reader of the table, the follower's idle look at the schema too).
    let writer = source_session(&dbs).await;
    writer
        .batch_execute(
            "BEGIN;
             UPDATE transactions SET amount = amount + 1000000 WHERE id <= 4000;
             UPDATE transactions SET amount = amount + 1000000 WHERE id = 4001;",
        )
        .await
        .unwrap();
    let long_polls = || async {
        bus.query_one(
            "SELECT coalesce(max(id), 0) FROM mq.mail WHERE kind = 'request' AND body LIKE '%\"wait_ms\"%'",
            &[],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
    };
    let before = long_polls().await;
    wait_until("the follower's next long poll", || async {
        long_polls().await > before
    })
    .await;
    let locker = source_session(&dbs).await;
    let locked = tokio::spawn(async move {
        locker
            .batch_execute("BEGIN; LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE")
            .await
            .unwrap();
        locker
    });
    wait_until("the lock waits for the writer", || async {
        src.query_one(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'transactions' AND l.mode = 'AccessExclusiveLock' AND NOT l.granted",
            &[],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
            > 0
    })
    .await;
    writer.batch_execute("COMMIT").await.unwrap();
    let locker = locked.await.unwrap();
    wait_until("replies sent before the answer was whole", || async {
        early_replies(&bus).await > 0
    })
    .await;
    producer_run.kill9();
    wait_until("the consumer to give up on the cut answer", || async {
        std::fs::read_to_string(&consumer_log)
            .unwrap()
            .contains("stopped after")
    })
    .await;
    assert_eq!(
        marked(&dst).await,
        0,
        "nothing of the transaction committed"
    );
    locker.batch_execute("COMMIT").await.unwrap();
    let _producer = Background::spawn(&["run", "--config", &producer]);
    wait_until("the whole transaction applied", || async {
        marked(&dst).await == 4001
    })
    .await;
    follower.kill9();
    assert_target_is_masked_source(&dbs).await;
    maskbus(&[
        "slot",
        "drop",
        &format!("maskbus_{test}"),
        "--config",
        &producer,
    ])
    .success();
}

/// Whether the target's follower holds a transaction open that has written (an early apply).
async fn applying(dst: &maskbus_pg::tokio_postgres::Client) -> bool {
    dst.query_one(
        "SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
          WHERE c.relname = 'transactions' AND l.mode = 'RowExclusiveLock' AND l.granted
            AND l.pid <> pg_backend_pid()",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

/// Marks bank transaction `id` (an amount no seeded row has), committing on `client`.
async fn mark_one(client: &maskbus_pg::tokio_postgres::Client, id: i64) {
    client
        .execute(
            "UPDATE transactions SET amount = -7.77 WHERE id = $1",
            &[&id],
        )
        .await
        .unwrap();
}

/// Whether bank transaction `id` carries the mark of [`mark_one`].
async fn shows_mark(client: &maskbus_pg::tokio_postgres::Client, id: i64) -> bool {
    client
        .query_one(
            "SELECT count(*) = 1 FROM transactions WHERE id = $1 AND amount = -7.77",
            &[&id],
        )
        .await
        .unwrap()
        .get(0)
}

/// How many rows of `ids` (a condition on `id`) the bank's transactions table holds.
async fn rows_where(client: &maskbus_pg::tokio_postgres::Client, ids: &str) -> i64 {
    client
        .query_one(
            &format!("SELECT count(*) FROM transactions WHERE {ids}"),
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// A follower that waits 20 s for a reply: the producer unwinds a transaction sent while written
/// whose writer leaves it 10 s without one, more than the steps of these tests take.
const PATIENT: &str = "follow_interval = \"100ms\"\nrequest_timeout = \"20s\"";

/// The bank followed through a walsender, for the tests of large transactions sent while
/// written: a producer logging to a file, the copy made, a follower running, and sessions on
/// the target, the bus and the source (committing synchronously), which `start` hands over.
struct Written {
    test: String,
    dbs: TestDatabases,
    _files: ConfigFiles,
    producer: String,
    log: String,
    producer_run: Background,
    follower: Background,
}

type Client = maskbus_pg::tokio_postgres::Client;

impl Written {
    async fn start(test: &str, consumer_extra: &str) -> (Self, Client, Client, Client) {
        let (dbs, files, producer, consumer) = stream_bank(test, "1200", consumer_extra).await;
        let log = files.write("producer.log", "");
        let producer_run = Background::spawn_logged(&["run", "--config", &producer], &log);
        maskbus(&["run", "--config", &consumer, "--once"]).success();
        let dst = connect(&dbs.url("dst")).await;
        let bus = connect(&dbs.url("bus")).await;
        let follower = Background::spawn(&["run", "--config", &consumer]);
        let src = source_session(&dbs).await;
        let written = Written {
            test: test.to_string(),
            dbs,
            _files: files,
            producer,
            log,
            producer_run,
            follower,
        };
        (written, dst, bus, src)
    }

    /// Stops the follower, checks the target equals the masked source, drops the slot and
    /// stops the producer; returns the producer's log.
    async fn finish(mut self) -> String {
        self.follower.kill9();
        assert_target_is_masked_source(&self.dbs).await;
        maskbus(&[
            "slot",
            "drop",
            &format!("maskbus_{}", self.test),
            "--config",
            &self.producer,
        ])
        .success();
        self.producer_run.kill9();
        std::fs::read_to_string(&self.log).unwrap()
    }
}

/// The bank's transactions as the tests of large transactions split them: ids up to 5000, 5001
/// to 9000, and all of them.
async fn seeded_split(src: &Client) -> (i64, i64, i64) {
    let first = rows_where(src, "id <= 5000").await;
    let second = rows_where(src, "id > 5000 AND id <= 9000").await;
    let last = rows_where(src, "true").await;
    assert!(
        first > 4000 && second > 2000 && last > 9100,
        "seeded {first}, {second}, {last}"
    );
    (first, second, last)
}

/// Begins a transaction on `src` that adds a million to the amounts of the rows `ids` names,
/// and waits until replies of it, sent while written, are on the bus beyond the `sent` before.
async fn begin_large(src: &Client, bus: &Client, ids: &str, sent: i64) {
    src.batch_execute(&format!(
        "BEGIN; UPDATE transactions SET amount = amount + 1000000 WHERE {ids}"
    ))
    .await
    .unwrap();
    wait_until("replies of the open transaction on the bus", || async {
        early_replies(bus).await > sent
    })
    .await;
}

/// How many times the producer unwound a transaction sent while it was written.
fn unwinds(logged: &str) -> usize {
    logged
        .matches("a transaction sent while it was written is read again once committed")
        .count()
}

/// Through a walsender, a large source transaction reaches the target while the source still
/// writes it (pgoutput's streaming): replies are on the bus and the follower's target
/// transaction has written before the source commits. One the source rolls back leaves nothing
/// on the target, and the stream goes on with what commits after it; one it commits arrives
/// whole.
#[tokio::test]
async fn a_large_transaction_is_applied_while_the_source_writes_it_and_one_rolled_back_leaves_none_of_it(
) {
    let (bank, dst, bus, src) = Written::start("stream_while_written", PATIENT).await;
    let big = rows_where(&src, "id <= 6000").await;
    let last = rows_where(&src, "true").await;
    assert!(
        big > 4000 && last > 9100,
        "the seed has {big} rows of the big update, {last} in all"
    );
    // Rolled back: sent while written, then undone on the target.
    begin_large(&src, &bus, "id <= 6000", 0).await;
    wait_until(
        "the follower applying it before the source commits",
        || async { applying(&dst).await },
    )
    .await;
    src.batch_execute("ROLLBACK").await.unwrap();
    // What commits next arrives, and the rolled-back transaction never did.
    mark_one(&src, last).await;
    wait_until("the next commit applied", || async {
        shows_mark(&dst, last).await
    })
    .await;
    assert_eq!(
        marked(&dst).await,
        0,
        "nothing of the rolled-back transaction"
    );
    // Committed: arrives whole.
    let sent = early_replies(&bus).await;
    begin_large(&src, &bus, "id <= 6000", sent).await;
    assert_eq!(
        marked(&dst).await,
        0,
        "nothing committed before the source commits"
    );
    src.batch_execute("COMMIT").await.unwrap();
    wait_until("the whole transaction applied", || async {
        marked(&dst).await == big
    })
    .await;
    let logged = bank.finish().await;
    assert!(
        logged.contains("a large transaction rolled back"),
        "{logged}"
    );
}

/// A large transaction being sent while written cannot keep commit order when another
/// transaction commits inside it, and cannot be trusted once a savepoint of it writes (a
/// savepoint rolled back is not always said to be when its changes had been spilled to disk
/// first, which a loaded machine shows): the consumer rolls back what it applied of it, and the
/// producer reads the stream again without streaming, so every transaction arrives once, in
/// commit order, without the savepoint's changes, and the target ends equal to the masked
/// source.
#[tokio::test]
async fn a_commit_or_a_savepoint_rolled_back_inside_a_large_transaction_sends_it_again_once_committed(
) {
    let (bank, dst, bus, src) = Written::start("stream_unwound", PATIENT).await;
    let other = source_session(&bank.dbs).await;
    let (first, second, last) = seeded_split(&src).await;
    // Another transaction commits while a large one is being sent.
    begin_large(&src, &bus, "id <= 5000", 0).await;
    mark_one(&other, last).await;
    wait_until("the other commit applied", || async {
        shows_mark(&dst, last).await
    })
    .await;
    assert_eq!(marked(&dst).await, 0, "the open transaction is not applied");
    src.batch_execute("COMMIT").await.unwrap();
    wait_until("the first large transaction applied", || async {
        marked(&dst).await == first
    })
    .await;
    // A savepoint of a large transaction rolled back after blocks of it were sent.
    let sent = early_replies(&bus).await;
    src.batch_execute(
        "BEGIN;
         UPDATE transactions SET amount = amount + 1000000 WHERE id > 5000 AND id <= 9000;
         SAVEPOINT undone;
         UPDATE transactions SET amount = amount + 1000000 WHERE id <= 5000;",
    )
    .await
    .unwrap();
    wait_until("replies of the open transaction on the bus", || async {
        early_replies(&bus).await > sent
    })
    .await;
    src.batch_execute("ROLLBACK TO SAVEPOINT undone")
        .await
        .unwrap();
    mark_one(&src, last - 1).await;
    src.batch_execute("COMMIT").await.unwrap();
    wait_until("the second large transaction applied", || async {
        shows_mark(&dst, last - 1).await
    })
    .await;
    assert_eq!(marked(&dst).await, first + second);
    // The savepoint's rows, sent while written, were undone: none carries its second addition.
    assert_eq!(rows_where(&dst, "amount >= 1500000").await, 0);
    let logged = bank.finish().await;
    assert!(
        logged.contains("another transaction committed while a large one was being written"),
        "{logged}"
    );
    assert!(
        logged.contains("a subtransaction (a savepoint) of a large transaction wrote"),
        "{logged}"
    );
}

/// A transaction unwound while it was written is not streamed again while it runs: a
/// streaming walsender would send it again from its first change as soon as it writes more,
/// and the next commit beside it would unwind it again, and again, each time sending all of it
/// so far. It is read without streaming until it ends, and arrives whole once committed.
#[tokio::test]
async fn a_transaction_unwound_while_written_is_not_streamed_again_while_it_runs() {
    let (bank, dst, bus, src) = Written::start("stream_unwound_once", PATIENT).await;
    let other = source_session(&bank.dbs).await;
    let (first, second, last) = seeded_split(&src).await;
    begin_large(&src, &bus, "id <= 5000", 0).await;
    // Unwound by a commit beside it; the consumer then moves past that commit, and another.
    for id in [last, last - 1] {
        mark_one(&other, id).await;
        wait_until("a commit beside it applied", || async {
            shows_mark(&dst, id).await
        })
        .await;
    }
    // It writes more while it runs (enough to be streamed), and another commit comes beside it.
    src.batch_execute(
        "UPDATE transactions SET amount = amount + 1000000 WHERE id > 5000 AND id <= 9000",
    )
    .await
    .unwrap();
    mark_one(&other, last - 2).await;
    wait_until("the third commit beside it applied", || async {
        shows_mark(&dst, last - 2).await
    })
    .await;
    assert_eq!(marked(&dst).await, 0, "the open transaction is not applied");
    src.batch_execute("COMMIT").await.unwrap();
    wait_until("the large transaction applied", || async {
        marked(&dst).await == first + second
    })
    .await;
    let logged = bank.finish().await;
    assert_eq!(unwinds(&logged), 1, "{logged}");
}

/// A writer that stops inside a large transaction being sent while written (idle in
/// transaction) would keep the follower waiting for a reply past its patience, and the
/// follower would give up and exit: the producer unwinds it instead, the follower goes on with
/// what commits beside it, and the transaction arrives whole once committed.
#[tokio::test]
async fn a_writer_idle_inside_a_large_transaction_has_it_sent_whole_once_committed() {
    let (bank, dst, bus, src) = Written::start(
        "stream_writer_idle",
        "follow_interval = \"100ms\"\nrequest_timeout = \"8s\"",
    )
    .await;
    let other = source_session(&bank.dbs).await;
    let big = rows_where(&src, "id <= 6000").await;
    let last = rows_where(&src, "true").await;
    begin_large(&src, &bus, "id <= 6000", 0).await;
    // The writer now idles in its transaction, while keepalives keep coming.
    wait_until("the producer unwinding it", || async {
        std::fs::read_to_string(&bank.log)
            .unwrap()
            .contains("the source paused")
    })
    .await;
    // The follower is still there: a commit beside it arrives.
    mark_one(&other, last).await;
    wait_until("a commit beside it applied", || async {
        shows_mark(&dst, last).await
    })
    .await;
    assert_eq!(marked(&dst).await, 0, "the open transaction is not applied");
    src.batch_execute("COMMIT").await.unwrap();
    wait_until("the large transaction applied", || async {
        marked(&dst).await == big
    })
    .await;
    let logged = bank.finish().await;
    assert_eq!(unwinds(&logged), 1, "{logged}");
}

#[tokio::test]
async fn verify_finds_changed_extra_and_missing_rows_and_repair_makes_the_target_equal() {
    let dbs = seeded("verify_bank", "2500").await;
    let files = ConfigFiles::new("verify_bank");
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let equal = maskbus(&["verify", "--config", &consumer]).success();
    assert!(
        equal.stdout.contains("the target equals the masked source"),
        "{}",
        equal.stdout
    );

    // By hand in the target: a changed row, an extra row; in the source: a deleted customer
    // (watermark passes never see deletes).
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(
        "UPDATE customers SET first_name = 'Tampered' WHERE id = 1500;
         INSERT INTO customers (id, first_name, last_name, email, ssn, date_of_birth, created_at)
              VALUES (777777, 'Extra', 'Row', 'x@example.com', '###-##-####', '1990-01-01', now());
         DELETE FROM transactions WHERE id = 4000;",
    )
    .await
    .unwrap();
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(&DELETE_CUSTOMER.replace("$ID", "9"))
        .await
        .unwrap();
    let drift = maskbus(&["verify", "--config", &consumer, "--json"]);
    assert_eq!(drift.code, 4, "{}{}", drift.stdout, drift.stderr);
    let report: serde_json::Value = serde_json::from_str(&drift.stdout).unwrap();
    let table = |name: &str| {
        report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["entity"] == name)
            .cloned()
            .unwrap()
    };
    let customers = table("public.customers");
    assert_eq!(customers["different"], serde_json::json!([["1500"]]));
    let mut extra: Vec<String> = customers["extra"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k[0].as_str().unwrap().to_string())
        .collect();
    extra.sort();
    assert_eq!(extra, ["777777", "9"]);
    assert_eq!(
        table("public.transactions")["missing"],
        serde_json::json!([["4000"]])
    );
    assert!(
        !table("public.accounts")["extra"]
            .as_array()
            .unwrap()
            .is_empty(),
        "customer 9's accounts"
    );
    // Never a value: only keys and counts.
    assert!(!drift.stdout.contains("Tampered"), "{}", drift.stdout);

    maskbus(&["verify", "--config", &consumer, "--repair"]).success();
    assert_target_is_masked_source(&dbs).await;
    let again = maskbus(&["verify", "--config", &consumer]).success();
    assert!(
        again.stdout.contains("the target equals the masked source"),
        "{}",
        again.stdout
    );
}

#[tokio::test]
async fn the_zoo_streams_cycles_partition_moves_key_updates_and_truncates_exactly() {
    use crate::zoo::{assert_audit_clean, assert_target_is_masked_source_by, zoo_policy, zoo_with};
    let (dbs, _files, producer, consumer) = zoo_with(
        "stream_zoo",
        "slot = \"maskbus_stream_zoo\"",
        "mode = \"stream\"\nrequest_timeout = \"3s\"",
    )
    .await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    // Tables whose deletes a publication cannot carry are refused by name, before a slot exists.
    let refused = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_ne!(refused.code, 0);
    for name in ["zoo.feedings", "zoo.visits", "REPLICA IDENTITY FULL"] {
        assert!(refused.stderr.contains(name), "{name}: {}", refused.stderr);
    }
    let listed = maskbus(&["slot", "list", "--config", &producer]).success();
    assert_eq!(
        slots_named(&listed, "maskbus_stream_zoo"),
        0,
        "{}",
        listed.stdout
    );

    let src = source_session(&dbs).await;
    src.batch_execute(
        "ALTER TABLE zoo.feedings REPLICA IDENTITY USING INDEX feedings_animal_id_fed_at_key;
         ALTER TABLE zoo.visits REPLICA IDENTITY FULL;",
    )
    .await
    .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let policy = zoo_policy();
    assert_target_is_masked_source_by(&dbs, &policy).await;

    // Inserts and updates through cycles and partitions, as the watermark test makes them.
    src.batch_execute(
        "INSERT INTO zoo.keepers (name, email, ssn, note) VALUES ('New Keeper', 'new@zoo-mail.org', '321-54-9876', 'fresh');
         UPDATE zoo.keepers SET email = 'changed' || id || '@zoo-mail.org', tags = ARRAY['x'] WHERE id IN (2, 3, 4);
         INSERT INTO zoo.staff (manager_id, name) VALUES (NULL, 'new boss');
         UPDATE zoo.staff SET manager_id = (SELECT max(id) FROM zoo.staff) WHERE id = 10000;
         UPDATE zoo.enclosures SET head_caretaker_id = NULL WHERE id = 1;
         UPDATE zoo.enclosures SET head_caretaker_id = 7 WHERE id = 5;
         INSERT INTO zoo.visits VALUES ('T-new', '2025-05-05', 'someone@example.org');",
    )
    .await
    .unwrap();
    // New pairs of the NOT NULL cycle, and one of them deleted again, each in one transaction.
    src.batch_execute(
        "BEGIN; SET CONSTRAINTS ALL DEFERRED;
         INSERT INTO zoo.nests VALUES (2001, 2001); INSERT INTO zoo.eggs VALUES (2001, 2001);
         COMMIT;
         BEGIN; SET CONSTRAINTS ALL DEFERRED;
         INSERT INTO zoo.nests VALUES (2002, 2002); INSERT INTO zoo.eggs VALUES (2002, 2002);
         COMMIT;
         BEGIN; SET CONSTRAINTS ALL DEFERRED;
         DELETE FROM zoo.eggs WHERE id = 2002; DELETE FROM zoo.nests WHERE id = 2002;
         COMMIT;",
    )
    .await
    .unwrap();
    // A key update (a composite key), a row moving between partitions (its key changes too),
    // a delete from the keyless table, and a parent deleted with all its children.
    src.batch_execute(
        "UPDATE zoo.animal_species SET species_code = 'émeu'
          WHERE (animal_id, species_code) = (SELECT animal_id, species_code FROM zoo.animal_species
                                              WHERE species_code <> 'émeu' ORDER BY 1, 2 LIMIT 1)
            AND NOT EXISTS (SELECT 1 FROM zoo.animal_species s2 WHERE s2.species_code = 'émeu'
                              AND s2.animal_id = zoo.animal_species.animal_id);
         UPDATE zoo.events SET at = '2026-03-03' WHERE (id, at) = (SELECT id, at FROM zoo.events WHERE at < '2026-01-01' ORDER BY id LIMIT 1);
         DELETE FROM zoo.visits WHERE ticket = 'T-2';",
    )
    .await
    .unwrap();
    src.batch_execute(&format!("{DELETE_ANIMAL} TRUNCATE zoo.pens, zoo.gates;"))
        .await
        .unwrap();
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source_by(&dbs, &policy).await;
    let dst = connect(&dbs.url("dst")).await;
    let pens: i64 = dst
        .query_one("SELECT count(*) FROM zoo.pens", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(pens, 0, "the truncate reached the target");
    // Every column of every row, masked values included, hashes alike on both sides.
    let verified = maskbus(&["verify", "--config", &consumer]).success();
    assert!(
        verified
            .stdout
            .contains("the target equals the masked source"),
        "{}",
        verified.stdout
    );
    // The change replies on the bus are as clean as the pages.
    assert_audit_clean(&dbs, &producer);
    maskbus(&["slot", "drop", "maskbus_stream_zoo", "--config", &producer]).success();
}

#[tokio::test]
async fn watermark_mode_deletes_through_a_cycle_arrive_with_repair() {
    use crate::zoo::{assert_target_is_masked_source_by, zoo, zoo_policy};
    let (dbs, _files, producer, consumer) = zoo("repair_zoo", "").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    let src = connect(&dbs.url("src")).await;
    // Rows of the NOT NULL cycle that only reference each other (nest i holds egg 1001 - i,
    // egg i sits in nest i), a parent with all its children, and a row of the keyless
    // table, deleted; a new row inserted.
    src.batch_execute(&format!(
        "BEGIN; SET CONSTRAINTS ALL DEFERRED;
         DELETE FROM zoo.nests WHERE id IN (1, 1000);
         DELETE FROM zoo.eggs WHERE id IN (1, 1000);
         COMMIT;
         {DELETE_ANIMAL}
         DELETE FROM zoo.visits WHERE ticket = 'T-2';
         INSERT INTO zoo.keepers (name, email, ssn, note) VALUES ('Late', 'late@zoo-mail.org', '321-54-9876', 'x');",
    ))
    .await
    .unwrap();
    // A watermark pass brings the insert, and its delete check the deletes, through the cycle
    // too (issue 53): verify agrees.
    let checked = maskbus(&["run", "--config", &consumer, "--once", "--verify"]);
    assert_eq!(checked.code, 0, "{}{}", checked.stdout, checked.stderr);
    assert!(
        checked
            .stdout
            .contains("the target equals the masked source"),
        "{}",
        checked.stdout
    );
    assert_target_is_masked_source_by(&dbs, &zoo_policy()).await;
}

/// One reply of a change answer, as a producer writes it: `rows` one-column rows of entity
/// `public.t`, part `part` of `parts` (0: more follow), answering claim `attempt`.
fn change_reply(rows: &[&str], part: u32, parts: u32, attempt: u32) -> maskbus_mailbox::Body {
    let last = parts > 0 && part + 1 == parts;
    let rows: Vec<Vec<&str>> = rows.iter().map(|row| vec![*row]).collect();
    maskbus_mailbox::body_of(&serde_json::json!({
        "type": "changes",
        "v": maskbus_protocol::VERSION,
        "entity": "public.t",
        "op": "upsert",
        "key": ["id"],
        "columns": ["id"],
        "rows": rows,
        "lsn": if last { Some("aaaaaaaaaaaaaaab") } else { None },
        "commit": last,
        "through": "aaaaaaaaaaaaaaab",
        "part": part,
        "parts": parts,
        "attempt": attempt,
    }))
    .unwrap()
}

/// The rows of a change reply, to compare.
fn change_rows(reply: &maskbus_protocol::ReceivedReply) -> Vec<String> {
    match reply {
        maskbus_protocol::ReceivedReply::Changes(changes) => changes
            .rows
            .iter()
            .map(|row| row.get(0).unwrap_or_default().to_string())
            .collect(),
        other => panic!("expected changes, got {other:?}"),
    }
}

/// Sends `bodies` as replies to `request`, as the producer does.
async fn answer_with(
    producer: &maskbus_mailbox::Mailbox,
    request: &maskbus_mailbox::Message,
    bodies: Vec<maskbus_mailbox::Body>,
) {
    let to = request.reply_to.as_deref().unwrap();
    let replies = bodies
        .into_iter()
        .map(|body| (request.correlation_id.clone(), body))
        .collect();
    producer
        .send_batch(to, "changes", None, replies)
        .await
        .unwrap();
}

/// A change request claimed twice (its lease ran out while the first claim's answer was being
/// sent: a large source transaction takes a while) is answered twice, and the two answers need
/// not be cut alike. The consumer reads the replies of one claim only: a later claim's answer
/// replaces one of which nothing was read yet, and once a reply of one claim has been read the
/// other's are never taken for its next parts: the first one's silence cuts the answer off
/// (transient: the consumer, which rolls back what it applied, asks again). That silence counts
/// from when the consumer asks for the next part, not from when it read the last.
#[tokio::test]
async fn the_replies_of_two_claims_of_one_change_request_are_never_mixed() {
    use maskbus_consumer::{client::Asker, ConsumerError};
    use maskbus_protocol::{Request, VERSION};
    let dbs = TestDatabases::create("st_claims", &["bus", "dst"]).await;
    let bus = maskbus_pg::Database::parse("bus", &dbs.url("bus")).unwrap();
    maskbus_mailbox::install(&bus).await.unwrap();
    let files = ConfigFiles::new("st_claims");
    let path = files.write(
        "consumer.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nrequest_timeout = \"2s\"\n",
            dbs.url("bus"),
            writer_url(&dbs.url("dst"))
        ),
    );
    let maskbus_config::AgentConfig::Consumer(config) =
        maskbus_config::load(std::path::Path::new(&path)).unwrap()
    else {
        panic!("a consumer config");
    };
    let connect = || maskbus_mailbox::Mailbox::connect(bus.clone(), Default::default());
    let asker = Asker::new(connect().await.unwrap(), &config).await.unwrap();
    // The test answers as the producer would.
    let producer = connect().await.unwrap();
    let request = Request::Changes {
        v: VERSION,
        after: None,
        join: None,
        limit: 1000,
        wait_ms: None,
        patience_ms: None,
    };
    let claim = || async {
        let mut claimed = producer.claim(&config.producer_mailbox, 10).await.unwrap();
        assert_eq!(claimed.len(), 1, "one request is waiting");
        claimed.remove(0)
    };

    // Nothing read yet: the second claim's whole answer replaces the first's first part.
    let answer = asker.ask_parts(&request).await.unwrap();
    let message = claim().await;
    answer_with(&producer, &message, vec![change_reply(&["old-0"], 0, 0, 1)]).await;
    answer_with(
        &producer,
        &message,
        vec![
            change_reply(&["new-0"], 0, 2, 2),
            change_reply(&["new-1"], 1, 2, 2),
        ],
    )
    .await;
    let read: Vec<Vec<String>> = answer
        .all()
        .await
        .unwrap()
        .iter()
        .map(change_rows)
        .collect();
    assert_eq!(read, [vec!["new-0"], vec!["new-1"]]);

    // A part of the first claim read: the second claim's parts are not its sequel.
    let mut answer = asker.ask_parts(&request).await.unwrap();
    let message = claim().await;
    answer_with(&producer, &message, vec![change_reply(&["old-0"], 0, 0, 1)]).await;
    let first = answer.next().await.unwrap().expect("the first part");
    assert_eq!(change_rows(&first), ["old-0"]);
    answer_with(
        &producer,
        &message,
        vec![
            change_reply(&["new-0"], 0, 2, 2),
            change_reply(&["new-1"], 1, 2, 2),
        ],
    )
    .await;
    match answer.next().await {
        Err(ConsumerError::Cut { read: 1, .. }) => {}
        other => panic!("expected the answer cut off after one part, got {other:?}"),
    }

    // The silence counts from when the next part is asked for: a consumer that spent longer
    // than the request timeout on the last part (a long statement on the target) still reads
    // the next one, which waited on the bus meanwhile.
    let mut answer = asker.ask_parts(&request).await.unwrap();
    let message = claim().await;
    answer_with(&producer, &message, vec![change_reply(&["a"], 0, 0, 1)]).await;
    assert_eq!(change_rows(&answer.next().await.unwrap().unwrap()), ["a"]);
    answer_with(&producer, &message, vec![change_reply(&["b"], 1, 2, 1)]).await;
    // The work itself, not a synchronisation: the time is what is tested.
    tokio::time::sleep(config.request_timeout + std::time::Duration::from_millis(200)).await;
    assert_eq!(change_rows(&answer.next().await.unwrap().unwrap()), ["b"]);
    assert!(answer.next().await.unwrap().is_none(), "two parts in all");
}
