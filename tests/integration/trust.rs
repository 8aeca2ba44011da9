//! The test side trusts nothing it reads (issue 51), tried as the attacker would: a consumer
//! whose target role is a superuser (or reaches the server's files) is refused by name unless
//! its own config allows it; a served extension is created only from the consumer's own
//! allow-list, whatever a producer (or whoever sends as it) serves; a database holding rows
//! the consumer's role cannot read is not adopted as a target; and a served schema whose
//! partition bounds, checks, defaults, generated columns, index expressions and predicates call
//! functions with side effects (large objects, `query_to_xml`, `setval`, `pg_notify`,
//! `set_config`, `pg_sleep`, `dblink_exec`, a subquery on `pg_authid`) runs none of them, as a
//! least-privilege target role or as the cluster's superuser, and the legitimate objects of the
//! same reply are made.

use crate::support::*;
use maskbus_mailbox::{body_of, Mailbox, Outgoing, Settings};
use maskbus_protocol::{ErrorCode, ErrorReply, Request, VERSION};
use serde_json::{json, Value};
use std::time::Duration;

/// The name the cluster gave a test database (`label`).
fn db_name(dbs: &TestDatabases, label: &str) -> String {
    let suffix = format!("_{label}");
    dbs.names()
        .iter()
        .find(|n| n.ends_with(&suffix))
        .unwrap()
        .clone()
}

/// A consumer config of the caller's own: no `allow_superuser_target` unless `extra` says so.
fn consumer_config(
    files: &ConfigFiles,
    name: &str,
    bus: &str,
    target: &str,
    extra: &str,
) -> String {
    files.write(
        name,
        // The hostile producers here serve schemas, entity lists and pages, not hashes: a pass's
        // delete check would fail every table by it (`tests/integration/deletes.rs` covers it).
        &format!("role = \"consumer\"\nbus_url = \"{bus}\"\ntarget_url = \"{target}\"\nrequest_timeout = \"3s\"\nfollow_deletes = false\n{extra}"),
    )
}

async fn is_marked(url: &str) -> bool {
    connect(url)
        .await
        .query_one("SELECT to_regclass('maskbus.sync_state') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_superuser_target_role_is_refused_by_name_unless_the_config_allows_it() {
    let roles = TestRoles::create("su_target", &["files"]).await;
    let dbs = seeded("su_target", "5").await;
    let files = ConfigFiles::new("su_target");
    let dst = db_name(&dbs, "dst");
    let admin = connect(&dbs.url("dst")).await;
    let superuser: String = admin
        .query_one("SELECT current_user::text", &[])
        .await
        .unwrap()
        .get(0);

    // The cluster's superuser, as the demo and the tests used to run the consumer: refused
    // before anything is read or written, naming the role and the fix.
    let refused = consumer_config(&files, "refused.toml", &dbs.url("bus"), &dbs.url("dst"), "");
    let run = maskbus(&["run", "--config", &refused, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "the consumer's target role {superuser} on database {dst} is a superuser"
        )),
        "{}",
        run.stderr
    );
    for fix in [
        "a role that owns the test database and is not superuser",
        "docs/deployment.md",
        "allow_superuser_target = true",
    ] {
        assert!(run.stderr.contains(fix), "{fix}: {}", run.stderr);
    }
    assert!(!is_marked(&dbs.url("dst")).await, "nothing was written");

    // A role that may write the server's files (COPY ... TO a file) is refused the same way.
    let member = roles.name("files");
    admin
        .batch_execute(&format!("GRANT pg_write_server_files TO {member}"))
        .await
        .unwrap();
    let as_member = consumer_config(
        &files,
        "member.toml",
        &dbs.url("bus"),
        &roles.url_as(&dbs.url("dst"), "files"),
        "",
    );
    let run = maskbus(&["run", "--config", &as_member, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "the consumer's target role {member} on database {dst}"
        )) && run.stderr.contains("pg_write_server_files"),
        "{}",
        run.stderr
    );
    assert!(!is_marked(&dbs.url("dst")).await, "nothing was written");

    // The explicit key, for a throwaway database, takes the superuser: the sync runs.
    let (producer, consumer) = agent_configs(&files, &dbs, SUPERUSER_TARGET);
    let allowed = std::fs::read_to_string(&consumer).unwrap();
    assert!(
        allowed.contains("allow_superuser_target = true"),
        "{allowed}"
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
}

/// A producer that answers the consumer's requests on the bus with crafted replies, as anyone
/// who can send as the producer's bus role could: `answer` gives the reply to a request, and
/// any request it does not answer gets a closed error (`source_failed`). Stops when dropped.
struct HostileProducer {
    task: tokio::task::JoinHandle<()>,
}

impl HostileProducer {
    async fn start<F>(bus_url: &str, answer: F) -> Self
    where
        F: Fn(&Request) -> Option<Value> + Send + 'static,
    {
        let bus = maskbus_pg::Database::parse("bus", bus_url).unwrap();
        let mailbox = Mailbox::connect(bus, Settings::default()).await.unwrap();
        let task = tokio::spawn(async move {
            loop {
                let received = mailbox
                    .receive(
                        maskbus_config::DEFAULT_PRODUCER_MAILBOX,
                        16,
                        Duration::from_millis(500),
                    )
                    .await
                    .unwrap();
                for message in received.messages {
                    let request: Option<Request> = serde_json::from_str(message.body.get()).ok();
                    let reply = request.as_ref().and_then(&answer).unwrap_or_else(|| {
                        json!({
                            "type": "error",
                            "v": VERSION,
                            "error": ErrorReply::new(ErrorCode::SourceFailed),
                        })
                    });
                    if let Some(to) = &message.reply_to {
                        mailbox
                            .send(Outgoing {
                                to: to.clone(),
                                kind: reply["type"].as_str().unwrap_or("error").to_string(),
                                correlation_id: message.correlation_id.clone(),
                                reply_to: None,
                                body: body_of(&reply).unwrap(),
                            })
                            .await
                            .unwrap();
                    }
                    mailbox.ack(message.lease).await.unwrap();
                }
            }
        });
        Self { task }
    }
}

