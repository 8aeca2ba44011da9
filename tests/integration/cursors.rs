//! Key cursors are the producer's own (issue 52, item 3): a consumer may send back as `after`
//! or `through` only a cursor the producer issued, authenticated by a tag keyed from the
//! pseudonym key. Before, the producer undid any fake it was sent, so a forged cursor was an
//! oracle: sending every fake of a 3-digit masked key as `after`, and seeing which row came
//! next, recovered every real key exactly.

use crate::support::*;
use maskbus_producer::Producer;
use maskbus_protocol::Request;
use serde_json::{json, Value};
use std::collections::HashMap;

/// A sparse 3-digit key masked by a bijection (fakes are 3-digit strings too), and nothing
/// else in the rows that would tell the real key.
const SCHEMA: &str = "
    CREATE TABLE accounts (id integer PRIMARY KEY, tier integer NOT NULL);
    INSERT INTO accounts SELECT i, i % 3 FROM generate_series(100, 999) i WHERE (i * 37) % 11 < 3;
    CREATE TABLE branches (code integer PRIMARY KEY, tier integer NOT NULL);
    INSERT INTO branches SELECT i, i % 3 FROM generate_series(1, 50) i;
    ANALYZE accounts;
    ANALYZE branches;";

const POLICY: &str = r#"
[accounts]
id = { pseudonym = "digits" }
tier = "keep"

[branches]
code = "keep"
tier = "keep"
"#;

/// A producer in this process on a source made by [`SCHEMA`], answering as it answers a tool
/// call (the request checked as one from the bus is, then answered).
struct Served {
    dbs: TestDatabases,
    _files: ConfigFiles,
    /// The producer's config file.
    config: String,
    producer: Producer,
}

impl Served {
    async fn start(test: &str) -> Self {
        let dbs = TestDatabases::create(test, &["src", "bus"]).await;
        connect(&dbs.url("src"))
            .await
            .batch_execute(SCHEMA)
            .await
            .unwrap();
        maskbus(&["bus", "init", "--bus", &dbs.url("bus")]).success();
        let files = ConfigFiles::new(test);
        let policy = files.write("policy.toml", POLICY);
        let urls = AgentUrls {
            producer_bus: dbs.url("bus"),
            consumer_bus: dbs.url("bus"),
            source: dbs.url("src"),
            target: dbs.url("bus"),
        };
        let (producer, _) =
            write_agent_configs(&files, &urls, &format!("policy = \"{policy}\"\n"), "");
        let started = producer_of(&producer).await;
        Served {
            dbs,
            _files: files,
            config: producer,
            producer: started,
        }
    }

    async fn ask(&self, body: Value) -> Vec<Value> {
        ask(&self.producer, body).await
    }

    async fn all_pages(&self, entity: &str, limit: u32) -> Vec<Value> {
        all_pages(&self.producer, entity, limit).await
    }

    /// The real keys of `accounts`, in key order.
    async fn real_keys(&self) -> Vec<i64> {
        first_column::<i32>(
            &connect(&self.dbs.url("src")).await,
            "SELECT id FROM accounts ORDER BY id",
        )
        .await
        .into_iter()
        .map(i64::from)
        .collect()
    }
}

/// A producer in this process, started from the config file `producer`.
async fn producer_of(producer: &str) -> Producer {
    let maskbus_config::AgentConfig::Producer(config) =
        maskbus_config::load(std::path::Path::new(producer)).unwrap()
    else {
        panic!("a producer config")
    };
    Producer::start(&config).await.unwrap()
}

/// The replies to `body` (a request as JSON, parsed as the bus's would be), as JSON.
async fn ask(producer: &Producer, body: Value) -> Vec<Value> {
    let request: Request = match maskbus_protocol::parse_request(&body) {
        Ok(request) => request,
        Err(error) => return vec![json!({"type": "error", "error": error})],
    };
    producer
        .answer(request)
        .await
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect()
}

