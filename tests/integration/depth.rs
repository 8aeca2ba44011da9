//! Masking in depth (issue 28), end to end: a UNIQUE SSN column masked by a pseudonym keeps
//! its values distinct, array elements and JSON keys are masked, and the wire audit, holding the
//! pseudonym key, tells the fakes (shaped like real SSNs) from real values: no finding.

use crate::support::*;
use std::collections::{HashMap, HashSet};

const ROWS: i64 = 100_000;

const SCHEMA: &str = "
    CREATE TABLE people (
        id bigint PRIMARY KEY,
        ssn text NOT NULL UNIQUE,
        tags text[],
        doc jsonb,
        notes text
    );
    INSERT INTO people
    SELECT i,
           -- 100,000 distinct SSNs that could have been issued: areas 101 to 111, group 45.
           lpad((101 + i / 9999)::text, 3, '0') || '-45-' || lpad((1 + i % 9999)::text, 4, '0'),
           CASE WHEN i % 100 = 0
                THEN ARRAY['vip', lpad((101 + i / 9999)::text, 3, '0') || ' 45 ' || lpad((1 + i % 9999)::text, 4, '0'),
                           'dave' || i || '.smith@yahoo.com', NULL]
           END,
           CASE WHEN i % 100 = 0
                THEN jsonb_build_object('tier', 'gold', '224-30-' || lpad((i % 10000)::text, 4, '0'), true,
                                        'meta.source', 'SSN 224' || chr(10) || '30' || chr(10) || '8280', 'big', 12345678901234567890123::numeric)
           END,
           CASE WHEN i % 100 = 0 THEN 'called 224 -- 30 -- 8280, mail dave.smith＠yahoo.com' END
      FROM generate_series(0, 99999) i;";

const POLICY: &str = r#"
[people]
id = "keep"
ssn = { pseudonym = "ssn" }
tags = "scrub"
doc = { json = { "$.tier" = "keep", "$.meta.source" = "keep", "$.big" = "keep" } }
notes = "scrub"
"#;

#[tokio::test]
async fn a_unique_ssn_column_syncs_under_a_pseudonym_with_as_many_fakes_and_audits_clean() {
    let synced = Synced::start("depth_unique", SCHEMA, POLICY).await;
    let (dbs, policy, producer) = (&synced.dbs, &synced.policy, &synced.producer);
    maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        policy,
    ])
    .success();
    synced.sync().success();

    let rows = |url: String| async move {
        connect(&url)
            .await
            .query(
                "SELECT id, ssn, tags::text, doc::text, notes FROM people ORDER BY id",
                &[],
            )
            .await
            .unwrap()
    };
    let (real, masked) = (rows(dbs.url("src")).await, rows(dbs.url("dst")).await);
    assert_eq!(masked.len() as i64, ROWS);
    let real_ssns: HashMap<i64, String> = real.iter().map(|r| (r.get(0), r.get(1))).collect();
    let fakes: HashSet<String> = masked.iter().map(|r| r.get::<_, String>(1)).collect();
    assert_eq!(
        fakes.len() as i64,
        ROWS,
        "100,000 SSNs, 100,000 distinct fakes"
    );
    for row in &masked {
        let (id, fake): (i64, String) = (row.get(0), row.get(1));
        assert_ne!(real_ssns[&id], fake, "row {id} kept its SSN");
        assert!(
            maskbus_pii::is_issuable_ssn_text(&fake),
            "{fake}: SSN-shaped and valid"
        );
    }
    let sample = masked.iter().find(|r| r.get::<_, i64>(0) == 500).unwrap();
    let tags: String = sample.get(2);
    assert!(
        tags == "{vip,\"### ## ####\",d***@yahoo.com,NULL}",
        "each element scrubbed: {tags}"
    );
    let doc: serde_json::Value = serde_json::from_str(&sample.get::<_, String>(3)).unwrap();
    assert_eq!(doc["tier"], "gold");
    assert_eq!(
        doc["meta.source"], "SSN ###\n##\n####",
        "a member named meta.source is not the path $.meta.source"
    );
    assert!(
        doc.get("###-##-####").is_some(),
        "the key holding an SSN is masked: {doc}"
    );
    assert!(
        sample
            .get::<_, String>(3)
            .contains("12345678901234567890123"),
        "a kept number keeps its digits"
    );
    assert_eq!(
        sample.get::<_, String>(4),
        "called ### -- ## -- ####, mail d***＠yahoo.com"
    );
    // The fakes look like real SSNs; the audit holds the key (the producer's config) and
    // tells them apart: no finding.
    crate::zoo::assert_audit_clean(dbs, producer);
    // Without the key the fakes cannot be told from real SSNs, and the audit says so.
    let keyless = maskbus(&[
        "wire-audit",
        "--bus",
        &dbs.url("bus"),
        "--source",
        &dbs.url("src"),
        "--policy",
        policy,
    ]);
    assert_ne!(keyless.code, 0, "{}", keyless.stderr);
    assert!(
        keyless
            .stderr
            .contains("only the pseudonym key tells them apart"),
        "{}",
        keyless.stderr
    );
}