impl Drop for HostileProducer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One plain table, served with two extensions it does not need: `dblink` (untrusted: with a
/// superuser target it reaches other databases and, through them, the server) and `hstore`
/// (trusted).
fn extensions_served(request: &Request) -> Option<Value> {
    let column = |name: &str| {
        json!({"name": name, "sql_type": "integer", "not_null": true, "default": null,
               "identity": null, "generated": null, "collation": null})
    };
    let table = json!({"schema": "public", "name": "plain"});
    match request {
        Request::Entities { .. } => Some(json!({
            "type": "entities", "v": VERSION, "entities": ["public.plain"],
            "schema": "hostile-1", "rules": {},
        })),
        Request::Schema { .. } => Some(json!({
            "type": "schema", "v": VERSION, "left_out": [],
            "schema": {
                "schemas": [],
                "extensions": [{"name": "dblink", "schema": "public"},
                               {"name": "hstore", "schema": "public"}],
                "types": [], "sequences": [],
                "tables": [{"table": table, "columns": [column("id")],
                            "partition_key": null, "partition_of": null}],
                "constraints": [{"table": table, "name": "plain_pkey", "kind": "primary",
                                 "definition": "PRIMARY KEY (id)"}],
                "indexes": [], "comments": [],
            },
        })),
        _ => None,
    }
}

async fn extensions_of(url: &str) -> Vec<String> {
    first_column(
        &connect(url).await,
        "SELECT extname::text FROM pg_extension ORDER BY 1",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_extension_off_the_allow_list_is_never_created_and_the_rest_of_the_schema_is() {
    let dbs = TestDatabases::create("ext_allow", &["dst", "listed", "bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("ext_allow");
    let _hostile = HostileProducer::start(&dbs.url("bus"), extensions_served).await;
    let available: Vec<String> = first_column(
        &connect(&dbs.url("dst")).await,
        "SELECT name::text FROM pg_available_extensions WHERE name IN ('dblink', 'hstore') ORDER BY 1",
    )
    .await;
    assert_eq!(available, ["dblink", "hstore"], "the server has both");

    // As a superuser (allowed by its key), who could create any extension: the default list is
    // what PostgreSQL marks trusted, so hstore is made and dblink never is. The pages the
    // hostile producer refuses fail the run; the schema was made before.
    let superuser = consumer_config(
        &files,
        "su.toml",
        &dbs.url("bus"),
        &dbs.url("dst"),
        SUPERUSER_TARGET,
    );
    let run =
        tokio::task::spawn_blocking(move || maskbus(&["run", "--config", &superuser, "--once"]))
            .await
            .unwrap();
    assert!(run.stderr.contains("dblink"), "{}", run.stderr);
    assert_eq!(extensions_of(&dbs.url("dst")).await, ["hstore", "plpgsql"]);
    let dst = connect(&dbs.url("dst")).await;
    let made: bool = dst
        .query_one("SELECT to_regclass('public.plain') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        made,
        "the table of the same reply was created: {}",
        run.stderr
    );
    let reason: Option<String> = dst
        .query_one(
            "SELECT left_out ->> 'extension dblink' FROM maskbus.schema_state",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let reason = reason.expect("dblink is reported left out");
    assert!(
        reason.contains("not among the extensions PostgreSQL marks trusted"),
        "{reason}"
    );

    // The consumer's own list decides, not the server's: an empty one creates neither.
    let listed = consumer_config(
        &files,
        "listed.toml",
        &dbs.url("bus"),
        &dbs.url("listed"),
        &format!("{SUPERUSER_TARGET}extensions = \"\"\n"),
    );
    tokio::task::spawn_blocking(move || maskbus(&["run", "--config", &listed, "--once"]))
        .await
        .unwrap();
    assert_eq!(extensions_of(&dbs.url("listed")).await, ["plpgsql"]);
    let listed = connect(&dbs.url("listed")).await;
    let left_out: Vec<String> = first_column(
        &listed,
        "SELECT key FROM maskbus.schema_state, jsonb_each_text(left_out) ORDER BY 1",
    )
    .await;
    assert_eq!(left_out, ["extension dblink", "extension hstore"]);
    let made: bool = listed
        .query_one("SELECT to_regclass('public.plain') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0);
    assert!(made);
}

#[tokio::test]
async fn a_database_holding_rows_the_consumer_cannot_read_is_not_adopted() {
    let roles = TestRoles::create("adopt", &["owner"]).await;
    let dbs = TestDatabases::create("adopt", &["src", "dst", "bus"]).await;
    maskbus(&["bank", "init", "--source", &dbs.url("src")]).success();
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let (dst, owner) = (db_name(&dbs, "dst"), roles.name("owner"));
    // The test database belongs to the consumer's role; the test team keeps a table of its own
    // in it, with a row, that the consumer's role may not read.
    let admin = connect(&dbs.url("dst")).await;
    admin
        .batch_execute(&format!(
            "ALTER DATABASE \"{dst}\" OWNER TO {owner};
             CREATE SCHEMA team;
             CREATE TABLE team.notes (id int PRIMARY KEY, note text);
             INSERT INTO team.notes VALUES (1, 'the test team''s own')"
        ))
        .await
        .unwrap();
    let target = roles.url_as(&dbs.url("dst"), "owner");
    let as_owner = connect(&target).await;
    let readable: bool = as_owner
        .query_one(
            "SELECT has_table_privilege(c.oid, 'SELECT')
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'team' AND c.relname = 'notes'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        !readable,
        "the consumer's role cannot read the team's table"
    );
    drop(as_owner);

    let files = ConfigFiles::new("adopt");
    // Only the producer's config is used; the target keeps the owner this test gave it.
    let (producer, _) = agent_configs(&files, &dbs, SUPERUSER_TARGET);
    // No allow key: the owner of the test database is no superuser.
    let consumer = consumer_config(&files, "owner.toml", &dbs.url("bus"), &target, "");
    let refused = |what: &str| {
        let run = maskbus(&["run", "--config", &consumer, "--once"]);
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "the target database {dst} holds data (table team.notes has rows"
            )) && run.stderr.contains("--init-target"),
            "{what}: {}",
            run.stderr
        );
    };
    refused("a table the role cannot read");
    assert!(
        !is_marked(&dbs.url("dst")).await,
        "no bookkeeping was written"
    );

    // Readable, but row-level security hides every row from the role: refused all the same.
    admin
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA team TO {owner};
             GRANT SELECT ON team.notes TO {owner};
             ALTER TABLE team.notes ENABLE ROW LEVEL SECURITY"
        ))
        .await
        .unwrap();
    let seen: i64 = connect(&target)
        .await
        .query_one("SELECT count(*) FROM team.notes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(seen, 0, "the role sees no row");
    refused("a table whose rows row-level security hides");
    assert!(
        !is_marked(&dbs.url("dst")).await,
        "no bookkeeping was written"
    );

    // Once the team's table is gone, the empty database is taken, and its non-superuser owner
    // makes the served schema and syncs it.
    admin
        .batch_execute("DROP SCHEMA team CASCADE")
        .await
        .unwrap();
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_target_is_masked_source(&dbs).await;
    assert!(is_marked(&dbs.url("dst")).await);
}

// A served schema is data, never code (issue 51, item 1). A hostile producer serves a schema
// whose partition bounds, checks, defaults, generated columns, index expressions and index
// predicates call each class of dangerous function, next to legitimate objects of the same
// kinds; the consumer runs once against it, as a least-privilege owner of its target and as
// the cluster's superuser (allowed by its key), and the tests check that nothing ran, that
// nothing of the calls reached the target's catalog, that each object left out is reported
// with its reason, and that the legitimate objects were made and synced.
//
// Before issue 51 the consumer spliced each served text into its DDL as served, in one
// transaction: a bound was evaluated at `CREATE TABLE ... PARTITION OF` (a large object made,
// a notification sent, the sequence set to 999, a role created through dblink), a check and a
// default on every row a page wrote; and what PostgreSQL itself refuses (a volatile function
// in a generated column or an index, a subquery in a bound) failed the whole transaction, so
// the legitimate objects were not made either. Each test below fails on that code.

/// The channel a hostile `pg_notify` speaks on; the tests listen on it in the target.
const PWNED_CHANNEL: &str = "maskbus_pwned";

/// Every name a hostile expression of these tests calls: none may reach the target's catalog.
const HOSTILE_NAMES: &[&str] = &[
    "lo_from_bytea",
    "lo_import",
    "query_to_xml",
    "setval",
    "pg_notify",
    "set_config",
    "pg_sleep",
    "dblink",
    "pg_authid",
];

/// The window the hostile producer names in its pages (any snapshot's shape will do).
const UNTIL: &str = "1000:1000:";

/// The test team's own table in the target, with a row, made before the consumer's first run
/// (which therefore runs with `--init-target`): it must come out as it went in.
const TEAM_TABLE: &str = "CREATE SCHEMA team;
     CREATE TABLE team.notes (id int PRIMARY KEY, note text);
     INSERT INTO team.notes VALUES (1, 'the test team''s own')";

/// What one test's payloads would leave behind had they run, besides large objects and
/// notifications: a superuser role (`dblink_exec` into the target as the cluster's superuser)
/// and a file the server writes (`COPY ... TO PROGRAM`, through the same door). Both names are
/// the test's own; what a failing run leaves behind is removed when this is dropped.
struct Attack {
    /// The target database as the cluster's superuser: where the dblink payloads connect.
    dst_url: String,
    role: String,
    file: std::path::PathBuf,
}

/// One call of a class of dangerous function, as a served expression holds it, and what the
/// consumer's refusal names (the function, or the subquery).
struct Call {
    label: &'static str,
    sql: String,
    names: &'static str,
}

impl Attack {
    fn new(test: &str, dbs: &TestDatabases) -> Self {
        let id = format!("{test}_{}", std::process::id());
        Self {
            dst_url: dbs.url("dst"),
            role: format!("mb_pwned_{id}"),
            // The server runs on this machine: the file it would write lands here.
            file: std::path::PathBuf::from(format!("/tmp/maskbus-pwned-{id}")),
        }
    }

    /// One call of each class: dblink (a superuser role, and a program the server runs; first,
    /// because dblink's own connection commits whatever the consumer's transaction does next),
    /// large objects, a query run by `query_to_xml` (here, one that makes a large object), the
    /// sequence, a notification, the session's settings, a sleep and a subquery on `pg_authid`.
    fn calls(&self) -> Vec<Call> {
        let dblink = |sql: String| {
            format!(
                "public.dblink_exec('{}', '{}')",
                self.dst_url,
                sql.replace('\'', "''")
            )
        };
        let call = |label, sql: &str, names| Call {
            label,
            sql: sql.to_string(),
            names,
        };
        vec![
            Call {
                label: "dblink_role",
                sql: dblink(format!("CREATE ROLE {} SUPERUSER LOGIN", self.role)),
                names: "dblink_exec",
            },
            Call {
                label: "dblink_program",
                sql: dblink(format!(
                    "COPY (SELECT 1) TO PROGRAM 'touch {}'",
                    self.file.display()
                )),
                names: "dblink_exec",
            },
            call(
                "lo_from_bytea",
                r"lo_from_bytea(0, '\x41'::bytea)",
                "lo_from_bytea",
            ),
            call("lo_import", "lo_import('/etc/hosts')", "lo_import"),
            call(
                "query_to_xml",
                r"query_to_xml('select lo_from_bytea(0, ''\x42''::bytea)', true, true, '')",
                "query_to_xml",
            ),
            call(
                "setval",
                "setval('public.orders_id_seq'::regclass, 999)",
                "setval",
            ),
            call("pg_notify", "pg_notify('maskbus_pwned', 'x')", "pg_notify"),
            call(
                "set_config",
                "set_config('work_mem', '1MB', false)",
                "set_config",
            ),
            call("pg_sleep", "pg_sleep(0)", "pg_sleep"),
            call("pg_authid", "(SELECT count(*) FROM pg_authid)", "subquery"),
        ]
    }
}

impl Drop for Attack {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
        let admin = maskbus_pg::testing::url_with_dbname(&self.dst_url, "postgres");
        let role = self.role.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let Ok(db) = maskbus_pg::Database::parse("cleanup", &admin) else {
                    return;
                };
                if let Ok(client) = db.connect().await {
                    let _ = client
                        .batch_execute(&format!("DROP ROLE IF EXISTS {role}"))
                        .await;
                }
            });
        })
        .join();
    }
}

