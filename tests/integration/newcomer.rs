//! A newcomer's first hour (issue 55): every refusal names what failed and the fix, a failed
//! first run leaves nothing behind, paths in a config are read beside it, and a run cut short
//! says what it wrote.

use crate::support::*;

/// The served schema of these tests: an enum type and a table using it.
const SHOP: &str = "CREATE TYPE public.order_status AS ENUM ('new', 'paid');
    CREATE TABLE public.orders (id bigint PRIMARY KEY, status public.order_status NOT NULL, note text);
    INSERT INTO public.orders SELECT g, 'new', 'note ' || g FROM generate_series(1, 20) g;";

const SHOP_POLICY: &str = "[public.orders]\nid = \"keep\"\nstatus = \"keep\"\nnote = \"redact\"\n";

#[tokio::test]
async fn bus_grant_to_a_role_that_does_not_exist_says_the_bus_refusal_and_how_to_create_it() {
    let dbs = TestDatabases::create("grant_missing", &["bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let role = format!("mbr_never_made_{}", std::process::id());
    let run = maskbus(&[
        "bus",
        "grant",
        "--bus",
        &dbs.url("bus"),
        "--producer",
        &role,
    ]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "refused by the bus: no such role to grant a part of the bus to: {role}; create the role first (CREATE ROLE {role} LOGIN PASSWORD '...'), then grant again"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("PL/pgSQL"), "{}", run.stderr);
}

/// A target role that may create schemas in its database but not objects in `public` (the
/// default from PostgreSQL 15 on for a role that does not own the schema) is told which
/// statement failed and which grant fixes it; the `maskbus` schema its first run made is
/// dropped again, so the run after the grant is a first run like any other.
#[tokio::test]
async fn a_first_run_refused_create_on_public_names_the_statement_and_grant_and_leaves_nothing() {
    let roles = TestRoles::create("no_create", &["target"]).await;
    let dbs = TestDatabases::create("no_create", &["src", "dst", "bus"]).await;
    let role = roles.name("target").to_string();
    connect(&dbs.url("src"))
        .await
        .batch_execute(SHOP)
        .await
        .unwrap();
    let dst_name = dbs
        .names()
        .iter()
        .find(|n| n.ends_with("_dst"))
        .unwrap()
        .clone();
    let dst = connect(&dbs.url("dst")).await;
    dst.batch_execute(&format!(
        "GRANT CREATE ON DATABASE {dst_name} TO {role}; REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
    ))
    .await
    .unwrap();
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("no_create");
    let policy = files.write("policy.toml", SHOP_POLICY);
    let urls = AgentUrls {
        producer_bus: dbs.url("bus"),
        consumer_bus: dbs.url("bus"),
        source: dbs.url("src"),
        target: roles.url_as(&dbs.url("dst"), "target"),
    };
    let (producer, consumer) =
        write_agent_configs(&files, &urls, &format!("policy = \"{policy}\"\n"), "");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("creating the served schema: CREATE TYPE public.order_status (statement"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "permission denied (SQLSTATE 42501): grant CREATE on schema public to {role}, or make it the schema's owner"
        )),
        "{}",
        run.stderr
    );
    let left: Vec<String> = first_column(
        &dst,
        "SELECT nspname::text FROM pg_namespace WHERE nspname = 'maskbus'
         UNION ALL SELECT typname::text FROM pg_type WHERE typname = 'order_status'",
    )
    .await;
    assert!(left.is_empty(), "a failed first run left {left:?} behind");
    // The fix the error gave, and the next run is a first run that works.
    dst.batch_execute(&format!("GRANT CREATE ON SCHEMA public TO {role}"))
        .await
        .unwrap();
    let run = maskbus(&["run", "--config", &consumer, "--once"]).success();
    assert_eq!(run.stdout.trim(), "synced 20 rows", "{}", run.stderr);
}

