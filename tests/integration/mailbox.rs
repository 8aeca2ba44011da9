//! The bus against a real Postgres: SKIP LOCKED claims, leases, retries, dead letters, long polls
//! and audit-aware purging. No test sleeps to synchronise: waits are on conditions.

use crate::support::{connect, maskbus, TestDatabases};
use maskbus_mailbox::{Mailbox, NackOutcome, Outgoing, Settings, Wake};
use maskbus_pg::Database;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

async fn bus(test: &str) -> (TestDatabases, Database) {
    let dbs = TestDatabases::create(test, &["bus"]).await;
    let target = Database::parse("bus", &dbs.url("bus")).unwrap();
    maskbus_mailbox::install(&target).await.unwrap();
    (dbs, target)
}

fn note(to: &str, n: usize) -> Outgoing {
    Outgoing {
        to: to.into(),
        kind: "note".into(),
        correlation_id: Some(format!("c{n}")),
        reply_to: None,
        body: maskbus_mailbox::body_of(&json!({ "n": n })).unwrap(),
    }
}

#[tokio::test]
async fn a_claim_skips_rows_another_session_has_locked() {
    let (_dbs, target) = bus("mb_skip").await;
    let mailbox = Mailbox::connect(target.clone(), Settings::default())
        .await
        .unwrap();
    let first = mailbox.send(note("inbox", 1)).await.unwrap();
    let second = mailbox.send(note("inbox", 2)).await.unwrap();

    // Another session locks the first message and keeps its transaction open.
    let mut other = target.connect().await.unwrap();
    let tx = other.transaction().await.unwrap();
    let locked: i64 = tx
        .query_one(
            "SELECT id FROM mq.messages ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(locked, first);

    // A claim neither waits for it nor takes it.
    let claimed = mailbox.claim("inbox", 10).await.unwrap();
    assert_eq!(claimed.iter().map(|m| m.id).collect::<Vec<_>>(), [second]);
    tx.rollback().await.unwrap();
    let claimed = mailbox.claim("inbox", 10).await.unwrap();
    assert_eq!(claimed.iter().map(|m| m.id).collect::<Vec<_>>(), [first]);
}

#[tokio::test]
async fn four_competing_receivers_handle_each_of_4000_messages_exactly_once() {
    let (_dbs, target) = bus("mb_compete").await;
    let sender = Mailbox::connect(target.clone(), Settings::default())
        .await
        .unwrap();
    let mut sent = Vec::new();
    for chunk in 0..40 {
        let batch = (0..100)
            .map(|i| {
                (
                    Some(format!("c{}", chunk * 100 + i)),
                    maskbus_mailbox::body_of(&json!({ "n": chunk * 100 + i })).unwrap(),
                )
            })
            .collect();
        sent.extend(sender.send_batch("work", "job", None, batch).await.unwrap());
    }
    assert_eq!(sent.len(), 4000);

    let mut receivers = Vec::new();
    for _ in 0..4 {
        let target = target.clone();
        receivers.push(tokio::spawn(async move {
            let mailbox = Mailbox::connect(target, Settings::default()).await.unwrap();
            let mut handled = Vec::new();
            loop {
                let received = mailbox.claim("work", 25).await.unwrap();
                if received.is_empty() {
                    return handled;
                }
                let leases: Vec<_> = received.iter().map(|m| m.lease).collect();
                let acked = mailbox.ack_batch(&leases).await.unwrap();
                assert_eq!(acked.len(), leases.len(), "every fresh lease is accepted");
                handled.extend(received.iter().map(|m| m.id));
            }
        }));
    }
    let mut times_handled: BTreeMap<i64, usize> = BTreeMap::new();
    for receiver in receivers {
        for id in receiver.await.unwrap() {
            *times_handled.entry(id).or_default() += 1;
        }
    }
    assert_eq!(times_handled.len(), 4000, "no message lost");
    assert!(
        times_handled.values().all(|n| *n == 1),
        "no message handled twice"
    );
    let stats = sender.stats().await.unwrap();
    assert_eq!(
        (stats[0].pending, stats[0].leased, stats[0].archived),
        (0, 0, 4000)
    );
}

#[tokio::test]
async fn a_receiver_that_dies_without_ack_has_its_message_redelivered_after_the_lease() {
    let (_dbs, target) = bus("mb_lease").await;
    let settings = Settings {
        lease: Duration::from_millis(300),
        poll_interval: Duration::from_millis(50),
        ..Settings::default()
    };
    let id = {
        // This receiver claims, then "dies": its pool and connections go away without an ack.
        let doomed = Mailbox::connect(target.clone(), settings.clone())
            .await
            .unwrap();
        doomed.send(note("inbox", 1)).await.unwrap();
        let claimed = doomed.claim("inbox", 1).await.unwrap();
        assert_eq!(claimed.len(), 1);
        claimed[0].lease
    };
    let survivor = Mailbox::connect(target, settings).await.unwrap();
    // Waits on the condition "a message is claimable", with a generous bound.
    let received = survivor
        .receive("inbox", 1, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(received.messages.len(), 1, "the message came back");
    let message = &received.messages[0];
    assert_eq!(message.id, id.message_id);
    assert_eq!(message.attempts, 2);
    // The dead receiver's lease is stale now: its ack is refused, the survivor's is taken.
    assert!(matches!(
        survivor.ack(id).await,
        Err(maskbus_mailbox::MailboxError::StaleLease { .. })
    ));
    survivor.ack(message.lease).await.unwrap();
}

#[tokio::test]
async fn a_poison_message_is_dead_lettered_after_n_attempts_and_can_be_redriven() {
    let (dbs, target) = bus("mb_poison").await;
    let settings = Settings {
        max_attempts: 3,
        backoff_base: Duration::ZERO,
        ..Settings::default()
    };
    let mailbox = Mailbox::connect(target, settings).await.unwrap();
    let id = mailbox.send(note("inbox", 1)).await.unwrap();
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        let claimed = mailbox.claim("inbox", 1).await.unwrap();
        assert_eq!(claimed.len(), 1);
        outcomes.push(
            mailbox
                .nack(&claimed[0], "handler failed: boom")
                .await
                .unwrap(),
        );
    }
    assert_eq!(
        outcomes,
        [
            NackOutcome::Retry {
                after: Duration::ZERO
            },
            NackOutcome::Retry {
                after: Duration::ZERO
            },
            NackOutcome::DeadLettered
        ]
    );
    assert!(
        mailbox.claim("inbox", 1).await.unwrap().is_empty(),
        "not retried forever"
    );
    let db = connect(&dbs.url("bus")).await;
    let row = db
        .query_one("SELECT id, attempts, error FROM mq.dead_letters", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), id);
    assert_eq!(row.get::<_, i32>(1), 3);
    assert!(row.get::<_, String>(2).contains("boom"));

    let run = maskbus(&[
        "bus",
        "redrive",
        "--bus",
        &dbs.url("bus"),
        "--mailbox",
        "inbox",
    ])
    .success();
    assert!(
        run.stdout.contains("moved 1 dead letters"),
        "{}",
        run.stdout
    );
    let again = mailbox.claim("inbox", 1).await.unwrap();
    assert_eq!((again[0].id, again[0].attempts), (id, 1));
}