/// A page the hostile producer serves for an entity: every row in one page.
#[derive(Clone)]
struct ServedPage {
    key: Vec<&'static str>,
    columns: Vec<&'static str>,
    rows: Vec<Vec<&'static str>>,
}

/// What the hostile producer serves: the entity list, the schema, the pages.
#[derive(Clone)]
struct Served {
    fingerprint: &'static str,
    entities: Vec<String>,
    schema: Value,
    pages: std::collections::BTreeMap<String, ServedPage>,
}

/// An object the consumer must leave out (or drop) and report: its key in
/// `maskbus.schema_state.left_out`, its own name (which the run's log says too) and what the
/// reason names.
struct LeftOut {
    key: String,
    name: String,
    because: String,
}

/// A crafted reply, with what the consumer must make of it.
struct Reply {
    served: Served,
    /// Each object left out or dropped, with its reason.
    left_out: Vec<LeftOut>,
    /// The tables the consumer makes (and then owns).
    made: Vec<String>,
    /// Lines of [`catalog_texts`] the target must hold: the legitimate objects.
    catalog: Vec<String>,
    /// The served entities that fail closed (left out whole): the run exits 3 (partial) and
    /// names each; with none, it exits 0.
    fail_closed: Vec<String>,
}

fn public(name: &str) -> Value {
    json!({"schema": "public", "name": name})
}

fn column(name: &str, sql_type: &str) -> Value {
    json!({"name": name, "sql_type": sql_type, "not_null": false, "default": null,
           "identity": null, "generated": null, "collation": null})
}

/// `column` with one of its fields set (`not_null`, `default`, `generated`).
fn with(mut column: Value, field: &str, value: impl Into<Value>) -> Value {
    column[field] = value.into();
    column
}

fn table(name: &str, columns: Vec<Value>) -> Value {
    json!({"table": public(name), "columns": columns, "partition_key": null, "partition_of": null})
}

