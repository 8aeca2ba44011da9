//! Rules that fit the values (issue 54, item 2): `policy check` runs a spread sample of each
//! masked column through its rule and refuses a rule whose output still holds the input, naming
//! a rule that fits; `{ pseudonym = "alnum" }` hides a key of letters and digits (a person's
//! initials, digits, gender) with a keyed bijection, so the sync still pages and links by it.

use crate::support::*;

/// People keyed by an id of initials, digits and a gender letter (`PTC11962M`), and their cards
/// with an expiry (`2012/06`) that is no card number, in a column wide enough for what the card
/// rule writes (so only the values tell).
const SCHEMA: &str = r"
    CREATE TABLE people (
        person_id varchar(9) PRIMARY KEY,
        n integer NOT NULL UNIQUE
    );
    INSERT INTO people
    SELECT chr(65 + i % 26) || chr(65 + (i * 7) % 26) || chr(65 + (i * 11 + 3) % 26)
           || lpad((i * 3701 % 100000)::text, 5, '0')
           || CASE WHEN i % 2 = 0 THEN 'M' ELSE 'F' END,
           i
      FROM generate_series(1, 43) i;
    CREATE TABLE cards (
        id integer PRIMARY KEY,
        person_id varchar(9) NOT NULL REFERENCES people,
        card_expiry text NOT NULL
    );
    INSERT INTO cards
    SELECT p.n, p.person_id, to_char(date '2010-01-01' + p.n * 47, 'YYYY/MM')
      FROM people p;
";

/// Each person's `n` and id, by `n`.
async fn people(url: &str) -> Vec<(i32, String)> {
    connect(url)
        .await
        .query("SELECT n, person_id FROM people ORDER BY n", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get::<_, i32>(0), r.get::<_, String>(1)))
        .collect()
}

fn policy(id_rule: &str, expiry_rule: &str) -> String {
    format!(
        "[people]\nperson_id = {id_rule}\nn = \"keep\"\n\n[cards]\nid = \"keep\"\nperson_id = {id_rule}\ncard_expiry = {expiry_rule}\n"
    )
}

const ALNUM: &str = "{ pseudonym = \"alnum\" }";
const DIGITS: &str = "{ pseudonym = \"digits\" }";

fn check(files: &ConfigFiles, dbs: &TestDatabases, name: &str, policy: &str) -> Run {
    let path = files.write(name, policy);
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &path,
    ])
}

/// The lines of a check's report that name `column`.
fn lines_naming(run: &Run, column: &str) -> String {
    format!("{}\n{}", run.stdout, run.stderr)
        .lines()
        .filter(|l| l.contains(column))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_card_rule_on_a_card_expiry_is_refused_with_a_rule_that_fits_and_no_value() {
    let dbs = TestDatabases::create("rule_fit_card", &["src"]).await;
    let src = connect(&dbs.url("src")).await;
    src.batch_execute(SCHEMA).await.unwrap();
    let files = ConfigFiles::new("rule_fit_card");
    let run = check(&files, &dbs, "card.toml", &policy(ALNUM, "\"card\""));
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let said = lines_naming(&run, "card_expiry");
    assert!(said.contains("cards"), "{}\n{}", run.stdout, run.stderr);
    assert!(said.contains("card"), "{said}");
    assert!(said.contains("not card numbers"), "{said}");
    assert!(said.contains("use { pseudonym = \"digits\" }"), "{said}");
    let expiries: Vec<String> = first_column(&src, "SELECT card_expiry FROM cards").await;
    for value in expiries {
        assert!(
            !run.stdout.contains(&value) && !run.stderr.contains(&value),
            "the report holds a value"
        );
    }
    // The rule it names fits: the check passes.
    let fixed = check(&files, &dbs, "fixed.toml", &policy(ALNUM, DIGITS));
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
}

#[tokio::test]
async fn a_key_of_initials_is_refused_under_digits_and_hidden_by_alnum() {
    let synced = Synced::start("rule_fit_alnum", SCHEMA, &policy(ALNUM, DIGITS)).await;
    let dbs = &synced.dbs;
    // The digit pseudonym keeps the initials: refused, naming alnum.
    let digits = check(&synced.files, dbs, "digits.toml", &policy(DIGITS, DIGITS));
    assert_ne!(digits.code, 0, "{}\n{}", digits.stdout, digits.stderr);
    let said = lines_naming(&digits, "person_id");
    assert!(
        said.contains("people") && said.contains("pseudonym digits"),
        "{said}"
    );
    assert!(
        said.contains("hold letters") && said.contains("alnum"),
        "{said}"
    );
    let src = connect(&dbs.url("src")).await;
    let ids: Vec<String> = first_column(&src, "SELECT person_id FROM people").await;
    for id in &ids {
        assert!(
            !digits.stdout.contains(id.as_str()),
            "the report holds a value"
        );
    }
    // alnum: accepted, synced, and no id keeps its initials.
    let run = check(&synced.files, dbs, "alnum.toml", &policy(ALNUM, DIGITS));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    synced.sync().success();
    let dst = connect(&dbs.url("dst")).await;
    let real = people(&dbs.url("src")).await;
    let fake = people(&dbs.url("dst")).await;
    assert_eq!(real.len(), 43);
    assert_eq!(fake.len(), 43, "every person synced");
    let mut same_letters = 0;
    for ((n, real), (m, fake)) in real.iter().zip(&fake) {
        assert_eq!(n, m);
        assert_eq!(fake.len(), 9);
        let shape = |id: &str| {
            id.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        'A'
                    } else if c.is_ascii_digit() {
                        '0'
                    } else {
                        c
                    }
                })
                .collect::<String>()
        };
        assert_eq!(
            shape(fake),
            "AAA00000A",
            "letters stay letters, digits digits"
        );
        assert_ne!(
            &fake[..3],
            &real[..3],
            "the initials of person {n} survived"
        );
        same_letters += real[..3]
            .chars()
            .zip(fake[..3].chars())
            .filter(|(a, b)| a == b)
            .count();
    }
    // By chance, one letter in 26 meets its real one; the initials were kept for none.
    assert!(
        same_letters <= 20,
        "{same_letters} of 129 initials in place"
    );
    let real_ids: std::collections::HashSet<&str> =
        real.iter().map(|(_, id)| id.as_str()).collect();
    assert!(fake.iter().all(|(_, id)| !real_ids.contains(id.as_str())));
    // The foreign keys followed: every card points at a synced person.
    let linked: Vec<i64> = first_column(
        &dst,
        "SELECT count(*) FROM cards c JOIN people p ON p.person_id = c.person_id AND p.n = c.id",
    )
    .await;
    assert_eq!(linked, [43]);
}
