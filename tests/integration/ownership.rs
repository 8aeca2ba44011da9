//! The consumer owns what it made, and only that (issue 51, item 2): a table the test team made
//! in the target, a name in schema `maskbus`, an index of another table; each named by a
//! hostile producer (the real one's replies, changed on the way, sent as the producer's bus
//! role) or by the consumer's own `insert_rows` tool, and none of it written, emptied, altered,
//! dropped. And the tables the consumer did make are synced, altered and dropped as before.

use crate::support::*;
use maskbus_protocol::{Request, VERSION};
use maskbus_tools::Agent;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a hostile producer does to the real producer's replies to one request (as JSON):
/// returns the replies it sends instead.
type Tamper = Arc<dyn Fn(&Request, Vec<Value>) -> Vec<Value> + Send + Sync>;

/// A producer that answers the consumer's requests as the producer's bus role: the real
/// producer (in this process, on the same source, policy and bus) answers, and `tamper`
/// changes its replies before they are sent.
struct Hostile {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Hostile {
    /// Serves on the producer config's mailbox until dropped. A page it makes up without a
    /// snapshot is given the real one (asked of the real producer for `real_entity`).
    async fn start(producer_config: &str, real_entity: &'static str, tamper: Tamper) -> Self {
        let maskbus_config::AgentConfig::Producer(config) =
            maskbus_config::load(std::path::Path::new(producer_config)).unwrap()
        else {
            panic!("a producer config")
        };
        let producer = maskbus_producer::Producer::start(&config).await.unwrap();
        let task = tokio::spawn(async move {
            loop {
                let Ok(received) = producer
                    .mailbox()
                    .receive(producer.inbox(), 16, Duration::from_millis(200))
                    .await
                else {
                    return;
                };
                for message in received.messages {
                    let body: Value = serde_json::from_str(message.body.get()).unwrap();
                    let (Ok(request), Some(to)) = (
                        maskbus_protocol::parse_request(&body),
                        message.reply_to.clone(),
                    ) else {
                        let _ = producer.mailbox().ack(message.lease).await;
                        continue;
                    };
                    let real: Vec<Value> = producer
                        .answer(request.clone())
                        .await
                        .iter()
                        .map(|r| serde_json::to_value(r).unwrap())
                        .collect();
                    let mut replies = tamper(&request, real);
                    if let Request::Page { until: None, .. } = &request {
                        if replies
                            .iter()
                            .any(|r| r["type"] == "page" && r["until"].is_null())
                        {
                            let until = real_snapshot(&producer, real_entity).await;
                            for reply in &mut replies {
                                reply["until"] = until.clone();
                            }
                        }
                    }
                    let kind = replies[0]["type"].as_str().unwrap_or("error").to_string();
                    let bodies = replies
                        .iter()
                        .map(|r| {
                            (
                                message.correlation_id.clone(),
                                maskbus_mailbox::body_of(r).unwrap(),
                            )
                        })
                        .collect();
                    if producer
                        .mailbox()
                        .send_batch(&to, &kind, None, bodies)
                        .await
                        .is_err()
                    {
                        return;
                    }
                    let _ = producer.mailbox().ack(message.lease).await;
                }
            }
        });
        Self { task }
    }
}

/// The source's current snapshot, as the real producer names it in a page of `entity`.
async fn real_snapshot(producer: &maskbus_producer::Producer, entity: &str) -> Value {
    let replies = producer
        .answer(Request::Page {
            v: VERSION,
            entity: entity.to_string(),
            since: None,
            until: None,
            after: None,
            after_tag: None,
            through: None,
            through_tag: None,
            limit: 1,
            pages: None,
            subset: None,
        })
        .await;
    serde_json::to_value(&replies[0]).unwrap()["until"].clone()
}

/// A page of `entity` made up by the hostile producer, in the window `request` names.
fn page(request: &Request, entity: &str, key: &[&str], columns: &[&str], rows: Value) -> Value {
    let Request::Page { since, until, .. } = request else {
        panic!("a page request")
    };
    let last = rows.as_array().and_then(|r| r.last()).map(|row| {
        key.iter()
            .map(|k| row[columns.iter().position(|c| c == k).unwrap()].clone())
            .collect::<Vec<_>>()
    });
    json!({
        "type": "page", "v": VERSION, "entity": entity, "key": key, "columns": columns,
        "rows": rows, "next_after": last, "more": false, "since": since, "until": until,
        "part": 0, "parts": 1,
    })
}

/// Hashes of `entity` made up by the hostile producer: the source has no row.
fn no_hashes(entity: &str, key: &[&str], columns: &[&str]) -> Value {
    json!({
        "type": "hashes", "v": VERSION, "entity": entity, "key": key, "columns": columns,
        "buckets": [], "rows": [], "next_after": null, "more": false, "part": 0, "parts": 1,
    })
}

/// The entity a request names, if any.
fn entity_of(request: &Request) -> Option<&str> {
    match request {
        Request::Page { entity, .. }
        | Request::Ranges { entity, .. }
        | Request::Rows { entity, .. }
        | Request::Hashes { entity, .. } => Some(entity),
        _ => None,
    }
}

const SOURCE: &str = "
    CREATE TABLE public.items (id integer PRIMARY KEY, name text NOT NULL);
    INSERT INTO public.items SELECT i, 'item ' || i FROM generate_series(1, 20) i;
";

const POLICY: &str = "[items]\nid = \"keep\"\nname = \"keep\"\n";

/// A source with `SOURCE`, a target (made with `target_ddl`, empty of rows), a bus, and the
/// configs of a producer and a consumer (with `consumer_extra`) of `POLICY`.
async fn databases(
    test: &str,
    target_ddl: &str,
    consumer_extra: &str,
) -> (TestDatabases, ConfigFiles, String, String) {
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(SOURCE)
        .await
        .unwrap();
    if !target_ddl.is_empty() {
        connect(&dbs.url("dst"))
            .await
            .batch_execute(target_ddl)
            .await
            .unwrap();
    }
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new(test);
    let policy = files.write("policy.toml", POLICY);
    let (producer, consumer) = agent_configs_with(
        &files,
        &dbs,
        &format!("policy = \"{policy}\"\n"),
        &format!("request_timeout = \"20s\"\n{consumer_extra}"),
    );
    (dbs, files, producer, consumer)
}

/// Runs `maskbus` with `args` off the runtime's threads (the hostile producer answers on them).
async fn run(args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        maskbus_with_env(&args, &[("MASKBUS_LOG", "info")])
    })
    .await
    .unwrap()
}