fn partition(name: &str, parent: &str, columns: Vec<Value>, bound: &str) -> Value {
    json!({"table": public(name), "columns": columns, "partition_key": null,
           "partition_of": [public(parent), bound]})
}

fn constraint(table: &str, name: &str, kind: &str, definition: &str) -> Value {
    json!({"table": public(table), "name": name, "kind": kind, "definition": definition})
}

fn index(table: &str, name: &str, definition: &str) -> Value {
    json!({"table": public(table), "name": name, "definition": definition})
}

fn events_columns() -> Vec<Value> {
    vec![
        with(column("kind", "text"), "not_null", true),
        with(column("id", "integer"), "not_null", true),
    ]
}

impl Reply {
    /// The legitimate objects every crafted reply carries, one of each kind a vector abuses:
    /// `public.orders` with an id drawn by `nextval` from its own served sequence, a generated
    /// column, a CHECK, a unique index on an expression and an index with a predicate;
    /// `public.events`, partitioned by list, with a partition of a constant bound. And the
    /// extension dblink, which the consumer never creates from a served name.
    fn legitimate(fingerprint: &'static str) -> Self {
        let schema = json!({
            "schemas": [],
            "extensions": [{"name": "dblink", "schema": "public"}],
            "types": [],
            "sequences": [{"schema": "public", "name": "orders_id_seq", "data_type": "bigint",
                           "start": 1, "increment": 1, "min": 1, "max": i64::MAX,
                           "cycle": false, "owned_by": [public("orders"), "id"]}],
            "tables": [
                table("orders", vec![
                    with(with(column("id", "bigint"), "not_null", true),
                         "default", "nextval('public.orders_id_seq'::regclass)"),
                    column("email", "text"),
                    with(column("price", "numeric"), "not_null", true),
                    with(column("price_cents", "numeric"), "generated",
                         "(price * (100)::numeric)"),
                ]),
                with(table("events", events_columns()), "partition_key", "LIST (kind)"),
                partition("events_a", "events", events_columns(), "FOR VALUES IN ('a')"),
            ],
            "constraints": [
                constraint("orders", "orders_pkey", "primary", "PRIMARY KEY (id)"),
                constraint("orders", "orders_price_check", "check",
                           "CHECK ((price >= (0)::numeric))"),
                constraint("events", "events_pkey", "primary", "PRIMARY KEY (kind, id)"),
            ],
            "indexes": [
                index("orders", "orders_email_lower",
                      "CREATE UNIQUE INDEX orders_email_lower ON public.orders USING btree (lower(email))"),
                index("orders", "orders_priced",
                      "CREATE INDEX orders_priced ON public.orders USING btree (id) WHERE (price > (0)::numeric)"),
            ],
            "comments": [],
        });
        let mut pages = std::collections::BTreeMap::new();
        pages.insert(
            "public.orders".to_string(),
            ServedPage {
                key: vec!["id"],
                columns: vec!["id", "email", "price"],
                rows: vec![vec!["1", "Alpha", "10"], vec!["2", "beta", "0"]],
            },
        );
        pages.insert(
            "public.events".to_string(),
            ServedPage {
                key: vec!["kind", "id"],
                columns: vec!["kind", "id"],
                rows: vec![vec!["a", "1"]],
            },
        );
        Self {
            served: Served {
                fingerprint,
                entities: vec!["public.orders".into(), "public.events".into()],
                schema,
                pages,
            },
            left_out: vec![LeftOut {
                key: "extension dblink".into(),
                name: "dblink".into(),
                because: "not among the extensions PostgreSQL marks trusted".into(),
            }],
            made: vec![
                "public.events".into(),
                "public.events_a".into(),
                "public.orders".into(),
            ],
            catalog: vec![
                "default of orders.id: nextval('orders_id_seq'::regclass)".into(),
                "generated of orders.price_cents: (price * (100)::numeric)".into(),
                "constraint orders_price_check on orders: CHECK ((price >= (0)::numeric))".into(),
                "index orders_email_lower: CREATE UNIQUE INDEX orders_email_lower ON public.orders USING btree (lower(email))".into(),
                "index orders_priced: CREATE INDEX orders_priced ON public.orders USING btree (id) WHERE (price > (0)::numeric)".into(),
                "bound of events_a: FOR VALUES IN ('a')".into(),
                "partition key of events: LIST (kind)".into(),
                "sequence orders_id_seq owned by orders.id".into(),
            ],
            fail_closed: Vec::new(),
        }
    }

    fn push(&mut self, list: &str, object: Value) {
        self.served.schema[list]
            .as_array_mut()
            .unwrap()
            .push(object);
    }

    fn serve_table(&mut self, name: &str, def: Value) {
        self.served.entities.push(format!("public.{name}"));
        self.push("tables", def);
    }

    fn expect_left_out(&mut self, key: String, name: String, because: &str) {
        self.left_out.push(LeftOut {
            key,
            name,
            because: because.to_string(),
        });
    }

    /// The hostile producer's answers: the entity list, the schema, one page per entity that
    /// has rows (with a window of its own making), a `ranges` reply that does not split.
    fn answers(&self) -> impl Fn(&Request) -> Option<Value> + Send + 'static {
        let served = self.served.clone();
        move |request| match request {
            Request::Entities { .. } => Some(json!({
                "type": "entities", "v": VERSION, "entities": served.entities,
                "schema": served.fingerprint, "rules": {},
            })),
            Request::Schema { .. } => Some(json!({
                "type": "schema", "v": VERSION, "left_out": [], "schema": served.schema,
            })),
            Request::Ranges { entity, .. } => Some(json!({
                "type": "ranges", "v": VERSION, "entity": entity, "until": UNTIL,
                "bounds": [], "rows": 2,
            })),
            Request::Page {
                entity,
                since,
                until,
                ..
            } => {
                let page = served.pages.get(entity)?;
                let last = page.rows.last().map(|row| {
                    page.key
                        .iter()
                        .map(|k| row[page.columns.iter().position(|c| c == k).unwrap()])
                        .collect::<Vec<_>>()
                });
                Some(json!({
                    "type": "page", "v": VERSION, "entity": entity, "key": page.key,
                    "columns": page.columns, "rows": page.rows, "next_after": last,
                    "more": false, "since": since,
                    "until": until.as_ref().map_or(UNTIL, |u| u.0.as_str()),
                    "part": 0, "parts": 1,
                }))
            }
            _ => None,
        }
    }
}

/// Vector: partition bounds. `CREATE TABLE ... PARTITION OF ... FOR VALUES IN (<expr>)`
/// evaluates the bound when the partition is made (volatile functions allowed): one partition
/// of `public.events` per class of call. Each is left out whole, reported by its name.
fn bounds_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-bounds");
    for call in attack.calls() {
        let name = format!("events_{}", call.label);
        reply.push(
            "tables",
            partition(
                &name,
                "events",
                events_columns(),
                &format!("FOR VALUES IN (({})::text)", call.sql),
            ),
        );
        reply.expect_left_out(
            format!("public.{name}"),
            name,
            "is a partition bound that is not made of constants",
        );
    }
    reply
}

