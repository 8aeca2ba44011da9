//! Operational edges: a target that is not maskbus', a server that never answers, a signal
//! while a reply is awaited, a policy that does not fit the producer's source.

use crate::support::*;

#[tokio::test]
async fn a_consumer_pointed_at_a_database_with_data_refuses_it_by_name() {
    let dbs = seeded("guard", "5").await;
    let files = ConfigFiles::new("guard");
    // The consumer's target_url names production, by a typo.
    let wrong = files.write(
        "wrong.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\n{SUPERUSER_TARGET}",
            dbs.url("bus"),
            dbs.url("src")
        ),
    );
    let run = maskbus(&["run", "--config", &wrong, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let src_name = dbs.names().iter().find(|n| n.ends_with("_src")).unwrap();
    assert!(
        run.stderr
            .contains(&format!("the target database {src_name} holds data")),
        "{}",
        run.stderr
    );
    let src = connect(&dbs.url("src")).await;
    let marked: bool = src
        .query_one("SELECT to_regclass('maskbus.sync_state') IS NOT NULL", &[])
        .await
        .unwrap()
        .get(0);
    assert!(!marked, "nothing was written into the refused database");

    // A test database that already holds rows is taken only when asked by name.
    maskbus(&["seed", "--source", &dbs.url("dst"), "--customers", "2"]).success();
    let (producer, consumer) = agent_configs(&files, &dbs, "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--init-target"), "{}", run.stderr);
    maskbus(&["run", "--config", &consumer, "--once", "--init-target"]).success();
    assert_target_is_masked_source(&dbs).await;
    // Marked now: later runs need no flag.
    maskbus(&["run", "--config", &consumer, "--once"]).success();
}

