//! The pseudonym key leaves no trace on the bus but the fakes it makes: the rules fingerprint
//! each entity's rows carry is a function of the rules alone (issue 52, item 5).

use maskbus_mask::{Policy, PseudonymKey};

#[test]
fn the_rules_fingerprint_is_the_same_whatever_the_key() {
    let bare = Policy::bank().unwrap();
    let one = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"the first key of this test"));
    let two = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"the second key of this test"));
    let mut entities = 0;
    for (entity, _) in bare.entities() {
        let fingerprint = bare.rules_fingerprint(entity).unwrap();
        assert_eq!(
            one.rules_fingerprint(entity).unwrap(),
            fingerprint,
            "{entity}"
        );
        assert_eq!(
            two.rules_fingerprint(entity).unwrap(),
            fingerprint,
            "{entity}"
        );
        entities += 1;
    }
    assert!(entities >= 5, "the bank policy has its tables");
}

#[test]
fn the_rules_fingerprint_still_follows_the_rules() {
    let keep = Policy::from_toml("a", "[t]\nid = \"keep\"\nnote = \"keep\"\n").unwrap();
    let redact = Policy::from_toml("b", "[t]\nid = \"keep\"\nnote = \"redact\"\n").unwrap();
    let keyed = Policy::from_toml(
        "c",
        "[t]\nid = \"keep\"\nnote = \"keep\"\n[maskbus.keys]\nt = [\"note\"]\n",
    )
    .unwrap();
    let (a, b, c) = (
        keep.rules_fingerprint("t").unwrap(),
        redact.rules_fingerprint("t").unwrap(),
        keyed.rules_fingerprint("t").unwrap(),
    );
    assert_ne!(a, b, "another rule, another fingerprint");
    assert_ne!(a, c, "other key columns, another fingerprint");
}