/// Vector: CHECK constraints. A check runs on every row written (the hostile producer serves
/// rows of `public.orders`): one check per class of call. Each is dropped and reported; the
/// table is made with its legitimate check and synced.
fn checks_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-checks");
    for call in attack.calls() {
        let name = format!("orders_{}_check", call.label);
        reply.push(
            "constraints",
            constraint(
                "orders",
                &name,
                "check",
                &format!("CHECK ((({})::text IS NOT NULL))", call.sql),
            ),
        );
        reply.expect_left_out(
            format!("dropped constraint {name} of public.orders"),
            name,
            call.names,
        );
    }
    reply
}

/// Vector: column defaults. A default runs for every row written without its column (the
/// hostile producer serves rows of `public.defaults` with their id only): one column per class
/// of call, and one with a legitimate default. Each hostile default is dropped and reported;
/// the table is made with its legitimate default and synced.
fn defaults_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-defaults");
    let mut columns = vec![
        with(column("id", "integer"), "not_null", true),
        with(column("note", "text"), "default", "'none'::text"),
    ];
    for call in attack.calls() {
        let name = format!("c_{}", call.label);
        columns.push(with(
            column(&name, "text"),
            "default",
            format!("({})::text", call.sql),
        ));
        reply.expect_left_out(
            format!("dropped the default of public.defaults.{name}"),
            name,
            call.names,
        );
    }
    reply.serve_table("defaults", table("defaults", columns));
    reply.push(
        "constraints",
        constraint("defaults", "defaults_pkey", "primary", "PRIMARY KEY (id)"),
    );
    reply.served.pages.insert(
        "public.defaults".into(),
        ServedPage {
            key: vec!["id"],
            columns: vec!["id"],
            rows: vec![vec!["1"], vec!["2"]],
        },
    );
    reply.made.push("public.defaults".into());
    reply
        .catalog
        .push("default of defaults.note: 'none'::text".into());
    reply
}

/// Vector: generated columns. `GENERATED ALWAYS AS (<expr>) STORED` runs on every row written:
/// one table per class of call. Each is left out whole (it cannot be made as served), reported
/// by its name; the legitimate generated column of `public.orders` is made.
fn generated_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-generated");
    for call in attack.calls() {
        let name = format!("gen_{}", call.label);
        reply.serve_table(
            &name,
            table(
                &name,
                vec![
                    with(column("id", "integer"), "not_null", true),
                    with(
                        column("g", "text"),
                        "generated",
                        format!("(({})::text)", call.sql),
                    ),
                ],
            ),
        );
        reply.expect_left_out(format!("public.{name}"), name.clone(), call.names);
        reply.fail_closed.push(format!("public.{name}"));
    }
    reply
}

/// Vector: index expressions. An index expression runs on every row indexed: one index of
/// `public.orders` per class of call. Each is dropped and reported; the legitimate unique
/// index on `lower(email)` is made.
fn index_expressions_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-index-expressions");
    for call in attack.calls() {
        let name = format!("orders_{}_expr", call.label);
        reply.push(
            "indexes",
            index(
                "orders",
                &name,
                &format!(
                    "CREATE INDEX {name} ON public.orders USING btree ((({})::text))",
                    call.sql
                ),
            ),
        );
        reply.expect_left_out(
            format!("dropped index {name} of public.orders"),
            name,
            call.names,
        );
    }
    reply
}

/// Vector: index predicates. A partial index's `WHERE` runs on every row written: one index
/// of `public.orders` per class of call. Each is dropped and reported; the legitimate partial
/// index `WHERE (price > 0)` is made.
fn index_predicates_served(attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-index-predicates");
    for call in attack.calls() {
        let name = format!("orders_{}_where", call.label);
        reply.push(
            "indexes",
            index(
                "orders",
                &name,
                &format!(
                    "CREATE INDEX {name} ON public.orders USING btree (id) WHERE (({})::text IS NOT NULL)",
                    call.sql
                ),
            ),
        );
        reply.expect_left_out(
            format!("dropped index {name} of public.orders"),
            name,
            call.names,
        );
    }
    reply
}

/// How deep the hostile partition chain goes (3,000 levels took the old `well_formed` 30 s of
/// CPU, cubic in the depth).
const CHAIN_DEPTH: usize = 3_000;

/// Vector: a deep partition chain. `public.chain`, partitioned by list, then 3,000 levels each
/// a `PARTITION OF` the one above (constant bounds), the deepest with a bound calling
/// `lo_from_bytea`; and a check on the chain's root calling `pg_notify`.
fn deep_chain_served(_attack: &Attack) -> Reply {
    let mut reply = Reply::legitimate("hostile-deep-chain");
    let chain_columns = || {
        vec![
            with(column("k", "text"), "not_null", true),
            with(column("id", "integer"), "not_null", true),
        ]
    };
    reply.serve_table(
        "chain",
        with(table("chain", chain_columns()), "partition_key", "LIST (k)"),
    );
    reply.push(
        "constraints",
        constraint("chain", "chain_pkey", "primary", "PRIMARY KEY (k, id)"),
    );
    reply.served.pages.insert(
        "public.chain".into(),
        ServedPage {
            key: vec!["k", "id"],
            columns: vec!["k", "id"],
            rows: Vec::new(),
        },
    );
    reply.made.push("public.chain".into());
    for level in 1..=CHAIN_DEPTH {
        let name = format!("chain_{level}");
        let parent = if level == 1 {
            "chain".to_string()
        } else {
            format!("chain_{}", level - 1)
        };
        if level < CHAIN_DEPTH {
            reply.push(
                "tables",
                with(
                    partition(&name, &parent, chain_columns(), "FOR VALUES IN ('v')"),
                    "partition_key",
                    "LIST (k)",
                ),
            );
            reply.made.push(format!("public.{name}"));
        } else {
            reply.push(
                "tables",
                partition(
                    &name,
                    &parent,
                    chain_columns(),
                    r"FOR VALUES IN ((lo_from_bytea(0, '\x41'::bytea))::text)",
                ),
            );
            reply.expect_left_out(
                format!("public.{name}"),
                name,
                "is a partition bound that is not made of constants",
            );
        }
    }
    reply.push(
        "constraints",
        constraint(
            "chain",
            "chain_pwned_check",
            "check",
            "CHECK (((pg_notify('maskbus_pwned', 'x'))::text IS NOT NULL))",
        ),
    );
    reply.expect_left_out(
        "dropped constraint chain_pwned_check of public.chain".into(),
        "chain_pwned_check".into(),
        "pg_notify",
    );
    reply.catalog.push(format!(
        "bound of chain_{}: FOR VALUES IN ('v')",
        CHAIN_DEPTH - 1
    ));
    reply
}

