//! The config rules, tried key by key.

use super::*;

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_producer_and_a_consumer() {
    let producer = parse(
        "p.toml",
        "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\npolicy = \"p\"",
    )
    .unwrap();
    let AgentConfig::Producer(p) = resolve("p.toml", producer, &env(&[])).unwrap() else {
        panic!()
    };
    assert_eq!(p.mailbox, DEFAULT_PRODUCER_MAILBOX);
    let consumer = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\npage_size = 50",
    )
    .unwrap();
    let AgentConfig::Consumer(c) = resolve("c.toml", consumer, &env(&[])).unwrap() else {
        panic!()
    };
    assert_eq!(
        (c.page_size, c.follow_interval),
        (50, Duration::from_secs(10))
    );
}

#[test]
fn a_role_holding_the_other_sides_url_is_refused() {
    let raw = parse(
        "p.toml",
        "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\ntarget_url = \"t\"",
    )
    .unwrap();
    let err = resolve("p.toml", raw, &env(&[])).unwrap_err().to_string();
    assert!(
        err.contains("a producer must not hold target_url (set by the file p.toml)"),
        "{err}"
    );

    let raw = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"",
    )
    .unwrap();
    let err = resolve("c.toml", raw, &env(&[("MASKBUS_SOURCE_URL", "s")]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "a consumer must not hold source_url (set by environment variable MASKBUS_SOURCE_URL)"
        ),
        "{err}"
    );

    let raw = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\npseudonym_key = \"k\"",
    )
    .unwrap();
    assert!(resolve("c.toml", raw, &env(&[]))
        .unwrap_err()
        .to_string()
        .contains("pseudonym_key"));
}