/// Every row of `entity` in one window, as the producer serves them (in the source's key
/// order): each page's reply, each next one asked after the last with its tag.
async fn all_pages(producer: &Producer, entity: &str, limit: u32) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut request = json!({"type": "page", "v": 2, "entity": entity, "limit": limit});
    loop {
        let reply = ask(producer, request.clone()).await.remove(0);
        assert_eq!(reply["type"], "page", "{reply}");
        let more = reply["more"] == true;
        request["until"] = reply["until"].clone();
        request["after"] = reply["next_after"].clone();
        if let Some(tag) = reply.get("next_after_tag") {
            request["after_tag"] = tag.clone();
        }
        pages.push(reply);
        if !more {
            return pages;
        }
    }
}

/// The masked key of each row of `page`, in order.
fn page_keys(page: &Value) -> Vec<String> {
    let at = page["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "id")
        .unwrap();
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[at].as_str().unwrap().to_string())
        .collect()
}

/// What an attacker holding only the bus learns from forged cursors.
#[derive(Debug, Default)]
struct Attack {
    requests: usize,
    refused: usize,
    /// Real keys told exactly, of the rows the attacker has seen.
    recovered: usize,
}

/// The attack of the issue: every fake a 3-digit key can have (`000` to `999`, whose real
/// values are `000` to `999` again: the bijection keeps the digit count) sent as `after`, in
/// the window of a legitimate read of the table. The first row after each tells in which gap
/// between two served keys the fake's real value falls; counting the fakes per gap gives each
/// gap's width, and so every real key, exactly.
async fn forged_cursor_attack(served: &Served) -> Attack {
    let pages = served.all_pages("public.accounts", 2000).await;
    let order: Vec<String> = pages.iter().flat_map(page_keys).collect();
    let until = pages[0]["until"].clone();
    let mut attack = Attack::default();
    // How many fakes land before each served row (by its masked key).
    let mut before: HashMap<String, i64> = HashMap::new();
    for fake in (0..1000).map(|n| format!("{n:03}")) {
        attack.requests += 1;
        let reply = served
            .ask(json!({"type": "page", "v": 2, "entity": "public.accounts",
                        "until": until, "after": [fake], "limit": 1}))
            .await
            .remove(0);
        if reply["type"] != "page" {
            attack.refused += 1;
            continue;
        }
        if let Some(next) = page_keys(&reply).first() {
            *before.entry(next.clone()).or_default() += 1;
        }
    }
    let mut real = 0i64;
    let told: Vec<i64> = order
        .iter()
        .map(|masked| {
            real += before.get(masked).copied().unwrap_or(0);
            real
        })
        .collect();
    let truth = served.real_keys().await;
    assert_eq!(truth.len(), order.len());
    attack.recovered = told
        .iter()
        .zip(&truth)
        .filter(|(t, r)| before.values().sum::<i64>() > 0 && t == r)
        .count();
    attack
}

#[tokio::test]
async fn cursors_forged_from_fakes_recover_no_real_key() {
    let served = Served::start("cursors_oracle").await;
    let rows = served.real_keys().await.len();
    let started = std::time::Instant::now();
    let attack = forged_cursor_attack(&served).await;
    eprintln!(
        "forged cursors: {} requests in {:?}, {} refused, {} of {rows} real keys recovered",
        attack.requests,
        started.elapsed(),
        attack.refused,
        attack.recovered
    );
    assert_eq!(attack.recovered, 0, "{attack:?}");
    assert_eq!(attack.refused, attack.requests, "{attack:?}");
}

/// What a refusal of a cursor must be: `malformed`, naming the entity, quoting no value sent.
#[track_caller]
fn assert_refused(reply: &Value, entity: &str, sent: &[&str]) {
    assert_eq!(
        reply["type"], "error",
        "no rows for a forged cursor: {reply}"
    );
    assert_eq!(reply["error"]["code"], "malformed", "{reply}");
    assert_eq!(reply["error"]["entities"], json!([entity]), "{reply}");
    let text = reply.to_string();
    for value in sent {
        assert!(!text.contains(value), "the refusal quotes {value}: {text}");
    }
}

/// A 3-digit string that is no served key: a valid fake (every 3-digit string is the fake of
/// some 3-digit real value) that the producer never issued.
fn never_issued(served: &[String]) -> String {
    (0..1000)
        .map(|n| format!("{n:03}"))
        .find(|fake| !served.contains(fake))
        .unwrap()
}

