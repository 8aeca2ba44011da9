//! scripts/dev-db: the parts that can be checked without touching the running cluster.

use std::process::Command;

fn dev_db() -> Command {
    Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/dev-db"))
}

#[test]
fn names_the_package_to_install_when_no_server_binaries_exist() {
    let empty = std::env::temp_dir().join(format!("maskbus-no-pg-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let output = dev_db()
        .env_remove("DATABASE_URL")
        .env("MASKBUS_PG_BINDIR", &empty)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&empty).ok();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("apt-get install postgresql-15"), "{stderr}");
}

#[test]
fn with_database_url_it_checks_that_server_and_prints_its_url() {
    let url = maskbus_pg::testing::cluster_url();
    let output = dev_db().env("DATABASE_URL", &url).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().last(), Some(url.as_str()));
}

#[test]
fn with_an_unreachable_database_url_it_fails() {
    let output = dev_db()
        .env("DATABASE_URL", "postgres://postgres@127.0.0.1:1/postgres")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot reach"));
}