#[test]
fn unknown_keys_and_missing_ones_are_named() {
    let err = parse("x.toml", "role = \"producer\"\nsorce_url = \"s\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("sorce_url"), "{err}");
    let raw = parse("x.toml", "role = \"consumer\"\nbus_url = \"b\"").unwrap();
    let err = resolve("x.toml", raw, &env(&[])).unwrap_err().to_string();
    assert!(
        err.contains("needs target_url") && err.contains("MASKBUS_TARGET_URL"),
        "{err}"
    );
    let err = resolve("x.toml", RawConfig::default(), &env(&[]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no role"), "{err}");
}

#[test]
fn zero_durations_are_refused() {
    let err = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\nrequest_timeout = \"0s\"",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("request_timeout") && err.contains("zero"),
        "{err}"
    );
}

#[test]
fn every_key_is_overridden_by_its_variable_and_checked() {
    let raw = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"",
    )
    .unwrap();
    let AgentConfig::Consumer(c) = resolve(
        "c.toml",
        raw.clone(),
        &env(&[
            ("MASKBUS_PAGES_PER_REQUEST", "3"),
            ("MASKBUS_PAGE_SIZE", "50"),
            ("MASKBUS_REQUEST_TIMEOUT", "5s"),
            ("MASKBUS_ALL_OR_NOTHING", "true"),
            ("MASKBUS_BULK_LOAD", "false"),
        ]),
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        (
            c.pages_per_request,
            c.page_size,
            c.request_timeout,
            c.all_or_nothing,
            c.bulk_load
        ),
        (3, 50, Duration::from_secs(5), true, false)
    );
    let err = resolve("c.toml", raw, &env(&[("MASKBUS_PAGES_PER_REQUEST", "99")]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MASKBUS_PAGES_PER_REQUEST") && err.contains("outside 1 to 64"),
        "{err}"
    );
    // Every key has its own variable, spelled from its name.
    for key in KEYS {
        assert_eq!(key.env, format!("MASKBUS_{}", key.name.to_uppercase()));
    }
}

#[test]
fn the_environment_overrides_the_file() {
    let raw = parse(
        "p.toml",
        "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\npolicy = \"p\"",
    )
    .unwrap();
    let AgentConfig::Producer(p) =
        resolve("p.toml", raw, &env(&[("MASKBUS_BUS_URL", "other")])).unwrap()
    else {
        panic!()
    };
    assert_eq!(p.bus_url, Secret("other".into()));
    assert_eq!(format!("{:?}", p.bus_url), "Secret(..)");
}

#[test]
fn workers_are_numbered_within_their_count_and_get_their_own_mailbox() {
    let config = |extra: &str| {
        parse(
            "c.toml",
            &format!("role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\n{extra}"),
        )
        .and_then(|raw| resolve("c.toml", raw, &env(&[])))
    };
    let err = config("workers = 2\nworker = 3").unwrap_err().to_string();
    assert!(err.contains("workers are numbered 1 to 2"), "{err}");
    let Ok(AgentConfig::Consumer(c)) = config("workers = 2\nworker = 2") else {
        panic!()
    };
    assert_eq!(
        (c.workers, c.worker, c.mailbox.as_str()),
        (2, 2, "maskbus.consumer.2")
    );
    let Ok(AgentConfig::Consumer(c)) = config("") else {
        panic!()
    };
    assert_eq!(
        (c.workers, c.worker, c.mailbox.as_str()),
        (1, 1, "maskbus.consumer")
    );
}

#[test]
fn a_producer_needs_a_policy() {
    let raw = parse(
        "p.toml",
        "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\n",
    )
    .unwrap();
    let missing = resolve("p.toml", raw, &env(&[])).unwrap_err().to_string();
    assert!(missing.contains("policy"), "{missing}");
}

#[test]
fn a_broken_file_is_shown_at_its_line_and_a_typo_gets_a_suggestion() {
    let broken = parse("c.toml", "role = \"consumer\"\nbus_url = \"postgres://x\n")
        .unwrap_err()
        .to_string();
    assert!(broken.contains("line 2, column"), "{broken}");
    assert!(
        broken.contains("   2 | bus_url = \"postgres://x"),
        "{broken}"
    );
    let typo = parse("c.toml", "sorce_url = \"x\"")
        .unwrap_err()
        .to_string();
    assert!(typo.contains("did you mean `source_url`?"), "{typo}");
}

#[test]
fn every_default_is_a_value_of_its_kind_and_is_used() {
    for key in KEYS {
        if !key.default.is_empty() {
            assert!(
                check(key, &toml::Value::String(key.default.into()), "the default").is_ok(),
                "{}: default {:?}",
                key.name,
                key.default
            );
        }
        assert!(!key.doc.is_empty(), "{} has no doc", key.name);
    }
    let raw = parse(
        "c.toml",
        "role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"",
    )
    .unwrap();
    let AgentConfig::Consumer(c) = resolve("c.toml", raw, &env(&[])).unwrap() else {
        panic!()
    };
    assert_eq!(
        (
            c.page_size,
            c.pages_per_request,
            c.request_timeout,
            c.bulk_load
        ),
        (1000, 16, Duration::from_secs(30), true)
    );
    assert_eq!(c.producer_mailbox, DEFAULT_PRODUCER_MAILBOX);
}

#[test]
fn the_configuration_reference_is_generated_from_the_key_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let written = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        written == reference_markdown(),
        "docs/configuration.md is not what the key table says: run `maskbus config keys > docs/configuration.md`"
    );
}

#[test]
fn every_default_parses_under_its_own_kind() {
    // What a `Defaulted` key reads when nothing sets it: a value of its kind, so the typed read
    // never falls back to 0.
    let unset = RawConfig::default();
    for key in KEYS.iter().filter(|k| !k.default.is_empty()) {
        let value = unset.value(key);
        assert!(
            matches!(
                (key.kind, &value),
                (Kind::Text, Some(Value::Text(_)))
                    | (Kind::Count(..), Some(Value::Count(_)))
                    | (Kind::Duration, Some(Value::Duration(_)))
                    | (Kind::Flag, Some(Value::Flag(_)))
            ),
            "{}: default {:?} reads as {value:?}",
            key.name,
            key.default
        );
    }
    assert!(unset.get(STREAM_WHILE_WRITTEN));
    assert_eq!(unset.get(AUDIT_MAX_AGE), Duration::from_secs(24 * 3600));
    assert_eq!(unset.get(MODE), "watermark");
    assert_eq!(unset.get(RANGE_ROWS), 50_000);
    assert_eq!(unset.get(SLOT), None);
}