#[tokio::test]
async fn a_server_that_never_answers_is_an_error_not_a_hang() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts every connection and never says a word.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let url = format!("postgres://maskbus@127.0.0.1:{port}/bus?connect_timeout=1");
    let run = maskbus(&["bus", "stats", "--bus", &url]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no answer to the connection handshake"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn sigterm_while_waiting_for_a_reply_stops_the_consumer_cleanly() {
    let dbs = seeded("sigwait", "2").await;
    let files = ConfigFiles::new("sigwait");
    // No producer runs: the consumer's first request waits for a reply that never comes.
    let (_, consumer) = agent_configs(&files, &dbs, "request_timeout = \"10m\"");
    let waiting = Background::spawn(&["run", "--config", &consumer, "--once"]);
    let bus = connect(&dbs.url("bus")).await;
    wait_until("the consumer's request to be on the bus", || async {
        let n: i64 = bus
            .query_one(
                "SELECT count(*) FROM mq.messages WHERE mailbox = 'maskbus.producer'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        n > 0
    })
    .await;
    // Stopped cleanly, and not reported as a finished sync.
    assert_eq!(waiting.terminate(), Some(2));
}

#[tokio::test]
async fn the_producer_refuses_to_start_on_a_policy_that_does_not_fit() {
    let dbs = seeded("unfit", "1").await;
    let files = ConfigFiles::new("unfit");
    let policy = files.write(
        "policy.toml",
        "[customers]\nid = \"keep\"\nfirst_name = \"redact\"\n",
    );
    let producer = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{policy}\"\n",
            dbs.url("bus"),
            dbs.url("src")
        ),
    );
    let run = maskbus(&["run", "--config", &producer]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("does not fit the source"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("public.customers.ssn"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn bus_send_takes_a_large_body_from_a_file_or_standard_input() {
    let dbs = TestDatabases::create("bodyfile", &["bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("bodyfile");
    let big = serde_json::json!({ "note": "n".repeat(512 * 1024) }).to_string();
    let path = files.write("body.json", &big);
    maskbus(&[
        "bus",
        "send",
        "--bus",
        &dbs.url("bus"),
        "--to",
        "inbox",
        "--body-file",
        &path,
    ])
    .success();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args([
            "bus",
            "send",
            "--bus",
            &dbs.url("bus"),
            "--to",
            "inbox",
            "--body-file",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), big.as_bytes()).unwrap();
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let sizes: Vec<i32> = first_column(
        &connect(&dbs.url("bus")).await,
        "SELECT octet_length(body::text) FROM mq.messages ORDER BY id",
    )
    .await;
    assert_eq!(sizes.len(), 2);
    assert!(sizes.iter().all(|n| *n > 512 * 1024), "{sizes:?}");
}

#[tokio::test]
async fn disable_triggers_keeps_the_targets_triggers_off_the_synced_rows() {
    let dbs = seeded("triggers", "5").await;
    // A trigger of the test database's own that rewrites every row it sees.
    connect(&dbs.url("dst"))
        .await
        .batch_execute(
            "CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS
                 $$ BEGIN NEW.last_name := 'STAMPED'; RETURN NEW; END $$;
             CREATE TRIGGER stamp BEFORE INSERT OR UPDATE ON customers
                 FOR EACH ROW EXECUTE FUNCTION stamp();",
        )
        .await
        .unwrap();
    let files = ConfigFiles::new("triggers");
    let (producer, consumer) = agent_configs(
        &files,
        &dbs,
        &format!("{SUPERUSER_TARGET}disable_triggers = true"),
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_target_is_masked_source(&dbs).await;
    // Without the setting the trigger would have fired: it still works for the target's own rows.
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute("UPDATE customers SET email = email WHERE id = 1")
        .await
        .unwrap();
    let stamped: String = dst
        .query_one("SELECT last_name FROM customers WHERE id = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(stamped, "STAMPED");
}

#[tokio::test]
async fn a_closed_pipe_ends_a_command_quietly() {
    let dbs = seeded("pipe", "5").await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args([
            "db",
            "status",
            "--source",
            &dbs.url("src"),
            "--target",
            &dbs.url("dst"),
            "--policy",
            BANK_POLICY_PATH,
        ])
        .env("MASKBUS_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -0`: the reader goes away before the first line is written.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `scripts/sync` as CI runs it, with the environment the README recommends.
fn scripts_sync(producer: &str, consumer: &str, env: &[(&str, &str)]) -> Run {
    scripts_sync_with(producer, consumer, &[], env)
}

/// `scripts/sync PRODUCER CONSUMER FLAG...`: the flags go to the consumer.
fn scripts_sync_with(producer: &str, consumer: &str, flags: &[&str], env: &[(&str, &str)]) -> Run {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/sync");
    let mut command = std::process::Command::new(script);
    command.args([producer, consumer]).args(flags);
    for (key, _) in std::env::vars() {
        if key.starts_with("MASKBUS_") {
            command.env_remove(key);
        }
    }
    command
        .env("MASKBUS_BIN", env!("CARGO_BIN_EXE_maskbus"))
        .env("MASKBUS_LOG", "warn")
        .envs(env.iter().copied());
    command.output().expect("run scripts/sync").into()
}

#[tokio::test]
async fn scripts_sync_keeps_each_agents_secrets_to_it_and_says_at_once_when_the_producer_dies() {
    let dbs = seeded("sync_script", "5").await;
    let files = ConfigFiles::new("sync_script");
    // The key in the environment, as the README recommends: only the producer may see it.
    let producer = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{BANK_POLICY_PATH}\"\n",
            dbs.url("bus"),
            dbs.url("src")
        ),
    );
    let consumer = files.write(
        "consumer.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nrequest_timeout = \"60s\"\n",
            dbs.url("bus"),
            writer_url(&dbs.url("dst"))
        ),
    );
    let run = scripts_sync(&producer, &consumer, &[("MASKBUS_PSEUDONYM_KEY", TEST_KEY)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("scripts/sync: using"), "{}", run.stderr);
    assert_target_is_masked_source(&dbs).await;
    // Flags after the configs go to the consumer: `--verify` compares the target after the sync
    // and prints its table.
    let run = scripts_sync_with(
        &producer,
        &consumer,
        &["--verify"],
        &[("MASKBUS_PSEUDONYM_KEY", TEST_KEY)],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("missing") && run.stdout.contains("different"),
        "{}",
        run.stdout
    );
    // A producer that cannot start: said at once, with its exit code, not after timeouts.
    let unfit = files.write(
        "unfit.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"/nonexistent/policy.toml\"\n",
            dbs.url("bus"),
            dbs.url("src")
        ),
    );
    let run = scripts_sync(&unfit, &consumer, &[("MASKBUS_PSEUDONYM_KEY", TEST_KEY)]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("the producer exited"), "{}", run.stderr);
}