/// Who the consumer connects to its target as.
#[derive(Clone, Copy, Debug)]
enum TargetRole {
    /// A login role made for the test, owner of the target database, not superuser: what
    /// docs/deployment.md asks for.
    LeastPrivilege,
    /// The cluster's superuser, with `allow_superuser_target = true` (as the demo used to run):
    /// where `dblink_exec`, `lo_import` and `COPY ... TO PROGRAM` would have been reachable.
    Superuser,
}

/// What the tests see of the cluster and the target before and after the run: none of it may
/// change.
#[derive(Debug, PartialEq)]
struct Observed {
    /// Large objects in the target (`pg_largeobject_metadata` is per database).
    large_objects: i64,
    /// The cluster's superusers (no test makes one, so the set is steady).
    superusers: Vec<String>,
    /// Whether the role the dblink payload would create exists.
    attack_role: bool,
    /// Whether the file `COPY ... TO PROGRAM` would write exists.
    attack_file: bool,
    /// The extensions of the target.
    extensions: Vec<String>,
    /// The test team's table, row by row.
    team_notes: Vec<String>,
}

impl Observed {
    async fn take(admin: &maskbus_pg::tokio_postgres::Client, attack: &Attack) -> Self {
        let row = admin
            .query_one(
                "SELECT (SELECT count(*) FROM pg_largeobject_metadata),
                        ARRAY(SELECT rolname::text FROM pg_roles WHERE rolsuper ORDER BY 1),
                        EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
                        ARRAY(SELECT extname::text FROM pg_extension ORDER BY 1),
                        ARRAY(SELECT format('%s: %s', id, note) FROM team.notes ORDER BY id)",
                &[&attack.role],
            )
            .await
            .unwrap();
        Self {
            large_objects: row.get(0),
            superusers: row.get(1),
            attack_role: row.get(2),
            attack_file: attack.file.exists(),
            extensions: row.get(3),
            team_notes: row.get(4),
        }
    }
}

/// Listens on [`PWNED_CHANNEL`] in the target from before the run.
struct Listener {
    client: maskbus_pg::tokio_postgres::Client,
    heard: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Listener {
    async fn start(url: &str) -> Self {
        use futures_util::StreamExt;
        use maskbus_pg::tokio_postgres::{AsyncMessage, NoTls};
        let (client, mut connection) = maskbus_pg::tokio_postgres::connect(url, NoTls)
            .await
            .unwrap();
        let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = heard.clone();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(n) = message {
                    sink.lock().unwrap().push(n.payload().to_string());
                }
            }
        });
        client
            .batch_execute(&format!("LISTEN {PWNED_CHANNEL}"))
            .await
            .unwrap();
        Self { client, heard }
    }

    /// Asserts that nothing was notified on the channel since [`Listener::start`]: a probe
    /// sent now is the first and only notification heard (notifications arrive in commit
    /// order, so one the run sent would come before it).
    async fn assert_silent(&self, admin: &maskbus_pg::tokio_postgres::Client) {
        admin
            .batch_execute(&format!("NOTIFY {PWNED_CHANNEL}, 'probe'"))
            .await
            .unwrap();
        wait_until("the probe notification", || async {
            // A round trip lets the listener's backend deliver what is queued for it.
            self.client.batch_execute("SELECT 1").await.unwrap();
            let heard = self.heard.lock().unwrap();
            heard.iter().any(|p| p == "probe")
        })
        .await;
        let heard = self.heard.lock().unwrap().clone();
        assert_eq!(heard, ["probe"], "a served expression sent a notification");
    }
}

/// Every text of the target's catalog a served expression could have reached: defaults and
/// generated expressions, constraints, indexes, partition bounds and keys, and the sequences'
/// owners.
async fn catalog_texts(admin: &maskbus_pg::tokio_postgres::Client) -> Vec<String> {
    first_column(
        admin,
        "SELECT format('%s of %s.%s: %s',
                       CASE a.attgenerated WHEN 's' THEN 'generated' ELSE 'default' END,
                       d.adrelid::regclass, a.attname, pg_get_expr(d.adbin, d.adrelid))
           FROM pg_attrdef d
           JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         UNION ALL
         SELECT format('constraint %s on %s: %s', conname, conrelid::regclass,
                       pg_get_constraintdef(oid))
           FROM pg_constraint WHERE connamespace <> 'pg_catalog'::regnamespace
         UNION ALL
         SELECT format('index %s: %s', indexname, indexdef) FROM pg_indexes
          WHERE schemaname <> 'pg_catalog'
         UNION ALL
         SELECT format('bound of %s: %s', oid::regclass, pg_get_expr(relpartbound, oid))
           FROM pg_class WHERE relpartbound IS NOT NULL
         UNION ALL
         SELECT format('partition key of %s: %s', partrelid::regclass,
                       pg_get_partkeydef(partrelid))
           FROM pg_partitioned_table
         UNION ALL
         SELECT format('sequence %s owned by %s.%s', s.objid::regclass, s.refobjid::regclass,
                       a.attname)
           FROM pg_depend s
           JOIN pg_class c ON c.oid = s.objid AND c.relkind = 'S'
           JOIN pg_attribute a ON a.attrelid = s.refobjid AND a.attnum = s.refobjsubid
          WHERE s.classid = 'pg_class'::regclass AND s.deptype = 'a'
         ORDER BY 1",
    )
    .await
}

/// Runs the consumer once (with `--init-target` when `init`: on its first run, the target
/// holds the team's table) off the runtime's threads, and waits for it to end by itself: how
/// long it takes is not asserted, but a run that has not ended after ten minutes is a hang,
/// killed and failed.
async fn run_once(files: &ConfigFiles, config: &str, init: bool) -> Run {
    let stdout = files.write("run.stdout", "");
    let stderr = files.write("run.stderr", "");
    let config = config.to_string();
    tokio::task::spawn_blocking(move || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_maskbus"));
        command.args(["run", "--config", &config, "--once"]);
        if init {
            command.arg("--init-target");
        }
        for (key, _) in std::env::vars() {
            if key.starts_with("MASKBUS_") {
                command.env_remove(key);
            }
        }
        let mut child = command
            .env("MASKBUS_LOG", "warn")
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("spawn maskbus");
        let deadline = std::time::Instant::now() + Duration::from_secs(600);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the consumer did not end: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Run {
            code: status.code().unwrap_or(-1),
            stdout: std::fs::read_to_string(&stdout).unwrap(),
            stderr: std::fs::read_to_string(&stderr).unwrap(),
        }
    })
    .await
    .unwrap()
}

