//! `maskbus mcp`: each role's registry over MCP, driven by the official MCP Inspector CLI and by
//! plain JSON-RPC on stdin, against real Postgres.

use crate::support::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The Inspector CLI that scripts/test installs into target/mcp-inspector.
fn inspector() -> String {
    std::env::var("MASKBUS_MCP_INSPECTOR").unwrap_or_else(|_| {
        panic!(
            "MASKBUS_MCP_INSPECTOR is not set: run the tests through scripts/test, which installs \
             @modelcontextprotocol/inspector@0.15.0 into target/mcp-inspector"
        )
    })
}

/// Runs one Inspector CLI call against `maskbus mcp` and returns its JSON output.
fn inspect(config: &str, method_args: &[&str]) -> Value {
    let output = Command::new(inspector())
        .args([
            "--cli",
            "-e",
            &format!("MASKBUS_CONFIG={config}"),
            "-e",
            "MASKBUS_LOG=warn",
        ])
        .arg(env!("CARGO_BIN_EXE_maskbus"))
        .arg("mcp")
        .args(method_args)
        .output()
        .expect("run the MCP Inspector");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "inspector failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspector printed no JSON ({e}): {stdout}"))
}

fn tool_names(listing: &Value) -> Vec<String> {
    listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn call(config: &str, tool: &str, args: &[&str]) -> Value {
    let mut method = vec!["--method", "tools/call", "--tool-name", tool];
    for arg in args {
        method.push("--tool-arg");
        method.push(arg);
    }
    inspect(config, &method)
}

#[tokio::test]
async fn the_inspector_sees_each_roles_registry_and_only_masked_rows() {
    let dbs = bank_databases("mcp_inspector").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    let files = ConfigFiles::new("mcp_inspector");
    let (producer, consumer) = agent_configs(&files, &dbs, "");

    let producer_tools = inspect(&producer, &["--method", "tools/list"]);
    assert_eq!(
        tool_names(&producer_tools),
        ["mailbox_wait", "mailbox_send", "query_masked"]
    );
    let query = producer_tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query_masked")
        .unwrap();
    assert!(
        query["description"].as_str().unwrap().contains("200"),
        "the description names the cap"
    );
    assert_eq!(query["inputSchema"]["required"], json!(["entity"]));
    assert_eq!(
        tool_names(&inspect(&consumer, &["--method", "tools/list"])),
        [
            "mailbox_wait",
            "mailbox_send",
            "insert_rows",
            "query_local",
            "watermark"
        ]
    );

    let result = call(&producer, "query_masked", &["entity=customers", "limit=3"]);
    assert_eq!(result["isError"], false, "{result}");
    let page: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert!(
            row[4].as_str().unwrap().starts_with("***-**-"),
            "ssn masked: {row}"
        );
        assert!(
            row[3].as_str().unwrap().contains("***@"),
            "email masked: {row}"
        );
    }

    // The Inspector exits 0 on a failed call; the JSON says isError.
    let blocked = call(&producer, "insert_rows", &["entity=customers"]);
    assert_eq!(blocked["isError"], true);
    assert!(blocked["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("blocked: the producer may only use"));
    let bad = call(
        &producer,
        "query_masked",
        &["entity=customers", "limit=5000"],
    );
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("at most 200"),
        "{bad}"
    );
    let missing = call(&producer, "query_masked", &["limit=5"]);
    assert_eq!(missing["isError"], true, "{missing}");
}

/// Plain JSON-RPC over the server's stdin and stdout, no npm involved.
#[tokio::test]
async fn json_rpc_on_stdin_lists_calls_refuses_and_keeps_running() {
    let dbs = bank_databases("mcp_jsonrpc").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    let files = ConfigFiles::new("mcp_jsonrpc");
    let (producer, _) = agent_configs(&files, &dbs, "");
    let mut server = Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args(["mcp", "--config", &producer])
        .env("MASKBUS_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut receive = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"))
    };

    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let init = receive();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "maskbus-producer");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = receive();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mailbox_wait", "mailbox_send", "query_masked"]);

    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "psql", "arguments": {}}}),
    );
    let blocked = receive();
    assert_eq!(blocked["result"]["isError"], true, "{blocked}");

    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "query_masked", "arguments": {"entity": "customers", "where": "1=1"}}}),
    );
    let bad = receive();
    assert_eq!(bad["result"]["isError"], true, "{bad}");

    // Still serving after the refusals.
    send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "query_masked", "arguments": {"entity": "cards", "limit": 2}}}),
    );
    let page = receive();
    assert_eq!(page["result"]["isError"], false, "{page}");
    let text: Value =
        serde_json::from_str(page["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    for row in text["rows"].as_array().unwrap() {
        assert!(
            row[2].as_str().unwrap().contains(" **** **** "),
            "card masked: {row}"
        );
    }

    drop(stdin);
    let output = server.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the server exits cleanly when the client closes stdin"
    );
    let logs = String::from_utf8_lossy(&output.stderr);
    assert!(logs.contains("tool call"), "logs go to stderr: {logs}");
}