#[tokio::test]
async fn cursors_the_producer_never_issued_are_refused_and_its_own_work() {
    let served = Served::start("cursors_issued").await;
    let entity = "public.accounts";
    let pages = served.all_pages(entity, 40).await;
    assert!(pages.len() > 3, "{} pages", pages.len());
    let keys: Vec<String> = pages.iter().flat_map(page_keys).collect();
    assert_eq!(keys.len(), served.real_keys().await.len());
    let until = pages[0]["until"].clone();
    let first = &pages[0];
    let (issued, tag) = (first["next_after"].clone(), first["next_after_tag"].clone());
    assert!(
        tag.as_str().is_some_and(maskbus_protocol::is_cursor_tag),
        "a masked key's cursor leaves with its tag: {first}"
    );
    let page = |after: Value, tag: Option<Value>| {
        let mut body = json!({"type": "page", "v": 2, "entity": entity, "until": until,
                              "after": after, "limit": 40});
        if let Some(tag) = tag {
            body["after_tag"] = tag;
        }
        body
    };
    // The issued cursor, with its tag: the next page, as the legitimate read got it.
    let next = served
        .ask(page(issued.clone(), Some(tag.clone())))
        .await
        .remove(0);
    assert_eq!(next["type"], "page", "{next}");
    assert_eq!(page_keys(&next), page_keys(&pages[1]));

    // A valid fake the producer never issued: refused, with or without a tag, and no rows.
    let fake = never_issued(&keys);
    for forged in [
        page(json!([fake]), None),
        page(json!([fake]), Some(tag.clone())),
        page(json!([fake]), Some(json!("a".repeat(32)))),
    ] {
        let reply = served.ask(forged).await;
        assert_eq!(reply.len(), 1);
        assert_refused(&reply[0], entity, &[&fake]);
    }
    // A served key the producer never issued as a cursor (a row inside a page), bare or
    // with another cursor's tag; the issued cursor without its tag.
    let inside = keys[3].clone();
    for forged in [
        page(json!([inside]), None),
        page(json!([inside]), Some(tag.clone())),
        page(issued.clone(), None),
    ] {
        assert_refused(&served.ask(forged).await[0], entity, &[&inside]);
    }
    // The same cursor over another entity is not that entity's.
    let branches = served
        .ask(
            json!({"type": "page", "v": 2, "entity": "public.branches", "after": issued,
                    "after_tag": tag, "limit": 5}),
        )
        .await
        .remove(0);
    assert_refused(&branches, "public.branches", &[]);

    // A range's bounds leave with their tags, and come back as `through` only with them.
    let ranges = served
        .ask(
            json!({"type": "ranges", "v": 2, "entity": entity, "until": until,
                    "streams": 4, "min_rows": 20}),
        )
        .await
        .remove(0);
    assert_eq!(ranges["type"], "ranges", "{ranges}");
    let bounds = ranges["bounds"].as_array().unwrap().clone();
    let bound_tags = ranges["bound_tags"].as_array().unwrap().clone();
    assert!(bounds.len() >= 2, "{ranges}");
    assert_eq!(bounds.len(), bound_tags.len(), "{ranges}");
    let range = |after: Option<(&Value, &Value)>, through: (&Value, Option<&Value>)| {
        let mut body = json!({"type": "page", "v": 2, "entity": entity, "until": until,
                              "through": through.0, "limit": 2000});
        if let Some(tag) = through.1 {
            body["through_tag"] = tag.clone();
        }
        if let Some((after, tag)) = after {
            body["after"] = after.clone();
            body["after_tag"] = tag.clone();
        }
        body
    };
    let first_range = served
        .ask(range(None, (&bounds[0], Some(&bound_tags[0]))))
        .await
        .remove(0);
    assert_eq!(first_range["type"], "page", "{first_range}");
    assert_eq!(
        page_keys(&first_range).last(),
        bounds[0][0].as_str().map(String::from).as_ref()
    );
    let second_range = served
        .ask(range(
            Some((&bounds[0], &bound_tags[0])),
            (&bounds[1], Some(&bound_tags[1])),
        ))
        .await
        .remove(0);
    assert_eq!(second_range["type"], "page", "{second_range}");
    assert_eq!(
        page_keys(&second_range).last(),
        bounds[1][0].as_str().map(String::from).as_ref()
    );
    for forged in [
        range(None, (&bounds[0], None)),
        range(None, (&bounds[0], Some(&bound_tags[1]))),
        range(None, (&json!([fake]), Some(&bound_tags[0]))),
    ] {
        assert_refused(&served.ask(forged).await[0], entity, &[&fake]);
    }

    // Verify's hashes of a masked key go by spread; the cursor each reply ends at is tagged.
    let hashes = served
        .ask(json!({"type": "hashes", "v": 2, "entity": entity, "spread": true}))
        .await
        .remove(0);
    assert_eq!(hashes["type"], "hashes", "{hashes}");
    assert!(hashes["next_after_tag"]
        .as_str()
        .is_some_and(maskbus_protocol::is_cursor_tag));
    let again = served
        .ask(
            json!({"type": "hashes", "v": 2, "entity": entity, "spread": true,
                    "after": hashes["next_after"], "after_tag": hashes["next_after_tag"]}),
        )
        .await
        .remove(0);
    assert_eq!(again["type"], "hashes", "{again}");
    let forged = served
        .ask(
            json!({"type": "hashes", "v": 2, "entity": entity, "spread": true,
                    "after": [fake], "after_tag": hashes["next_after_tag"]}),
        )
        .await
        .remove(0);
    assert_refused(&forged, entity, &[&fake]);

    // A kept key's cursor is the source's own value: no tag is issued, any key is taken, and a
    // tag (which the producer never issued for it) is refused.
    let kept = served
        .ask(json!({"type": "page", "v": 2, "entity": "public.branches", "after": ["10"], "limit": 5}))
        .await
        .remove(0);
    assert_eq!(kept["type"], "page", "{kept}");
    assert_eq!(kept["rows"][0][0], "11");
    assert!(kept.get("next_after_tag").is_none(), "{kept}");
    let tagged = served
        .ask(
            json!({"type": "page", "v": 2, "entity": "public.branches", "after": ["10"],
                    "after_tag": tag, "limit": 5}),
        )
        .await
        .remove(0);
    assert_refused(&tagged, "public.branches", &[]);

    // The producer's model pages with query_masked the same way: the issued cursor with its
    // tag reads on, a made-up one is refused.
    let config = maskbus_config::load(std::path::Path::new(&served.config)).unwrap();
    let agent = maskbus_tools::Agent::start(&config).await.unwrap();
    let first = agent
        .call("query_masked", json!({"entity": entity, "limit": 3}))
        .await
        .unwrap();
    let on = agent
        .call(
            "query_masked",
            json!({"entity": entity, "limit": 3, "after": first["next_after"],
                   "after_tag": first["next_after_tag"]}),
        )
        .await
        .unwrap();
    assert_eq!(page_keys(&on), keys[3..6].to_vec());
    let refused = agent
        .call(
            "query_masked",
            json!({"entity": entity, "limit": 3, "after": [fake]}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("malformed"), "{refused}");
    assert!(!refused.contains(&fake), "{refused}");
}

/// How a pass of `public.accounts` was cut short by a consumer of before the tags: its cursors
/// recorded bare.
enum CutShort {
    /// Read in one range, up to the 100th row.
    InOneRange,
    /// Read in three ranges: the first done, the second up to the 100th row, the third not begun.
    InRanges,
}

/// The target as a consumer of before the tags left it: their columns and their migration gone,
/// and the pass of `public.accounts` in window `until` cut short as `how` says, with the rows
/// after its cursors not written (`keys`: the masked keys in the source's order).
async fn cut_short_before_tags(
    dst: &maskbus_pg::tokio_postgres::Client,
    keys: &[String],
    how: &CutShort,
) {
    dst.batch_execute(
        "ALTER TABLE maskbus.sync_state DROP COLUMN after_tag;
         ALTER TABLE maskbus.sync_ranges DROP COLUMN after_tag, DROP COLUMN through_tag;
         DELETE FROM maskbus.migrations WHERE name = '0009_cursor_tags.sql';
         UPDATE maskbus.sync_state SET pass_until = synced_until, synced_until = NULL
          WHERE entity = 'public.accounts';",
    )
    .await
    .unwrap();
    let key = |at: usize| vec![keys[at].clone()];
    let written: Vec<String> = match how {
        CutShort::InOneRange => {
            dst.execute(
                "UPDATE maskbus.sync_state SET after_key = $1, rows_synced = 100
                  WHERE entity = 'public.accounts'",
                &[&key(99)],
            )
            .await
            .unwrap();
            keys[..100].to_vec()
        }
        CutShort::InRanges => {
            dst.execute(
                "INSERT INTO maskbus.sync_ranges (entity, range_no, until, after_key, through, done, rows_synced)
                 SELECT 'public.accounts', n, pass_until, a, t, d, r
                   FROM maskbus.sync_state,
                        (VALUES (0, NULL::text[], $1::text[], true, 60),
                                (1, $2, $3, false, 40),
                                (2, $3, NULL, false, 0)) AS v (n, a, t, d, r)
                  WHERE entity = 'public.accounts'",
                &[&key(59), &key(99), &key(149)],
            )
            .await
            .unwrap();
            keys[..100].to_vec()
        }
    };
    dst.execute(
        "DELETE FROM accounts WHERE NOT (id::text = ANY($1))",
        &[&written],
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_pass_cut_short_before_cursors_had_tags_reads_its_window_again_whole() {
    for how in [CutShort::InOneRange, CutShort::InRanges] {
        let test = match how {
            CutShort::InOneRange => "cursors_migrate_one",
            CutShort::InRanges => "cursors_migrate_ranges",
        };
        // Read in ranges side by side: the bounds go back as `after` and `through` with their tags.
        let keyed = Synced::start_with(
            test,
            SCHEMA,
            POLICY,
            "",
            "streams = 4\nrange_rows = 20\npage_size = 10\npages_per_request = 1\n",
        )
        .await;
        keyed.sync().success();
        let producer = producer_of(&keyed.producer).await;
        let keys: Vec<String> = all_pages(&producer, "public.accounts", 2000)
            .await
            .iter()
            .flat_map(page_keys)
            .collect();
        let dst = connect(&keyed.dbs.url("dst")).await;
        let target_keys = || async {
            let mut held: Vec<String> = first_column(&dst, "SELECT id::text FROM accounts").await;
            held.sort();
            held
        };
        let mut all = keys.clone();
        all.sort();
        assert_eq!(target_keys().await, all);
        // The pass went in ranges, each bound sent back with its tag.
        let ranged: i64 = connect(&keyed.dbs.url("bus"))
            .await
            .query_one(
                "SELECT count(*) FROM mq.mail WHERE body::jsonb ? 'through_tag'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert!(ranged > 0, "no page request sent a bound back with its tag");

        cut_short_before_tags(&dst, &keys, &how).await;
        assert_eq!(target_keys().await.len(), 100);
        // The bare cursor recorded is one the producer no longer takes back.
        let bare = ask(
            &producer,
            json!({"type": "page", "v": 2, "entity": "public.accounts", "after": [keys[99]], "limit": 10}),
        )
        .await
        .remove(0);
        assert_refused(&bare, "public.accounts", &[&keys[99]]);

        // The migration forgets it: the window is read again from its start, every row of it
        // in the target once, and the pass closes.
        keyed.sync().success();
        assert_eq!(target_keys().await, all, "nothing lost, nothing doubled");
        let state = dst
            .query_one(
                "SELECT synced_until IS NOT NULL, pass_until IS NULL, after_key IS NULL, after_tag IS NULL
                   FROM maskbus.sync_state WHERE entity = 'public.accounts'",
                &[],
            )
            .await
            .unwrap();
        assert!(
            (0..4).all(|i| state.get::<_, bool>(i)),
            "the pass closed: {state:?}"
        );
        let ranges: i64 = dst
            .query_one("SELECT count(*) FROM maskbus.sync_ranges", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(ranges, 0);
        let run = maskbus(&["verify", "--config", &keyed.consumer]).success();
        assert!(
            run.stdout.contains("the target equals the masked source"),
            "{}",
            run.stdout
        );
    }
}
