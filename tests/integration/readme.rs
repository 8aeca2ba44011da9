//! The README's "Syncing a database of your own" block, run as written (issue 55): extracted
//! from README.md, only its first line (where the servers are) set to the test cluster, on a
//! shop with an enum type, foreign keys, a CHECK and a table without a key, with the README's
//! least-privilege roles: production's reader, the target role owning an empty test database,
//! and the bus's four. The doc cannot drift from what works.

use crate::support::*;
use maskbus_pg::testing::cluster_url;

/// The README's block: the first ```sh fence after the section's heading.
fn readme_block() -> String {
    let readme = include_str!("../../README.md");
    let section = readme
        .split_once("## Syncing a database of your own")
        .expect("README.md has the section \"Syncing a database of your own\"")
        .1;
    let block = section
        .split_once("```sh\n")
        .expect("the section has a ```sh block")
        .1;
    block
        .split_once("\n```")
        .expect("the block is closed")
        .0
        .to_string()
}

/// The databases and roles the README makes: fixed names, so dropped before and after.
const DATABASES: [&str; 3] = ["maskbus_bus", "shop_test", "mbt_readme_shop"];
const ROLES: [&str; 6] = [
    "maskbus_reader",
    "maskbus_writer",
    "maskbus_producer",
    "maskbus_consumer",
    "maskbus_auditor",
    "maskbus_operator",
];

async fn clean(admin: &str) {
    let client = connect(admin).await;
    for db in DATABASES {
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .await
            .unwrap();
    }
    for role in ROLES {
        client
            .batch_execute(&format!("DROP ROLE IF EXISTS {role}"))
            .await
            .unwrap();
    }
}

const SHOP: &str = "
CREATE TYPE order_status AS ENUM ('new', 'paid', 'shipped');
CREATE TABLE customers (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, full_name text NOT NULL,
                        email text NOT NULL UNIQUE, phone text, birth_date date);
CREATE TABLE addresses (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers,
                        street text NOT NULL, city text NOT NULL,
                        zip text NOT NULL CHECK (zip ~ '^[0-9]{5}$'));
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers,
                     status order_status NOT NULL DEFAULT 'new', total numeric(10,2) NOT NULL,
                     note text);
CREATE TABLE order_events (order_id bigint NOT NULL REFERENCES orders, kind text NOT NULL,
                           at date NOT NULL);
INSERT INTO customers (full_name, email, phone, birth_date)
SELECT (ARRAY['Ada Lovelace','Grace Hopper','Alan Turing','Edsger Dijkstra'])[1 + i % 4] || ' ' || i,
       'customer' || i || '@mail.example', '+1 555 01' || lpad(i::text, 2, '0'),
       date '1960-01-01' + i * 97
  FROM generate_series(1, 60) i;
INSERT INTO addresses (customer_id, street, city, zip)
SELECT i, i || ' Main Street', (ARRAY['Springfield','Riverside','Fairview'])[1 + i % 3],
       lpad((10000 + i * 131)::text, 5, '0')
  FROM generate_series(1, 60) i;
INSERT INTO orders (customer_id, status, total, note)
SELECT 1 + i % 60, (ARRAY['new','paid','shipped'])[1 + i % 3]::order_status, i * 1.5,
       CASE WHEN i % 10 = 0 THEN 'leave at the door' END
  FROM generate_series(1, 200) i;
-- A history without a key: the same event twice is two rows.
INSERT INTO order_events SELECT 1 + i % 200, 'shipped', date '2025-01-01' + i % 30
  FROM generate_series(1, 300) i;
INSERT INTO order_events SELECT * FROM order_events LIMIT 20;
";

#[tokio::test]
async fn the_readme_steps_sync_a_shop_with_least_privilege_roles() {
    let admin = cluster_url();
    let admin = maskbus_pg::testing::url_with_dbname(&admin, "postgres");
    clean(&admin).await;
    connect(&admin)
        .await
        .batch_execute("CREATE DATABASE mbt_readme_shop")
        .await
        .unwrap();
    let shop = maskbus_pg::testing::url_with_dbname(&admin, "mbt_readme_shop");
    connect(&shop).await.batch_execute(SHOP).await.unwrap();

    // Where the servers are: the test cluster's host and administrator, for all three.
    let authority = admin
        .split_once("://")
        .unwrap()
        .1
        .split_once('/')
        .unwrap()
        .0;
    let (user, host) = authority
        .rsplit_once('@')
        .expect("DATABASE_URL names a user");
    let user = user.split(':').next().unwrap();
    let block = readme_block();
    let (first, rest) = block.split_once('\n').unwrap();
    assert_eq!(
        first, "PROD=prod.internal TEST=test.internal BUS=bus.internal ADMIN=admin SHOP=shop",
        "the block's first line says where the servers are"
    );
    let script =
        format!("PROD={host} TEST={host} BUS={host} ADMIN={user} SHOP=mbt_readme_shop\n{rest}\n");

    let dir = ConfigFiles::new("readme");
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_maskbus"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // In a process group of its own, stopped whole at the end: the producer it starts in the
    // background never outlives the test, even when a step fails.
    use std::os::unix::process::CommandExt;
    let child = std::process::Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &script])
        .current_dir(dir.dir())
        .env("PATH", path)
        .env("MASKBUS_LOG", "warn")
        .env_remove("MASKBUS_PSEUDONYM_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = format!("-{}", child.id());
    let output = child.wait_with_output().unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", "--", &group])
        .stderr(std::process::Stdio::null())
        .status();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the README's block failed ({})\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("the target equals the masked source"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.lines().any(|l| l.ends_with(": 0 findings")),
        "{stdout}\n{stderr}"
    );
    // Every table arrived whole, the keyless history's duplicates included, its names masked.
    let test = maskbus_pg::testing::url_with_dbname(&admin, "shop_test");
    for (table, rows) in [
        ("customers", 60i64),
        ("addresses", 60),
        ("orders", 200),
        ("order_events", 320),
    ] {
        let got: i64 = connect(&test)
            .await
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(got, rows, "{table}");
    }
    let kept_names: i64 = connect(&test)
        .await
        .query_one(
            "SELECT count(*) FROM customers WHERE email LIKE 'customer%@mail.example'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept_names, 0, "an email crossed unmasked");
    clean(&admin).await;
}