/// A SaaS-shaped schema with what the held-out one had: live secrets (some UNIQUE, one with a
/// name that says nothing), tax ids, device fingerprints, an array of emails, IP addresses,
/// names in CamelCase, migration versions that pass Luhn, and names of things.
const SAAS: &str = r#"
    CREATE TYPE plan AS ENUM ('free', 'pro');
    CREATE TABLE schema_migrations (version varchar PRIMARY KEY);
    INSERT INTO schema_migrations
    SELECT to_char(timestamp '2019-03-01' + i * interval '7 hours 13 minutes 11 seconds', 'YYYYMMDDHH24MISS')
      FROM generate_series(1, 300) i;
    CREATE TABLE users (
        id bigserial PRIMARY KEY,
        email text NOT NULL UNIQUE,
        username text UNIQUE,
        "FirstName" text,
        "LastName" text,
        tax_id text,
        last_sign_in_ip inet,
        device_fingerprint text,
        recovery_emails text[],
        plan plan NOT NULL DEFAULT 'free',
        bio text
    );
    INSERT INTO users (email, username, "FirstName", "LastName", tax_id, last_sign_in_ip,
                       device_fingerprint, recovery_emails, bio)
    SELECT 'user' || i || '@mail.example.net', lower(f) || '.' || lower(l) || i, f, l,
           lpad((10000000 + i * 7919)::text, 9, '0'), ('10.1.' || (i % 250) || '.' || (i % 200))::inet,
           md5('device' || i), ARRAY['alt' || i || '@yahoo.com', 'x' || i || '@gmail.com'],
           f || ' joined in ' || (2010 + i % 10)
      FROM generate_series(1, 200) i,
           LATERAL (SELECT (ARRAY['Sina','Dave','Maria','Chen'])[1 + i % 4] AS f,
                           (ARRAY['Corkery','Smith','Lopez','Wang'])[1 + i % 4] AS l) n;
    CREATE TABLE api_keys (
        id bigserial PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users,
        value text NOT NULL UNIQUE,
        hmac_key text NOT NULL
    );
    INSERT INTO api_keys (user_id, value, hmac_key)
    SELECT i, 'sk_live_' || md5('k' || i) || upper(substr(md5('u' || i), 1, 8)), md5('h' || i)
      FROM generate_series(1, 200) i;
    CREATE TABLE invites (id bigserial PRIMARY KEY, token text NOT NULL UNIQUE, email text);
    INSERT INTO invites (token, email)
    SELECT md5('invite' || i), 'guest' || i || '@yahoo.com' FROM generate_series(1, 50) i;
    CREATE TABLE password_resets (id bigserial PRIMARY KEY, token text NOT NULL UNIQUE, created_at timestamptz);
    INSERT INTO password_resets (token, created_at)
    SELECT md5('reset' || i), now() FROM generate_series(1, 50) i;
    CREATE TYPE badge AS ENUM ('224-30-8280', 'dave.smith@yahoo.com', 'gold');
    CREATE TABLE badges (id serial PRIMARY KEY, label badge NOT NULL, tags text[] NOT NULL);
    INSERT INTO badges (label, tags)
    SELECT (ARRAY['224-30-8280', 'dave.smith@yahoo.com', 'gold'])[1 + i % 3]::badge,
           ARRAY['vip', 'x' || i || '.y@yahoo.com']
      FROM generate_series(1, 30) i;
    CREATE TABLE genres (id serial PRIMARY KEY, name text NOT NULL);
    INSERT INTO genres (name) VALUES ('Rock'), ('Jazz'), ('Metal'), ('Blues');
    CREATE TABLE tracks (id serial PRIMARY KEY, name text NOT NULL, genre_id int REFERENCES genres, bytes integer, milliseconds integer);
    INSERT INTO tracks (name, genre_id, bytes, milliseconds)
    SELECT 'Song ' || i, 1 + i % 4, 200000000 + i * 104729, 180000 + i FROM generate_series(1, 300) i;