#[tokio::test]
async fn an_unparseable_message_is_dead_lettered_with_its_reason() {
    let (dbs, target) = bus("mb_unparse").await;
    let mailbox = Mailbox::connect(target, Settings::default()).await.unwrap();
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &dbs.url("bus"),
        "--to",
        "inbox",
        "--body",
        "[1, 2]",
    ])
    .success();
    let message = mailbox.claim("inbox", 1).await.unwrap().remove(0);
    mailbox
        .dead_letter(message.lease, "not a request: expected an object")
        .await
        .unwrap();
    let stats = mailbox.stats().await.unwrap();
    assert_eq!((stats[0].pending, stats[0].dead), (0, 1));
}

#[tokio::test]
async fn a_long_poll_wakes_on_send() {
    let (_dbs, target) = bus("mb_wake").await;
    // Polling so rarely that only a notification can wake the receiver within the test.
    let settings = Settings {
        poll_interval: Duration::from_secs(3600),
        ..Settings::default()
    };
    let receiver = std::sync::Arc::new(
        Mailbox::connect(target.clone(), settings.clone())
            .await
            .unwrap(),
    );
    let sender = Mailbox::connect(target, settings).await.unwrap();
    let mut parked = receiver.parked();
    let waiting = {
        let receiver = receiver.clone();
        tokio::spawn(async move {
            receiver
                .receive("inbox", 10, Duration::from_secs(3600))
                .await
        })
    };
    parked.wait_for(|n| *n > 0).await.unwrap();
    sender.send(note("inbox", 1)).await.unwrap();
    let received = waiting.await.unwrap().unwrap();
    assert_eq!(received.messages.len(), 1);
    assert_eq!(received.wake, Wake::Notification);
}