/// Nothing any served expression could do happened: no large object, no role, no file, no
/// extension, the team's table as it was (`before` and `after` equal); the served sequence
/// was never set to 999; no row outside the tables maskbus owns but the team's; no hostile
/// name in the target's catalog.
async fn assert_nothing_ran(
    admin: &maskbus_pg::tokio_postgres::Client,
    before: &Observed,
    after: &Observed,
    run: &Run,
) {
    assert_eq!(
        before, after,
        "a served expression ran (before, after): {}",
        run.stderr
    );
    assert!(!after.attack_role && !after.attack_file, "{after:?}");
    assert_eq!(
        after.team_notes,
        ["1: the test team's own"],
        "the team's table is still there, with its row"
    );
    let (last_value, called): (i64, bool) = admin
        .query_one(
            "SELECT last_value, is_called FROM public.orders_id_seq",
            &[],
        )
        .await
        .map(|r| (r.get(0), r.get(1)))
        .unwrap_or_else(|e| panic!("the served sequence: {e}: {}", run.stderr));
    assert!(
        last_value <= 2,
        "the served sequence was set by a served expression (last_value {last_value}, called {called})"
    );
    let owned: Vec<String> =
        first_column(admin, "SELECT entity FROM maskbus.owned_tables ORDER BY 1").await;
    let tables: Vec<String> = first_column(
        admin,
        "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p')
            AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'maskbus')
            AND n.nspname NOT LIKE 'pg\\_%'
          ORDER BY 1",
    )
    .await;
    for table in tables {
        if owned.contains(&table) || table == "team.notes" {
            continue;
        }
        let rows: i64 = admin
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(rows, 0, "{table}, which maskbus does not own, has rows");
    }
    for text in catalog_texts(admin).await {
        for name in HOSTILE_NAMES {
            assert!(
                !text.contains(name),
                "{name} reached the target's catalog: {text}"
            );
        }
    }
}

/// Each object the reply must leave out is in `maskbus.schema_state.left_out` under its key,
/// with a reason naming what was refused; the run's log and `maskbus status` name it.
async fn assert_left_out_reported(
    admin: &maskbus_pg::tokio_postgres::Client,
    reply: &Reply,
    run: &Run,
    config: &str,
) {
    let status = {
        let config = config.to_string();
        tokio::task::spawn_blocking(move || maskbus(&["status", "--config", &config]))
            .await
            .unwrap()
    };
    let rows = admin
        .query(
            "SELECT key, value FROM maskbus.schema_state, jsonb_each_text(left_out)",
            &[],
        )
        .await
        .unwrap();
    let left_out: std::collections::BTreeMap<String, String> =
        rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    for expected in &reply.left_out {
        let reason = left_out
            .get(&expected.key)
            .unwrap_or_else(|| panic!("{} is not reported left out: {left_out:#?}", expected.key));
        assert!(
            reason.contains(&expected.because),
            "{}: the reason does not name {}: {reason}",
            expected.key,
            expected.because
        );
        assert!(
            run.stderr.contains(&expected.name),
            "the run's log does not name {}: {}",
            expected.name,
            run.stderr
        );
        assert!(
            status.stdout.contains(&format!("{}: ", expected.key))
                || status
                    .stdout
                    .contains(&format!("{} FAILS CLOSED", expected.key)),
            "maskbus status does not name {}: {}{}",
            expected.key,
            status.stdout,
            status.stderr
        );
    }
}

/// The legitimate objects of the reply were made, owned, and synced.
async fn assert_legitimate_objects_made(
    admin: &maskbus_pg::tokio_postgres::Client,
    reply: &Reply,
    run: &Run,
) {
    let owned: Vec<String> =
        first_column(admin, "SELECT entity FROM maskbus.owned_tables ORDER BY 1").await;
    // The team's table is judged by its own tests (`team_table_attack`).
    let owned: Vec<String> = owned.into_iter().filter(|t| t != "team.notes").collect();
    let mut made = reply.made.clone();
    made.sort();
    assert_eq!(owned, made, "{}", run.stderr);
    if reply.fail_closed.is_empty() {
        assert_eq!(run.code, 0, "{}", run.stderr);
    } else {
        assert_eq!(run.code, 3, "partial: {}", run.stderr);
        for entity in &reply.fail_closed {
            assert!(
                run.stderr.contains(&format!("{entity} (")),
                "{entity} is not named as failing closed: {}",
                run.stderr
            );
        }
    }
    let catalog = catalog_texts(admin).await;
    for expected in &reply.catalog {
        assert!(
            catalog.contains(expected),
            "not made: {expected}\n{catalog:#?}\n{}",
            run.stderr
        );
    }
    // (A table served without rows is not counted: a count over the deep chain plans 3,000
    // levels of partitions, seconds of the server's time for nothing.)
    for (entity, page) in reply
        .served
        .pages
        .iter()
        .filter(|(_, p)| !p.rows.is_empty())
    {
        let rows: i64 = admin
            .query_one(&format!("SELECT count(*) FROM {entity}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            rows,
            page.rows.len() as i64,
            "{entity} was not synced: {}",
            run.stderr
        );
    }
}

/// Serves the reply `build` crafts to a consumer whose target role is `target`, with the test
/// team's table in the target and a listener on [`PWNED_CHANNEL`], runs the consumer once, and
/// checks that nothing ran, that what was refused is reported, and that the legitimate
/// objects were made and synced.
async fn attack(test: &str, target: TargetRole, build: fn(&Attack) -> Reply) {
    let roles = TestRoles::create(test, &["owner"]).await;
    let dbs = TestDatabases::create(test, &["dst", "bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let attack = Attack::new(test, &dbs);
    let admin = connect(&dbs.url("dst")).await;
    admin.batch_execute(TEAM_TABLE).await.unwrap();
    let (target_url, allow) = match target {
        TargetRole::LeastPrivilege => {
            admin
                .batch_execute(&format!(
                    "ALTER DATABASE \"{}\" OWNER TO {}",
                    db_name(&dbs, "dst"),
                    roles.name("owner")
                ))
                .await
                .unwrap();
            (roles.url_as(&dbs.url("dst"), "owner"), "")
        }
        TargetRole::Superuser => (dbs.url("dst"), SUPERUSER_TARGET),
    };
    let reply = build(&attack);
    let _hostile = HostileProducer::start(&dbs.url("bus"), reply.answers()).await;
    let listener = Listener::start(&dbs.url("dst")).await;
    let before = Observed::take(&admin, &attack).await;
    let files = ConfigFiles::new(test);
    let config = consumer_config(&files, "consumer.toml", &dbs.url("bus"), &target_url, allow);
    let run = run_once(&files, &config, true).await;

    let after = Observed::take(&admin, &attack).await;
    assert_nothing_ran(&admin, &before, &after, &run).await;
    listener.assert_silent(&admin).await;
    assert_left_out_reported(&admin, &reply, &run, &config).await;
    assert_legitimate_objects_made(&admin, &reply, &run).await;
}

/// Partition bounds calling each class of function (a bound is evaluated when the partition
/// is made), as the owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_partition_bounds_run_nothing_as_a_least_privilege_target() {
    attack("bound_lp", TargetRole::LeastPrivilege, bounds_served).await;
}

/// Partition bounds calling each class of function, as the cluster's superuser: the bound
/// calling `dblink_exec` made a SUPERUSER role and ran `COPY ... TO PROGRAM` (issue 51).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_partition_bounds_run_nothing_as_a_superuser_target() {
    attack("bound_su", TargetRole::Superuser, bounds_served).await;
}

/// CHECK constraints calling each class of function (a check runs on every row a page
/// writes), as the owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_checks_run_nothing_as_a_least_privilege_target() {
    attack("check_lp", TargetRole::LeastPrivilege, checks_served).await;
}