/// The rows of `table`, as text, in key order.
async fn rows(url: &str, table: &str) -> Vec<String> {
    first_column(
        &connect(url).await,
        &format!("SELECT t::text FROM {table} t ORDER BY 1"),
    )
    .await
}

/// `maskbus.owned_tables` as `entity how`, in order.
async fn owned(url: &str) -> Vec<String> {
    first_column(
        &connect(url).await,
        "SELECT entity || ' ' || how FROM maskbus.owned_tables ORDER BY 1",
    )
    .await
}

const TEAM_TABLE: &str = "
    CREATE TABLE public.team_notes (id integer PRIMARY KEY, note text);
    CREATE INDEX team_notes_note ON public.team_notes (note);
    INSERT INTO public.team_notes VALUES (1, 'ours'), (2, 'ours too');
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_the_test_team_made_keeps_its_rows_through_a_run_a_repair_and_schema_changes() {
    let (dbs, _files, producer, consumer) = databases("own_team", "", "").await;
    // 0: as served; 1: the list names the team's table, its pages and hashes made up; 2: a
    // migration changes it; 3: a migration drops it.
    let phase = Arc::new(AtomicU32::new(0));
    let at = Arc::clone(&phase);
    let team = "public.team_notes";
    let columns = ["id", "note"];
    let _hostile = Hostile::start(
        &producer,
        "public.items",
        Arc::new(move |request, mut replies| {
            let phase = at.load(Ordering::SeqCst);
            if phase == 0 {
                return replies;
            }
            match request {
                Request::Entities { .. } => {
                    let reply = &mut replies[0];
                    if phase < 3 {
                        reply["entities"].as_array_mut().unwrap().push(json!(team));
                    }
                    let fingerprint = format!("{}-{phase}", reply["schema"].as_str().unwrap());
                    if phase >= 2 {
                        reply["schema"] = json!(fingerprint);
                    }
                }
                Request::Schema { .. } if phase == 2 => {
                    // The team's table, with a column more than the baseline says it has.
                    let column = |name: &str, sql_type: &str, not_null: bool| {
                        json!({"name": name, "sql_type": sql_type, "not_null": not_null,
                               "default": null, "identity": null, "generated": null,
                               "collation": null})
                    };
                    replies[0]["schema"]["tables"].as_array_mut().unwrap().push(json!({
                        "table": {"schema": "public", "name": "team_notes"},
                        "columns": [column("id", "integer", true), column("note", "text", false),
                                    column("added", "text", false)],
                        "partition_key": null, "partition_of": null,
                    }));
                }
                _ if entity_of(request) == Some(team) => {
                    return vec![match request {
                        Request::Hashes { .. } => no_hashes(team, &["id"], &columns),
                        _ => page(
                            request,
                            team,
                            &["id"],
                            &columns,
                            json!([["1", "overwritten by a page"], ["3", "planted by a page"]]),
                        ),
                    }];
                }
                _ => {}
            }
            replies
        }),
    )
    .await;
    let first = run(&["run", "--config", &consumer, "--once"])
        .await
        .success();
    assert_eq!(owned(&dbs.url("dst")).await, ["public.items created"]);

    // The test team adds a table of its own to the test database.
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(TEAM_TABLE).await.unwrap();
    let theirs = rows(&dbs.url("dst"), team).await;
    assert_eq!(theirs.len(), 2);

    // A run whose entity list names it: refused by name, the other table synced.
    phase.store(1, Ordering::SeqCst);
    connect(&dbs.url("src"))
        .await
        .batch_execute("UPDATE public.items SET name = 'renamed' WHERE id = 1")
        .await
        .unwrap();
    let refused = run(&["run", "--config", &consumer, "--once"]).await;
    assert_eq!(
        rows(&dbs.url("dst"), team).await,
        theirs,
        "no page wrote it"
    );
    assert_eq!(refused.code, 3, "{}\n{}", first.stderr, refused.stderr);
    assert!(
        refused.stderr.contains(
            "public.team_notes is not a table maskbus created or adopted in this target; it is never written (adopt it with --init-target"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(
        rows(&dbs.url("dst"), "public.items").await,
        rows(&dbs.url("src"), "public.items").await,
        "the other table is synced"
    );

    // verify --repair: not verified, not repaired (the made-up hashes say the source has no
    // row of it).
    let repaired = run(&["verify", "--config", &consumer, "--repair"]).await;
    assert_eq!(
        rows(&dbs.url("dst"), team).await,
        theirs,
        "no repair emptied it"
    );
    assert!(
        repaired
            .stdout
            .contains("not verified: public.team_notes (public.team_notes is not a table maskbus created or adopted"),
        "{}\n{}",
        repaired.stdout,
        repaired.stderr
    );

    // A baseline that names the team's table (as a page could write one before), then a
    // migration that changes it: nothing of it runs.
    dst.batch_execute(
        "UPDATE maskbus.schema_state SET served = jsonb_set(served, '{tables}', served -> 'tables' ||
             '[{\"table\": {\"schema\": \"public\", \"name\": \"team_notes\"}, \"partition_key\": null,
                \"partition_of\": null, \"columns\": [
                {\"name\": \"id\", \"sql_type\": \"integer\", \"not_null\": true, \"default\": null,
                 \"identity\": null, \"generated\": null, \"collation\": null},
                {\"name\": \"note\", \"sql_type\": \"text\", \"not_null\": false, \"default\": null,
                 \"identity\": null, \"generated\": null, \"collation\": null}]}]')",
    )
    .await
    .unwrap();
    phase.store(2, Ordering::SeqCst);
    let changed = run(&["run", "--config", &consumer, "--once"]).await;
    assert_eq!(rows(&dbs.url("dst"), team).await, theirs);
    assert_eq!(changed.code, 3, "{}", changed.stderr);
    assert!(
        changed
            .stderr
            .contains("public.team_notes is not a table maskbus created or adopted"),
        "{}",
        changed.stderr
    );
    let columns_of_team: Vec<String> = first_column(
        &dst,
        "SELECT column_name::text FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = 'team_notes' ORDER BY 1",
    )
    .await;
    assert_eq!(columns_of_team, ["id", "note"], "no column was added");

    // A migration that no longer serves it: the table is left as it is.
    phase.store(3, Ordering::SeqCst);
    let dropped = run(&["run", "--config", &consumer, "--once"]).await;
    assert_eq!(dropped.code, 0, "{}", dropped.stderr);
    assert_eq!(rows(&dbs.url("dst"), team).await, theirs, "never dropped");
    assert_eq!(owned(&dbs.url("dst")).await, ["public.items created"]);
}

/// A set of changes as a hostile producer sends it: `op` on `entity` (none: an idle reply),
/// the transaction ending at `lsn`, the answer standing at `through`.
fn changes(entity: &str, op: &str, rows: Value, lsn: Option<u64>, through: u64) -> Value {
    let at = |n: u64| {
        serde_json::to_value(maskbus_protocol::Position(maskbus_protocol::Lsn(n))).unwrap()
    };
    let (key, columns) = if op == "none" {
        (json!([]), json!([]))
    } else {
        (json!(["id"]), json!(["id", "note"]))
    };
    json!({
        "type": "changes", "v": VERSION, "entity": entity, "op": op, "key": key,
        "columns": columns, "rows": rows, "lsn": lsn.map(at), "commit": lsn.is_some(),
        "through": at(through), "started": false, "part": 0, "parts": 1,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_stream_naming_a_table_the_test_team_made_writes_nothing_into_it() {
    let (dbs, _files, producer, consumer) =
        databases("own_stream", "", "mode = \"stream\"\n").await;
    // The stream starts at 0x1000; in phase 1 the list names the team's table, and a
    // transaction ending at 0x2000 overwrites a row of it and deletes another.
    let phase = Arc::new(AtomicU32::new(0));
    let at = Arc::clone(&phase);
    let team = "public.team_notes";
    let _hostile = Hostile::start(
        &producer,
        "public.items",
        Arc::new(move |request, mut replies| {
            let phase = at.load(Ordering::SeqCst);
            match request {
                Request::Changes { after: None, .. } => {
                    let mut start = changes("", "none", json!([]), None, 0x1000);
                    start["started"] = json!(true);
                    vec![start]
                }
                Request::Changes {
                    after: Some(after), ..
                } => {
                    if phase == 1 && after.0 .0 == 0x1000 {
                        let mut upsert = changes(
                            team,
                            "upsert",
                            json!([["1", "overwritten by a change"]]),
                            None,
                            0x2000,
                        );
                        upsert["part"] = json!(0);
                        upsert["parts"] = json!(2);
                        let mut delete =
                            changes(team, "delete", json!([["2"]]), Some(0x2000), 0x2000);
                        delete["columns"] = json!(["id"]);
                        delete["part"] = json!(1);
                        delete["parts"] = json!(2);
                        vec![upsert, delete]
                    } else {
                        vec![changes("", "none", json!([]), None, after.0 .0)]
                    }
                }
                Request::Entities { .. } if phase == 1 => {
                    replies[0]["entities"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!(team));
                    replies
                }
                _ if entity_of(request) == Some(team) => vec![match request {
                    Request::Hashes { .. } => no_hashes(team, &["id"], &["id", "note"]),
                    _ => page(request, team, &["id"], &["id", "note"], json!([])),
                }],
                _ => replies,
            }
        }),
    )
    .await;
    run(&["run", "--config", &consumer, "--once"])
        .await
        .success();
    assert_eq!(
        rows(&dbs.url("dst"), "public.items").await,
        rows(&dbs.url("src"), "public.items").await
    );
    connect(&dbs.url("dst"))
        .await
        .batch_execute(TEAM_TABLE)
        .await
        .unwrap();
    let theirs = rows(&dbs.url("dst"), team).await;

    phase.store(1, Ordering::SeqCst);
    let refused = run(&["run", "--config", &consumer, "--once"]).await;
    assert_eq!(
        rows(&dbs.url("dst"), team).await,
        theirs,
        "no change wrote it\n{}",
        refused.stderr
    );
    assert_eq!(refused.code, 3, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("public.team_notes is not a table maskbus created or adopted"),
        "{}",
        refused.stderr
    );
    let applied: String = connect(&dbs.url("dst"))
        .await
        .query_one("SELECT applied_lsn FROM maskbus.stream_state", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        applied, "0/2000",
        "the stream went past the refused changes"
    );
}

/// The consumer's bookkeeping as a page or a tool could change it: the baseline schema, and
/// each watermark (whether synced, and the rows).
async fn bookkeeping(url: &str) -> Vec<String> {
    first_column::<String>(
        &connect(url).await,
        "SELECT fingerprint || ' ' || (served -> 'tables')::text FROM maskbus.schema_state
         UNION ALL
         SELECT format('%s synced=%s rows=%s', entity, synced_until IS NOT NULL, rows_synced)
           FROM maskbus.sync_state ORDER BY 1",
    )
    .await
}

/// Names in schema maskbus, as a hostile producer may list them (the case changed too).
const BOOKKEEPING: [&str; 3] = [
    "maskbus.schema_state",
    "maskbus.sync_state",
    "MASKBUS.sync_state",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_in_schema_maskbus_served_with_pages_are_refused_and_the_bookkeeping_stays() {
    let (dbs, _files, producer, consumer) = databases("own_reserved", "", "").await;
    let phase = Arc::new(AtomicU32::new(0));
    let at = Arc::clone(&phase);
    let _hostile = Hostile::start(
        &producer,
        "public.items",
        Arc::new(move |request, mut replies| {
            if at.load(Ordering::SeqCst) == 0 {
                return replies;
            }
            if let Request::Entities { .. } = request {
                let entities = replies[0]["entities"].as_array_mut().unwrap();
                entities.extend(BOOKKEEPING.iter().map(|e| json!(e)));
                return replies;
            }
            match entity_of(request) {
                Some("maskbus.schema_state") => vec![page(
                    request,
                    "maskbus.schema_state",
                    &["only_row"],
                    &["only_row", "fingerprint", "served", "left_out"],
                    json!([["true", "forged", "{\"tables\": []}", "{}"]]),
                )],
                Some(e @ ("maskbus.sync_state" | "MASKBUS.sync_state")) => vec![page(
                    request,
                    e,
                    &["entity"],
                    &[
                        "entity",
                        "synced_until",
                        "pass_until",
                        "after_key",
                        "rows_synced",
                    ],
                    json!([["public.items", null, null, null, "0"]]),
                )],
                _ => replies,
            }
        }),
    )
    .await;
    run(&["run", "--config", &consumer, "--once"])
        .await
        .success();
    let before = bookkeeping(&dbs.url("dst")).await;
    assert_eq!(before.len(), 2, "{before:?}");

    phase.store(1, Ordering::SeqCst);
    let refused = run(&["run", "--config", &consumer, "--once"]).await;
    assert_eq!(
        bookkeeping(&dbs.url("dst")).await,
        before,
        "no page wrote the bookkeeping"
    );
    assert_eq!(refused.code, 3, "{}", refused.stderr);
    for name in BOOKKEEPING {
        assert!(
            refused.stderr.contains(&format!(
                "{name} is in schema {}, maskbus's own bookkeeping: maskbus never writes it",
                name.split('.').next().unwrap()
            )),
            "{name}: {}",
            refused.stderr
        );
    }
    assert_eq!(
        rows(&dbs.url("dst"), "public.items").await,
        rows(&dbs.url("src"), "public.items").await,
        "the served table is synced"
    );
}

#[tokio::test]
async fn the_insert_rows_tool_writes_only_tables_the_consumer_owns_and_never_schema_maskbus() {
    let (dbs, _files, producer, consumer) = databases("own_tool", "", "").await;
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    connect(&dbs.url("dst"))
        .await
        .batch_execute(TEAM_TABLE)
        .await
        .unwrap();
    let theirs = rows(&dbs.url("dst"), "public.team_notes").await;
    let before = bookkeeping(&dbs.url("dst")).await;
    let config = maskbus_config::load(std::path::Path::new(&consumer)).unwrap();
    let agent = Agent::start(&config).await.unwrap();
    for entity in BOOKKEEPING {
        let refused = agent
            .call(
                "insert_rows",
                json!({"entity": entity,
                       "columns": ["entity", "synced_until", "pass_until", "after_key", "rows_synced"],
                       "rows": [["public.items", null, null, null, "0"]]}),
            )
            .await
            .map(|written| written.to_string())
            .unwrap_or_else(|e| e.to_string());
        assert_eq!(
            bookkeeping(&dbs.url("dst")).await,
            before,
            "the tool wrote {entity}"
        );
        assert!(
            refused.contains("maskbus's own bookkeeping: maskbus never writes it"),
            "{entity}: {refused}"
        );
        let read = agent
            .call("query_local", json!({"entity": entity}))
            .await
            .map(|rows| rows.to_string())
            .unwrap_or_else(|e| e.to_string());
        assert!(read.contains("maskbus never writes it"), "{entity}: {read}");
    }
    // A table the test team made after the first run: not the tool's either.
    let refused = agent
        .call(
            "insert_rows",
            json!({"entity": "team_notes", "columns": ["id", "note"], "rows": [["7", "x"]]}),
        )
        .await
        .map(|written| written.to_string())
        .unwrap_or_else(|e| e.to_string());
    assert_eq!(rows(&dbs.url("dst"), "public.team_notes").await, theirs);
    assert!(
        refused.contains("public.team_notes is not a table maskbus created or adopted"),
        "{refused}"
    );
    // A table the consumer made takes rows from the tool as before.
    let written = agent
        .call(
            "insert_rows",
            json!({"entity": "items", "columns": ["id", "name"], "rows": [["1000", "by hand"]]}),
        )
        .await
        .unwrap();
    assert_eq!(written["written"], 1);
    let by_hand: i64 = connect(&dbs.url("dst"))
        .await
        .query_one("SELECT count(*) FROM public.items WHERE id = 1000", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(by_hand, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_index_drop_drops_only_an_index_of_the_owned_table_it_names() {
    // A target made by hand (adopted on the first run), whose served schema names an index of
    // items it lacks; the test team then makes a table of its own with an index of that name.
    let hand_made = "CREATE TABLE public.items (id integer PRIMARY KEY, name text NOT NULL);";
    let (dbs, _files, producer, consumer) = databases("own_index", hand_made, "").await;
    let phase = Arc::new(AtomicU32::new(0));
    let at = Arc::clone(&phase);
    let _hostile = Hostile::start(
        &producer,
        "public.items",
        Arc::new(move |request, mut replies| {
            let phase = at.load(Ordering::SeqCst);
            match request {
                // 0: the served schema has an index of items named as the team's will be.
                Request::Schema { .. } if phase == 0 => {
                    replies[0]["schema"]["indexes"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!({
                            "table": {"schema": "public", "name": "items"},
                            "name": "team_notes_note",
                            "definition": "CREATE INDEX team_notes_note ON public.items USING btree (name)",
                        }));
                }
                // 1: a migration drops it.
                Request::Entities { .. } if phase == 1 => {
                    let fingerprint = format!("{}-1", replies[0]["schema"].as_str().unwrap());
                    replies[0]["schema"] = json!(fingerprint);
                }
                _ => {}
            }
            replies
        }),
    )
    .await;
    let first = run(&["run", "--config", &consumer, "--once"])
        .await
        .success();
    assert_eq!(
        owned(&dbs.url("dst")).await,
        ["public.items adopted"],
        "{}",
        first.stderr
    );
    connect(&dbs.url("dst"))
        .await
        .batch_execute(TEAM_TABLE)
        .await
        .unwrap();
    let team_index = || async {
        first_column::<String>(
            &connect(&dbs.url("dst")).await,
            "SELECT indrelid::regclass::text FROM pg_index WHERE indexrelid = to_regclass('public.team_notes_note')",
        )
        .await
    };
    assert_eq!(team_index().await, ["team_notes"]);

    phase.store(1, Ordering::SeqCst);
    let followed = run(&["run", "--config", &consumer, "--once"])
        .await
        .success();
    assert_eq!(
        team_index().await,
        ["team_notes"],
        "the team's index is not dropped\n{}",
        followed.stderr
    );
    assert_eq!(
        rows(&dbs.url("dst"), "public.items").await,
        rows(&dbs.url("src"), "public.items").await
    );
}

#[tokio::test]
async fn the_tables_the_consumer_made_are_synced_altered_and_dropped_as_before() {
    let (dbs, files, producer, consumer) = databases("own_happy", "", "").await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(
        "CREATE TABLE public.parts (id integer PRIMARY KEY, item_id integer REFERENCES public.items,
                                    label text);
         CREATE INDEX parts_label ON public.parts (label);
         INSERT INTO public.parts SELECT i, i, 'part ' || i FROM generate_series(1, 20) i;",
    )
    .await
    .unwrap();
    let policy = |extra: &str| {
        files.write(
            "policy.toml",
            &format!(
                "{POLICY}[parts]\nid = \"keep\"\nitem_id = \"keep\"\nlabel = \"keep\"\n{extra}"
            ),
        );
        Background::spawn(&["run", "--config", &producer])
    };
    let equal = |tables: &'static [&'static str]| {
        let (src, dst) = (dbs.url("src"), dbs.url("dst"));
        async move {
            for table in tables {
                assert_eq!(rows(&dst, table).await, rows(&src, table).await, "{table}");
            }
            assert_eq!(schema_objects(&dst).await, schema_objects(&src).await);
        }
    };
    let mut running = policy("");
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    equal(&["public.items", "public.parts"]).await;
    assert_eq!(
        owned(&dbs.url("dst")).await,
        ["public.items created", "public.parts created"]
    );

    // Altered: a column, an index dropped, a table added.
    src.batch_execute(
        "ALTER TABLE public.parts ADD COLUMN colour text DEFAULT 'grey';
         DROP INDEX public.parts_label;
         CREATE TABLE public.boxes (id integer PRIMARY KEY, part_id integer REFERENCES public.parts);
         INSERT INTO public.boxes SELECT i, i FROM generate_series(1, 5) i;",
    )
    .await
    .unwrap();
    drop(running);
    running = policy("colour = \"keep\"\n[boxes]\nid = \"keep\"\npart_id = \"keep\"\n");
    let run = maskbus(&["run", "--config", &consumer, "--once"]).success();
    equal(&["public.items", "public.parts", "public.boxes"]).await;
    assert_eq!(
        owned(&dbs.url("dst")).await,
        [
            "public.boxes created",
            "public.items created",
            "public.parts created"
        ],
        "{}",
        run.stderr
    );

    // Dropped: the table, and what maskbus owns with it.
    src.batch_execute("DROP TABLE public.boxes").await.unwrap();
    drop(running);
    let _running = policy("colour = \"keep\"\n");
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    equal(&["public.items", "public.parts"]).await;
    let gone: bool = connect(&dbs.url("dst"))
        .await
        .query_one("SELECT to_regclass('public.boxes') IS NULL", &[])
        .await
        .unwrap()
        .get(0);
    assert!(gone);
    assert_eq!(
        owned(&dbs.url("dst")).await,
        ["public.items created", "public.parts created"]
    );
    maskbus(&["verify", "--config", &consumer]).success();
}