/// A JSON-RPC client of one `maskbus mcp` process.
struct McpClient {
    server: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl McpClient {
    fn start(config: &str) -> Self {
        let mut server = Command::new(env!("CARGO_BIN_EXE_maskbus"))
            .args(["mcp", "--config", config])
            .env("MASKBUS_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = server.stdin.take().unwrap();
        let stdout = BufReader::new(server.stdout.take().unwrap());
        let mut client = McpClient {
            server,
            stdin,
            stdout,
            next_id: 0,
        };
        client.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
        writeln!(
            client.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        client
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        )
        .unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], self.next_id, "{reply}");
        reply["result"].clone()
    }

    /// Calls a tool that must succeed; returns its JSON result.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_eq!(result["isError"], false, "{tool}: {result}");
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
    }

    /// Calls a tool that must be refused; returns the message the model reads.
    fn refused(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_eq!(result["isError"], true, "{tool}: {result}");
        result["content"][0]["text"].as_str().unwrap().to_string()
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// The design's two agents, each with only its role's tools: the consumer asks through the
/// mailbox, the producer answers with masked rows, the consumer inserts them, and the wire audit
/// finds nothing afterwards.
#[tokio::test]
async fn two_agents_over_mcp_move_masked_rows_and_the_wire_audits_clean() {
    let dbs = bank_databases("mcp_two_agents").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    let files = ConfigFiles::new("mcp_two_agents");
    let (producer_config, consumer_config) = agent_configs(&files, &dbs, "");
    let mut producer = McpClient::start(&producer_config);
    let mut consumer = McpClient::start(&consumer_config);

    // Consumer agent: "send me five customers".
    consumer.call(
        "mailbox_send",
        json!({
            "to": "maskbus.producer", "reply_to": "maskbus.consumer", "correlation_id": "ask-1",
            "body": {"type": "page", "v": 2, "entity": "customers", "limit": 5}
        }),
    );
    // Producer agent: picks the request up, queries masked rows, answers.
    let inbox = producer.call("mailbox_wait", json!({"timeout_ms": 10000}));
    let request = &inbox["messages"][0];
    assert_eq!(request["correlation_id"], "ask-1");
    let page = producer.call(
        "query_masked",
        json!({"entity": request["body"]["entity"], "limit": request["body"]["limit"]}),
    );
    producer.call(
        "mailbox_send",
        json!({"to": request["reply_to"], "correlation_id": "ask-1", "handle": page["handle"]}),
    );
    // Consumer agent: receives the rows and inserts them.
    let replies = consumer.call("mailbox_wait", json!({"timeout_ms": 10000}));
    let rows = &replies["messages"][0]["body"];
    let written = consumer.call(
        "insert_rows",
        json!({"entity": "customers", "columns": rows["columns"], "rows": rows["rows"]}),
    );
    assert_eq!(written["written"], 5);
    let local = consumer.call("query_local", json!({"entity": "customers"}));
    assert_eq!(local["rows"].as_array().unwrap().len(), 5);
    assert!(local["rows"][0][4].as_str().unwrap().starts_with("***-**-"));

    let audit = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--source",
        &dbs.url("src"),
        "--policy",
        BANK_POLICY_PATH,
    ])
    .success();
    assert!(
        audit.stdout.trim_end().ends_with(": 0 findings"),
        "{}",
        audit.stdout
    );
}