/// CHECK constraints calling each class of function, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_checks_run_nothing_as_a_superuser_target() {
    attack("check_su", TargetRole::Superuser, checks_served).await;
}

/// Column defaults calling each class of function (a default runs for every row written
/// without its column), as the owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_defaults_run_nothing_as_a_least_privilege_target() {
    attack("default_lp", TargetRole::LeastPrivilege, defaults_served).await;
}

/// Column defaults calling each class of function, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_defaults_run_nothing_as_a_superuser_target() {
    attack("default_su", TargetRole::Superuser, defaults_served).await;
}

/// Generated columns calling each class of function (run on every row written), as the
/// owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_generated_columns_run_nothing_as_a_least_privilege_target() {
    attack("gen_lp", TargetRole::LeastPrivilege, generated_served).await;
}

/// Generated columns calling each class of function, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_generated_columns_run_nothing_as_a_superuser_target() {
    attack("gen_su", TargetRole::Superuser, generated_served).await;
}

/// Index expressions calling each class of function (run on every row indexed), as the
/// owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_index_expressions_run_nothing_as_a_least_privilege_target() {
    attack(
        "iexpr_lp",
        TargetRole::LeastPrivilege,
        index_expressions_served,
    )
    .await;
}

/// Index expressions calling each class of function, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_index_expressions_run_nothing_as_a_superuser_target() {
    attack("iexpr_su", TargetRole::Superuser, index_expressions_served).await;
}

/// Index predicates calling each class of function (run on every row written), as the owner
/// of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_index_predicates_run_nothing_as_a_least_privilege_target() {
    attack(
        "ipred_lp",
        TargetRole::LeastPrivilege,
        index_predicates_served,
    )
    .await;
}

/// Index predicates calling each class of function, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_index_predicates_run_nothing_as_a_superuser_target() {
    attack("ipred_su", TargetRole::Superuser, index_predicates_served).await;
}

/// A 3,000-deep partition chain (issue 51, item 4: the old `well_formed` spent 30 s of CPU
/// on it) whose deepest bound calls `lo_from_bytea` and whose root has a check calling
/// `pg_notify`, as the owner of the target database: the run ends, the chain down to the
/// hostile level is made, and nothing ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_served_partition_chain_is_judged_and_runs_nothing_as_a_least_privilege_target() {
    attack("chain_lp", TargetRole::LeastPrivilege, deep_chain_served).await;
}

/// The same deep chain, as the cluster's superuser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_served_partition_chain_is_judged_and_runs_nothing_as_a_superuser_target() {
    attack("chain_su", TargetRole::Superuser, deep_chain_served).await;
}

/// Issue 51, item 2, with the test team's table in the database when the consumer is told to
/// take it (`--init-target`, which only lifts the first-run guard): the first run makes the
/// served schema; then an entity list names `team.notes`, with a page that overwrites its row
/// and adds another. The table was never served when the target was taken, so it is not
/// maskbus's: the run names it as not owned and writes nothing into it. As a least-privilege
/// owner of the target the team has granted its table to the consumer's role (else the server
/// alone would refuse the write, and the test would prove nothing).
async fn team_table_attack(test: &str, target: TargetRole) {
    let roles = TestRoles::create(test, &["owner"]).await;
    let dbs = TestDatabases::create(test, &["dst", "bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let attack = Attack::new(test, &dbs);
    let admin = connect(&dbs.url("dst")).await;
    admin.batch_execute(TEAM_TABLE).await.unwrap();
    let (target_url, allow) = match target {
        TargetRole::LeastPrivilege => {
            let owner = roles.name("owner");
            admin
                .batch_execute(&format!(
                    "ALTER DATABASE \"{}\" OWNER TO {owner};
                     GRANT USAGE ON SCHEMA team TO {owner};
                     GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON team.notes TO {owner}",
                    db_name(&dbs, "dst"),
                ))
                .await
                .unwrap();
            (roles.url_as(&dbs.url("dst"), "owner"), "")
        }
        TargetRole::Superuser => (dbs.url("dst"), SUPERUSER_TARGET),
    };
    let files = ConfigFiles::new(test);
    let config = consumer_config(&files, "consumer.toml", &dbs.url("bus"), &target_url, allow);

    let reply = Reply::legitimate("hostile-team");
    let hostile = HostileProducer::start(&dbs.url("bus"), reply.answers()).await;
    let first = run_once(&files, &config, true).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    drop(hostile);

    // The same schema (its fingerprint unchanged), and a list that names the team's table.
    let mut reply = Reply::legitimate("hostile-team");
    reply.served.entities.push("team.notes".into());
    reply.served.pages.insert(
        "team.notes".into(),
        ServedPage {
            key: vec!["id"],
            columns: vec!["id", "note"],
            rows: vec![
                vec!["1", "overwritten by a page"],
                vec!["2", "added by a page"],
            ],
        },
    );
    let _hostile = HostileProducer::start(&dbs.url("bus"), reply.answers()).await;
    let before = Observed::take(&admin, &attack).await;
    let second = run_once(&files, &config, false).await;
    let after = Observed::take(&admin, &attack).await;
    assert_eq!(
        after.team_notes,
        ["1: the test team's own"],
        "a page wrote the team's table: {}",
        second.stderr
    );
    assert_eq!(before, after);
    assert!(
        second
            .stderr
            .contains("team.notes is not a table maskbus created or adopted"),
        "{}",
        second.stderr
    );
    let owned: Vec<String> =
        first_column(&admin, "SELECT entity FROM maskbus.owned_tables ORDER BY 1").await;
    assert!(
        !owned.contains(&"team.notes".to_string()),
        "maskbus owns the team's table: {owned:?}"
    );
}

/// A table the test team had in the database when `--init-target` took it, named later by a
/// served list with a page (issue 51, item 2), as the owner of the target database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_table_present_when_the_target_is_taken_is_never_written_by_a_served_list_as_a_least_privilege_target(
) {
    team_table_attack("team_lp", TargetRole::LeastPrivilege).await;
}

/// The same, as the cluster's superuser, which the server itself would let write any table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_table_present_when_the_target_is_taken_is_never_written_by_a_served_list_as_a_superuser_target(
) {
    team_table_attack("team_su", TargetRole::Superuser).await;
}