#[tokio::test]
async fn purge_deletes_only_what_the_audit_has_scanned() {
    let (dbs, target) = bus("mb_purge").await;
    let mailbox = Mailbox::connect(target, Settings::default()).await.unwrap();
    for n in 0..3 {
        mailbox.send(note("inbox", n)).await.unwrap();
    }
    for message in mailbox.claim("inbox", 3).await.unwrap() {
        mailbox.ack(message.lease).await.unwrap();
    }
    let report = mailbox.purge(Duration::ZERO, false).await.unwrap();
    assert_eq!((report.deleted_archived, report.kept_unaudited), (0, 3));

    let horizon = mailbox.audit_horizon().await.unwrap();
    mailbox.record_audit(horizon).await.unwrap();
    let late = mailbox.send(note("inbox", 9)).await.unwrap();
    assert!(late > horizon);
    let late_message = mailbox.claim("inbox", 1).await.unwrap().remove(0);
    mailbox.ack(late_message.lease).await.unwrap();

    let run = maskbus(&[
        "bus",
        "purge",
        "--bus",
        &dbs.url("bus"),
        "--older-than",
        "0s",
    ])
    .success();
    assert!(run.stdout.contains("purged 3 archived"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("kept back 1 old messages: no wire audit has scanned them yet"),
        "{}",
        run.stdout
    );
    let stats = mailbox.stats().await.unwrap();
    assert_eq!(stats[0].archived, 1, "the unaudited message stays");
}

#[tokio::test]
async fn bus_send_refuses_a_body_that_is_not_json() {
    let (dbs, _target) = bus("mb_badjson").await;
    let run = maskbus(&[
        "bus",
        "send",
        "--bus",
        &dbs.url("bus"),
        "--to",
        "inbox",
        "--body",
        "{not json",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not valid JSON"), "{}", run.stderr);
    let stats = maskbus(&["bus", "stats", "--bus", &dbs.url("bus")]).success();
    assert!(stats.stdout.contains("no messages"), "{}", stats.stdout);
}

/// Every object of schema mq as text: functions with their definitions and rights, tables and
/// views with their columns, defaults, identities, compression, constraints and indexes, the
/// schema's and the database's rights, and the limits' row.
async fn bus_catalog(client: &maskbus_pg::tokio_postgres::Client) -> Vec<String> {
    client
        .query(
            "SELECT 'function ' || p.oid::regprocedure || E'\\n' || pg_get_functiondef(p.oid)
                    || E'\\nacl ' || coalesce(array_to_string(p.proacl, ','), '')
               FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'mq'
             UNION ALL
             SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' acl ' || coalesce(array_to_string(c.relacl, ','), '')
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'mq'
             UNION ALL
             SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                    || ' notnull ' || a.attnotnull || ' identity ' || a.attidentity::text
                    || ' compression ' || a.attcompression::text || ' default ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
               FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              WHERE n.nspname = 'mq' AND a.attnum > 0 AND NOT a.attisdropped
             UNION ALL
             SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(k.oid)
               FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = 'mq'
             UNION ALL
             SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'mq'
             UNION ALL
             SELECT 'view ' || viewname || ' ' || definition FROM pg_views WHERE schemaname = 'mq'
             UNION ALL
             SELECT 'schema acl ' || coalesce(array_to_string(nspacl, ','), '') FROM pg_namespace WHERE nspname = 'mq'
             UNION ALL
             SELECT 'database acl ' || coalesce(array_to_string(datacl, ','), '') FROM pg_database WHERE datname = current_database()
             UNION ALL
             SELECT 'limits ' || l::text FROM mq.limits l
             UNION ALL
             SELECT 'audit_state rows ' || count(*) FROM mq.audit_state
             ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn a_fresh_bus_equals_one_upgraded_step_by_step() {
    let dbs = TestDatabases::create("mq_fresh", &["fresh", "stepped"]).await;
    let fresh = Database::parse("bus", &dbs.url("fresh")).unwrap();
    let stepped = Database::parse("bus", &dbs.url("stepped")).unwrap();
    assert_eq!(
        maskbus_mailbox::install(&fresh).await.unwrap(),
        vec!["mq.sql"]
    );
    // An old bus: each step in turn, as releases applied them.
    for step in maskbus_mailbox::MIGRATIONS {
        maskbus_pg::apply_migrations(&stepped, std::slice::from_ref(step))
            .await
            .unwrap();
    }
    let (a, b) = (
        bus_catalog(&connect(&dbs.url("fresh")).await).await,
        bus_catalog(&connect(&dbs.url("stepped")).await).await,
    );
    assert!(
        a.len() > 60,
        "the catalog walk sees the bus ({} objects)",
        a.len()
    );
    let only_fresh: Vec<_> = a.iter().filter(|x| !b.contains(x)).collect();
    let only_stepped: Vec<_> = b.iter().filter(|x| !a.contains(x)).collect();
    assert!(
        only_fresh.is_empty() && only_stepped.is_empty(),
        "mq.sql and the steps differ:\nonly in mq.sql: {only_fresh:#?}\nonly stepped: {only_stepped:#?}"
    );
    // Both are current: neither has a step left to apply.
    assert!(maskbus_mailbox::install(&fresh).await.unwrap().is_empty());
    assert!(maskbus_mailbox::install(&stepped).await.unwrap().is_empty());
}