"#;

#[tokio::test]
async fn policy_init_masks_the_secrets_and_people_of_a_saas_schema_and_its_output_passes_check() {
    let test = "depth_saas";
    let dbs = TestDatabases::create(test, &["src", "dst", "bus"]).await;
    connect(&dbs.url("src"))
        .await
        .batch_execute(SAAS)
        .await
        .unwrap();
    let files = ConfigFiles::new(test);
    let policy_path = files.write("policy.toml", "");
    maskbus(&[
        "policy",
        "init",
        "--source",
        &dbs.url("src"),
        "--output",
        &policy_path,
    ])
    .success();
    let text = std::fs::read_to_string(&policy_path).unwrap();
    let policy = maskbus_mask::Policy::from_toml("init", &text).unwrap();
    let rule = |table: &str, column: &str| {
        policy
            .entity(table)
            .and_then(|e| e.rule(column))
            .map(|r| r.name())
            .unwrap_or_else(|| panic!("no rule for {table}.{column}:\n{text}"))
    };
    for (table, column) in [
        ("users", "email"),
        ("users", "username"),
        ("users", "FirstName"),
        ("users", "LastName"),
        ("users", "tax_id"),
        ("users", "last_sign_in_ip"),
        ("users", "device_fingerprint"),
        ("users", "recovery_emails"),
        ("users", "bio"),
        ("api_keys", "value"),
        ("api_keys", "hmac_key"),
        ("invites", "token"),
        ("invites", "email"),
        ("password_resets", "token"),
    ] {
        assert_ne!(rule(table, column), "keep", "{table}.{column}\n{text}");
    }
    assert_eq!(
        rule("invites", "token"),
        "pseudonym token",
        "UNIQUE: a unique fake"
    );
    assert_eq!(rule("users", "LastName"), "pseudonym last_name");
    for (table, column) in [
        ("genres", "name"),
        ("tracks", "name"),
        ("tracks", "bytes"),
        ("schema_migrations", "version"),
    ] {
        assert_eq!(rule(table, column), "keep", "{table}.{column}\n{text}");
    }
    // Its output passes policy check as it is.
    let check = maskbus(&[
        "policy",
        "check",
        "--source",
        &dbs.url("src"),
        "--policy",
        &policy_path,
    ]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    // And it syncs, and the wire audit finds nothing on the bus (9-digit byte counts, migration
    // versions and fake tokens included).
    maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
    let (producer, consumer) = write_agent_configs(
        &files,
        &crate::zoo::zoo_urls(&dbs),
        &format!("policy = \"{policy_path}\"\n"),
        "",
    );
    let _producer = Background::spawn(&["run", "--config", &producer]);
    maskbus(&["run", "--config", &consumer, "--once"]).success();
    crate::zoo::assert_audit_clean(&dbs, &producer);
}

#[tokio::test]
async fn the_audit_judges_on_its_own_and_catches_what_a_wrong_policy_keeps_unless_reviewed() {
    // A policy that wrongly keeps the postal codes.
    let synced = Synced::start(
        "depth_judge",
        "CREATE TABLE customers (id int PRIMARY KEY, first_name text, last_name text,
                                     postal_code text, notes text);
             INSERT INTO customers
             SELECT i, (ARRAY['Nancy','Andrew','Janet','Margaret'])[1 + i % 4],
                    (ARRAY['Davolio','Fuller','Leverling','Peacock'])[1 + i % 4] || i,
                    'SW1A ' || i || 'AA',
                    'Joined in 2019 and likes tea'
               FROM generate_series(1, 40) i;",
        "[customers]\nid = \"keep\"\nfirst_name = { pseudonym = \"first_name\" }\nlast_name = \"first_letter\"\npostal_code = \"keep\"\nnotes = \"keep\"\n",
    )
    .await;
    synced.sync().success();
    let (files, producer) = (&synced.files, &synced.producer);
    let bus = synced.dbs.url("bus");
    let audit = |extra: &[&str]| {
        let mut args = vec!["wire-audit", "--bus", &bus, "--config", producer];
        args.extend_from_slice(extra);
        maskbus(&args)
    };
    // Looking only where the producer's policy masks, the kept postal codes are invisible.
    let blind = audit(&["--policy-only"]);
    assert_eq!(blind.code, 0, "{}\n{}", blind.stdout, blind.stderr);
    // Reviewed by an auditor, each with a reason: not read.
    let reviewed = files.write(
        "reviewed.toml",
        "[columns]\n\"public.customers.postal_code\" = \"test postcodes of our own office\"\n\"customers.notes\" = \"one sentence, the same for every row\"\n",
    );
    let passed = audit(&["--reviewed", &reviewed]);
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);
    // The audit's own judgement (policy init's reading of the source) holds them personal,
    // loads their real values and finds them on the bus.
    let judged = audit(&[]);
    assert_ne!(judged.code, 0, "{}\n{}", judged.stdout, judged.stderr);
    assert!(
        judged.stderr.contains("public.customers.postal_code"),
        "{}",
        judged.stderr
    );
    assert!(judged.stdout.contains("source_value"), "{}", judged.stdout);
    // A reviewed file without reasons is refused by name.
    let bad = files.write("bad.toml", "[columns]\n\"customers.notes\" = \"\"\n");
    let refused = audit(&["--reviewed", &bad]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("needs a reason"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn a_table_that_does_not_fit_the_policy_is_refused_by_name_and_never_served() {
    // scrub on a UNIQUE column (lossy) and on an integer: policy check refuses u, fine fits.
    let synced = Synced::start(
        "depth_unfit",
        "CREATE TABLE u (id int PRIMARY KEY, s text UNIQUE, n int);
         INSERT INTO u SELECT i, 'value ' || i, i FROM generate_series(1, 50) i;
         CREATE TABLE fine (id int PRIMARY KEY, note text);
         INSERT INTO fine VALUES (1, 'ok');",
        "[u]\nid = \"keep\"\ns = \"scrub\"\nn = \"scrub\"\n[fine]\nid = \"keep\"\nnote = \"keep\"\n",
    )
    .await;
    let dbs = &synced.dbs;
    let run = synced.sync();
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("public.u"), "{}", run.stderr);
    let pages_of_u: i64 = connect(&dbs.url("bus"))
        .await
        .query_one(
            "SELECT count(*) FROM mq.mail WHERE body::jsonb ? 'rows' AND body::jsonb->>'entity' IN ('u', 'public.u')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(pages_of_u, 0, "no page of the unfit table crossed the bus");
    let fine: i64 = connect(&dbs.url("dst"))
        .await
        .query_one("SELECT count(*) FROM fine", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(fine, 1, "the table that fits is served");
}