#[test]
fn every_key_is_listed_once() {
    for key in KEYS {
        let times = KEYS.iter().filter(|k| k.name == key.name).count();
        assert_eq!(times, 1, "{} is listed {times} times in KEYS", key.name);
    }
}

#[test]
fn a_superuser_target_and_extensions_are_the_consumers_own_choice() {
    let consumer = |extra: &str| {
        let raw = parse(
            "c.toml",
            &format!("role = \"consumer\"\nbus_url = \"b\"\ntarget_url = \"t\"\n{extra}"),
        )
        .unwrap();
        let AgentConfig::Consumer(c) = resolve("c.toml", raw, &env(&[])).unwrap() else {
            panic!()
        };
        c
    };
    let plain = consumer("");
    assert!(!plain.allow_superuser_target, "refused unless asked for");
    assert_eq!(plain.extensions, None, "PostgreSQL's trusted ones");
    let asked = consumer("allow_superuser_target = true\nextensions = \" citext, ,hstore \"");
    assert!(asked.allow_superuser_target);
    assert_eq!(
        asked.extensions,
        Some(vec!["citext".to_string(), "hstore".to_string()])
    );
    assert_eq!(consumer("extensions = \"\"").extensions, Some(Vec::new()));
    // Neither is a producer's to hold.
    for key in ["allow_superuser_target = true", "extensions = \"dblink\""] {
        let raw = parse(
            "p.toml",
            &format!(
                "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\npolicy = \"p\"\n{key}"
            ),
        )
        .unwrap();
        assert!(resolve("p.toml", raw, &env(&[])).is_err(), "{key}");
    }
}

#[test]
fn file_paths_in_a_config_are_read_beside_it() {
    let dir = std::env::temp_dir().join(format!("maskbus-config-paths-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("conf")).unwrap();
    let path = dir.join("conf/producer.toml");
    std::fs::write(
        &path,
        "role = \"producer\"\nbus_url = \"b\"\nsource_url = \"s\"\npolicy = \"policy.toml\"\n\
         subsets = \"../subsets.toml\"\nreviewed_columns = \"/etc/reviewed.toml\"\n",
    )
    .unwrap();
    // Whatever the current directory, and whatever MASKBUS_ variables the runner has set.
    let raw = parse("producer.toml", &std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut config = resolve("producer.toml", raw, &env(&[])).unwrap();
    files_beside(&mut config, &path, &env(&[]));
    let AgentConfig::Producer(p) = &config else {
        panic!()
    };
    assert_eq!(p.policy, dir.join("conf/policy.toml"));
    assert!(p.policy.is_absolute());
    assert_eq!(
        p.subsets.as_deref(),
        Some(dir.join("conf/../subsets.toml").as_path())
    );
    assert_eq!(
        p.reviewed_columns.as_deref(),
        Some(std::path::Path::new("/etc/reviewed.toml"))
    );
    // A path from the environment is the caller's, read from the current directory.
    let raw = parse("producer.toml", &std::fs::read_to_string(&path).unwrap()).unwrap();
    let set = env(&[("MASKBUS_POLICY", "mine.toml")]);
    let mut config = resolve("producer.toml", raw, &set).unwrap();
    files_beside(&mut config, &path, &set);
    let AgentConfig::Producer(p) = &config else {
        panic!()
    };
    assert_eq!(p.policy, std::env::current_dir().unwrap().join("mine.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}
