//! The change stream's footing: a replication slot on a real source keeps every insert, update,
//! delete and truncate, in commit order, until it is advanced, and its pgoutput messages decode.

use crate::support::*;
use maskbus_pg::pgoutput::{Cell, Message, OldRow};
use maskbus_pg::slot::{slots, ChangeSlot, SlotChange};
use maskbus_pg::testing::TestDatabases;
use maskbus_pg::{Database, TableRef};

/// The slot's messages with their positions, as (kind, relation name or cells) lines.
fn story(changes: &[SlotChange], relation_names: &mut Vec<(u32, String)>) -> Vec<String> {
    let name = |names: &Vec<(u32, String)>, oid: u32| {
        names
            .iter()
            .find(|(o, _)| *o == oid)
            .map_or_else(|| format!("?{oid}"), |(_, n)| n.clone())
    };
    let cells = |cells: &[Cell]| {
        cells
            .iter()
            .map(|c| match c {
                Cell::Null => "null".to_string(),
                Cell::Unchanged => "unchanged".to_string(),
                Cell::Text(t) => t.clone(),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    changes
        .iter()
        .map(|change| match &change.message {
            Message::Begin { .. } => "begin".into(),
            Message::Commit { .. } => "commit".into(),
            Message::Relation {
                oid,
                schema,
                name: n,
                columns,
                ..
            } => {
                relation_names.push((*oid, format!("{schema}.{n}")));
                let keys: Vec<&str> = columns
                    .iter()
                    .filter(|c| c.key)
                    .map(|c| c.name.as_str())
                    .collect();
                format!("relation {schema}.{n} key {}", keys.join(","))
            }
            Message::Insert { relation, new } => {
                format!("insert {} {}", name(relation_names, *relation), cells(new))
            }
            Message::Update { relation, old, new } => format!(
                "update {} {}{}",
                name(relation_names, *relation),
                match old {
                    Some(OldRow::Key(k)) => format!("key {} -> ", cells(k)),
                    Some(OldRow::Full(f)) => format!("old {} -> ", cells(f)),
                    None => String::new(),
                },
                cells(new)
            ),
            Message::Delete { relation, old } => format!(
                "delete {} {}",
                name(relation_names, *relation),
                match old {
                    OldRow::Key(k) | OldRow::Full(k) => cells(k),
                }
            ),
            Message::Truncate { .. } => "truncate".into(),
            other => format!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn a_slot_keeps_every_change_in_commit_order_until_it_is_advanced() {
    let dbs = TestDatabases::create("changes", &["src"]).await;
    let source = Database::parse("source", &dbs.url("src")).unwrap();
    let client = connect(&dbs.url("src")).await;
    client
        .batch_execute(
            // Decoding reads the WAL flushed to disk; the scratch cluster commits without
            // waiting for that, so these writes wait, or the slot would see them a moment later.
            "SET synchronous_commit = on;
             CREATE TABLE people (id int PRIMARY KEY, ssn text, note text);
             CREATE TABLE other (id int PRIMARY KEY);
             INSERT INTO people VALUES (1, '224-30-8280', 'before the slot');",
        )
        .await
        .unwrap();
    // Unique per run: slots are the cluster's, not the database's.
    let slot = ChangeSlot::new(&format!("maskbus_test_changes_{}", std::process::id())).unwrap();
    let start = slot
        .create(&source, &client, &[TableRef::new("public", "people")])
        .await
        .unwrap();
    assert!(start.0 > 0);

    // One transaction per statement, and one of two statements.
    for sql in [
        "INSERT INTO people VALUES (2, NULL, 'new')",
        "INSERT INTO other VALUES (9)",
        "BEGIN; UPDATE people SET note = 'changed' WHERE id = 1; UPDATE people SET id = 3 WHERE id = 2; COMMIT",
        "DELETE FROM people WHERE id = 1",
    ] {
        client.batch_execute(sql).await.unwrap();
    }
    // Every step's result is kept, the slot dropped, and only then checked: a slot left
    // behind would hold WAL and keep the test database from being dropped.
    let steps = async {
        let first = slot.peek(&source, &client, 1000).await?;
        let again = slot.peek(&source, &client, 1000).await?;
        let listed = slots(&source, &client, "maskbus_test_").await?;
        // Advance past the first transaction only: the rest is read again.
        let first_commit = first
            .iter()
            .find(|c| matches!(c.message, Message::Commit { .. }))
            .map_or(start, |c| c.lsn);
        slot.advance(&source, &client, first_commit).await?;
        let after_advance = slot.peek(&source, &client, 1000).await?;
        Ok::<_, maskbus_pg::PgError>((first, again, listed, after_advance))
    }
    .await;
    slot.drop(&source, &client).await.unwrap();
    let after_drop = slots(&source, &client, slot.name()).await.unwrap();
    let (first, again, listed, after_advance) = steps.unwrap();

    let mut names = Vec::new();
    assert_eq!(
        story(&first, &mut names),
        [
            "begin",
            "relation public.people key id",
            "insert public.people 2,null,new",
            "commit",
            "begin",
            "update public.people 1,224-30-8280,changed",
            "update public.people key 2,null,null -> 3,null,new",
            "commit",
            "begin",
            "delete public.people 1,null,null",
            "commit",
        ],
        "the row from before the slot and the table outside the publication are not in it"
    );
    assert_eq!(first, again, "peeking leaves the slot where it is");
    assert!(listed
        .iter()
        .any(|s| s.name == slot.name() && s.database == dbs.names()[0]));
    let mut names = Vec::new();
    let rest = story(&after_advance, &mut names);
    assert_eq!(rest.first().map(String::as_str), Some("begin"));
    assert!(
        !rest
            .iter()
            .any(|line| line.contains("insert public.people 2")),
        "the advanced transaction is not read again: {rest:?}"
    );
    assert!(rest.iter().any(|line| line.starts_with("delete")));
    assert!(after_drop.is_empty());
    assert!(first.windows(2).all(|w| w[0].lsn <= w[1].lsn));
}

/// As a role that owns its tables but is no superuser: without REPLICATION the slot is refused
/// by name and nothing is left behind (no publication); with it, the role reads its changes.
#[tokio::test]
async fn a_slot_needs_replication_and_nothing_more_and_a_refusal_leaves_nothing() {
    use maskbus_pg::testing::TestRoles;
    let roles = TestRoles::create("changes_role", &["reader"]).await;
    let dbs = TestDatabases::create("changes_role", &["src"]).await;
    let admin = connect(&dbs.url("src")).await;
    let reader = roles.name("reader");
    admin
        .batch_execute(&format!(
            "CREATE TABLE people (id int PRIMARY KEY, note text);
             ALTER TABLE people OWNER TO {reader};
             GRANT CREATE ON DATABASE \"{}\" TO {reader};",
            dbs.names()[0]
        ))
        .await
        .unwrap();
    let url = roles.url_as(&dbs.url("src"), "reader");
    let source = Database::parse("source", &url).unwrap();
    let client = connect(&url).await;
    client
        .batch_execute("SET synchronous_commit = on")
        .await
        .unwrap();
    let slot = ChangeSlot::new(&format!("maskbus_test_role_{}", std::process::id())).unwrap();
    let tables = [TableRef::new("public", "people")];

    let refused = slot
        .create(&source, &client, &tables)
        .await
        .unwrap_err()
        .to_string();
    let publications: i64 = admin
        .query_one("SELECT count(*) FROM pg_publication", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        refused.contains(slot.name()) && refused.contains("REPLICATION"),
        "{refused}"
    );
    assert!(
        !refused.contains("127.0.0.1"),
        "no endpoint in the message: {refused}"
    );
    assert_eq!(
        publications, 0,
        "the refused slot left no publication behind"
    );

    admin
        .batch_execute(&format!("ALTER ROLE {reader} REPLICATION"))
        .await
        .unwrap();
    let steps = async {
        slot.create(&source, &client, &tables).await?;
        client
            .batch_execute("INSERT INTO people VALUES (1, 'hello')")
            .await
            .map_err(|e| source.query_error("inserting", &e))?;
        slot.peek(&source, &client, 100).await
    }
    .await;
    slot.drop(&source, &admin).await.unwrap();
    let changes = steps.unwrap();
    assert!(changes.iter().any(|c| matches!(
        &c.message,
        Message::Insert { new, .. } if new == &[Cell::Text("1".into()), Cell::Text("hello".into())]
    )));
}