#[tokio::test]
async fn a_missing_target_database_says_to_create_it_not_to_check_the_server() {
    let dbs = TestDatabases::create("no_target_db", &["bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let files = ConfigFiles::new("no_target_db");
    let missing = maskbus_pg::testing::url_with_dbname(
        &dbs.url("bus"),
        &format!("maskbus_never_made_{}", std::process::id()),
    );
    let consumer = files.write(
        "consumer.toml",
        &format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{missing}\"\n",
            dbs.url("bus")
        ),
    );
    let run = maskbus(&["run", "--config", &consumer, "--once"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("SQLSTATE 3D000"), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "create the database (createdb, or CREATE DATABASE) or correct its name in the URL"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("check that the server is running"),
        "{}",
        run.stderr
    );
}

/// A relative `policy` in a config file is the file beside the config, wherever maskbus is
/// started from; one that is not there is named by its full path.
#[tokio::test]
async fn a_relative_policy_path_is_read_beside_the_config_and_a_missing_one_named_in_full() {
    let files = ConfigFiles::new("relative_policy");
    let producer = files.write(
        "producer.toml",
        &format!(
            "role = \"producer\"\nbus_url = \"postgres://nobody@127.0.0.1:1/bus\"\nsource_url = \"postgres://nobody@127.0.0.1:1/src\"\npseudonym_key = \"{TEST_KEY}\"\npolicy = \"not-written.toml\"\n"
        ),
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_maskbus"))
        .args(["run", "--config", &producer])
        .current_dir("/")
        .env("MASKBUS_LOG", "warn")
        .env_remove("MASKBUS_POLICY")
        .output()
        .unwrap();
    let run = Run::from(output);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let full = files.dir().join("not-written.toml");
    assert!(
        run.stderr
            .contains(&format!("cannot read policy file {}", full.display())),
        "{}",
        run.stderr
    );
}

/// Interrupted with Ctrl-C (SIGINT) while a pass writes, the consumer says how many rows it
/// wrote, not 0: the pages committed before the signal are in the target.
#[tokio::test]
async fn a_pass_cut_short_by_ctrl_c_counts_the_rows_it_wrote() {
    let dbs = seeded("ctrl_c_count", "300").await;
    let files = ConfigFiles::new("ctrl_c_count");
    let (producer, consumer) = agent_configs(&files, &dbs, "page_size = 20\npages_per_request = 1");
    let _producer = Background::spawn(&["run", "--config", &producer]);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_maskbus"));
    command
        .args(["run", "--config", &consumer, "--once"])
        .env("MASKBUS_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("MASKBUS_") && key != "MASKBUS_LOG" {
            command.env_remove(key);
        }
    }
    let child = command.spawn().unwrap();
    let dst = connect(&dbs.url("dst")).await;
    let written = || async {
        dst.query_one(
            "SELECT (SELECT count(*) FROM public.transactions) + (SELECT count(*) FROM public.cards)
                  + (SELECT count(*) FROM public.addresses) + (SELECT count(*) FROM public.accounts)
                  + (SELECT count(*) FROM public.customers)",
            &[],
        )
        .await
        .unwrap()
        .get::<_, i64>(0)
    };
    // One table at a time while the consumer writes (its bulk load locks tables whole).
    wait_until("some rows in the target", || async {
        dst.query_one("SELECT count(*) FROM public.transactions", &[])
            .await
            .map_or(0, |r| r.get::<_, i64>(0))
            > 100
    })
    .await;
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let run = Run::from(child.wait_with_output().unwrap());
    let in_target = written().await as u64;
    let said: u64 = run
        .stdout
        .trim()
        .strip_prefix("synced ")
        .and_then(|s| s.strip_suffix(" rows"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count: {}\n{}", run.stdout, run.stderr));
    assert!(
        run.stderr.contains("stopped by a signal"),
        "the pass was cut short: {}",
        run.stderr
    );
    assert!(
        said > 0 && said <= in_target,
        "said {said} rows, the target holds {in_target}\n{}",
        run.stderr
    );
}

/// `maskbus bus --bus URL stats` reads the bus named on the command line, even with
/// MASKBUS_BUS_URL set to another (clap's global argument with an environment default let the
/// variable win when `--bus` came before the subcommand).
#[tokio::test]
async fn a_bus_given_before_the_subcommand_wins_over_the_environment() {
    let dbs = TestDatabases::create("bus_flag_first", &["bus"]).await;
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let elsewhere = maskbus_pg::testing::url_with_dbname(&dbs.url("bus"), "mbt_no_such_bus_db");
    for args in [
        vec!["bus", "--bus", dbs.url("bus").as_str(), "stats"],
        vec!["bus", "stats", "--bus", dbs.url("bus").as_str()],
    ] {
        let run = maskbus_with_env(&args, &[("MASKBUS_BUS_URL", elsewhere.as_str())]);
        assert_eq!(run.code, 0, "{args:?}\n{}\n{}", run.stdout, run.stderr);
    }
    // Without --bus, the variable is read.
    let bus = dbs.url("bus");
    let run = maskbus_with_env(&["bus", "stats"], &[("MASKBUS_BUS_URL", bus.as_str())]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
}