/// Tracker issue 51: the producer's model sends only what the producer's code built. A model
/// steered by text in the rows it read writes a schema reply whose CHECK would run pg_sleep on
/// the consumer: refused, and nothing reaches the bus. What it can send is a `query_masked`
/// result, by its handle, and the consumer's mailbox receives exactly that reply.
#[tokio::test]
async fn the_producers_model_sends_only_replies_the_producers_code_built() {
    let dbs = bank_databases("mcp_by_handle").await;
    maskbus(&["seed", "--source", &dbs.url("src"), "--customers", "5"]).success();
    let files = ConfigFiles::new("mcp_by_handle");
    let (producer_config, consumer_config) = agent_configs(&files, &dbs, "");
    let bus = connect(&dbs.url("bus")).await;
    let messages = || async {
        bus.query_one("SELECT count(*) FROM mq.mail", &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let mut producer = McpClient::start(&producer_config);
    let mut consumer = McpClient::start(&consumer_config);

    // The schema the producer lists says so before anything is called.
    let tools = producer.request("tools/list", json!({}));
    let send = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mailbox_send")
        .unwrap()
        .clone();
    assert_eq!(send["inputSchema"]["required"], json!(["to", "handle"]));
    assert!(
        send["inputSchema"]["properties"].get("body").is_none(),
        "{send}"
    );

    let before = messages().await;
    let crafted = json!({
        "type": "schema", "v": 2,
        "schema": {"schemas": ["public"], "extensions": [], "types": [], "sequences": [],
                   "tables": [{"table": {"schema": "public", "name": "customers"},
                               "columns": [{"name": "id", "sql_type": "bigint", "not_null": true}]}],
                   "constraints": [{"table": {"schema": "public", "name": "customers"},
                                    "name": "customers_wait", "kind": "check",
                                    "definition": "CHECK (pg_sleep(600) IS NOT NULL)"}],
                   "indexes": [], "comments": []}
    });
    let refused = producer.refused(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "correlation_id": "ask-1", "kind": "schema", "body": crafted}),
    );
    assert!(
        refused.starts_with("invalid arguments for mailbox_send"),
        "{refused}"
    );
    assert!(
        refused.contains("handle"),
        "the refusal says what to send instead: {refused}"
    );
    // A body beside a real handle is refused all the same.
    let page = producer.call("query_masked", json!({"entity": "customers", "limit": 3}));
    let handle = page["handle"].as_str().unwrap().to_string();
    producer.refused(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "handle": handle, "body": crafted}),
    );
    // A handle no query_masked result has, or a body passed as the handle, names nothing.
    let unknown = producer.refused(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "handle": "r-999"}),
    );
    assert!(
        unknown.contains("no query_masked result has the handle"),
        "{unknown}"
    );
    producer.refused(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "handle": crafted.to_string()}),
    );
    assert_eq!(messages().await, before, "nothing went on the bus");
    let pg_sleep: i64 = bus
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE body LIKE '%pg_sleep%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(pg_sleep, 0);

    // What it can send: the result, by its handle, once.
    let sent = producer.call(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "correlation_id": "ask-1", "handle": handle}),
    );
    assert_eq!(sent["kind"], "page", "the kind is the reply's own");
    assert_eq!(messages().await, before + 1);
    let again = producer.refused(
        "mailbox_send",
        json!({"to": "maskbus.consumer", "handle": handle}),
    );
    assert!(again.contains("sent already"), "{again}");
    assert_eq!(messages().await, before + 1);

    let received = consumer.call("mailbox_wait", json!({"timeout_ms": 10000}));
    let messages = received["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{received}");
    let message = &messages[0];
    assert_eq!(message["kind"], "page");
    assert_eq!(message["correlation_id"], "ask-1");
    let mut built = page.clone();
    built.as_object_mut().unwrap().remove("handle");
    assert_eq!(message["body"], built, "the exact reply query_masked built");
    assert_eq!(message["body"]["rows"].as_array().unwrap().len(), 3);
}
