use super::*;
use maskbus_pg::{KeyColumn, KeySource};

fn t(name: &str) -> TableRef {
    TableRef::new("public", name)
}

fn keyed(name: &str) -> (TableRef, KeyDef) {
    (
        t(name),
        KeyDef {
            columns: vec![KeyColumn {
                name: "id".into(),
                sql_type: "bigint".into(),
            }],
            source: KeySource::PrimaryKey,
        },
    )
}

fn fk(name: &str, child: &str, column: &str, parent: &str) -> ForeignKey {
    ForeignKey {
        name: name.into(),
        table: t(child),
        columns: vec![column.into()],
        parent: t(parent),
        parent_columns: vec!["id".into()],
        nullable: false,
        deferrable: false,
    }
}

/// The bank, a lookup table the transactions point at, a table nothing in the bank touches,
/// and a self-reference.
fn schema() -> (Vec<(TableRef, KeyDef)>, Vec<ForeignKey>) {
    let tables = [
        "customers",
        "accounts",
        "cards",
        "transactions",
        "merchants",
        "audit_log",
        "staff",
    ]
    .map(keyed)
    .to_vec();
    let fks = vec![
        fk("accounts_customer", "accounts", "customer_id", "customers"),
        fk("cards_account", "cards", "account_id", "accounts"),
        fk("tx_account", "transactions", "account_id", "accounts"),
        fk("tx_card", "transactions", "card_id", "cards"),
        fk("tx_merchant", "transactions", "merchant_id", "merchants"),
        fk("staff_manager", "staff", "manager_id", "staff"),
        // A table outside the policy: ignored.
        fk("x_customer", "not_served", "customer_id", "customers"),
    ];
    (tables, fks)
}

fn file(text: &str) -> SubsetFile {
    SubsetFile::parse("test", text).unwrap()
}

fn names(links: &[Link], tables: &[(TableRef, KeyDef)]) -> Vec<String> {
    links
        .iter()
        .map(|l| format!("{}->{}", tables[l.child].0.name, tables[l.parent].0.name))
        .collect()
}

#[test]
fn down_from_the_roots_then_up_to_every_parent() {
    let (tables, fks) = schema();
    let f = file("[subsets.texas]\nwhere = { customers = \"true\" }\n");
    let planned = plan(&f, "texas", &tables, &fks).unwrap();
    assert_eq!(
        names(&planned.closure.down, &tables),
        [
            "accounts->customers",
            "cards->accounts",
            "transactions->accounts",
            "transactions->cards"
        ]
    );
    // Merchants come up as parents of kept transactions; they are not followed down from.
    assert!(names(&planned.closure.up, &tables).contains(&"transactions->merchants".to_string()));
    assert_eq!(planned.outside, vec![t("audit_log"), t("staff")]);
    assert_eq!(planned.outside_rule, Outside::Empty);
}

#[test]
fn follow_down_limits_the_way_down_and_unknown_names_are_refused() {
    let (tables, fks) = schema();
    let f = file(
        "[subsets.a]\nwhere = { customers = \"true\" }\nfollow_down = [\"accounts_customer\"]\noutside = \"whole\"\n",
    );
    let planned = plan(&f, "a", &tables, &fks).unwrap();
    assert_eq!(
        names(&planned.closure.down, &tables),
        ["accounts->customers"]
    );
    assert!(planned.outside.contains(&t("transactions")));
    let f = file("[subsets.a]\nwhere = { customers = \"true\" }\nfollow_down = [\"nope\"]\n");
    assert!(matches!(
        plan(&f, "a", &tables, &fks),
        Err(SubsetError::UnknownForeignKey { .. })
    ));
}

#[test]
fn a_self_reference_is_followed_down_and_up() {
    let (tables, fks) = schema();
    let f = file("[subsets.boss]\nfraction = { staff = 0.5 }\n");
    let planned = plan(&f, "boss", &tables, &fks).unwrap();
    assert_eq!(names(&planned.closure.down, &tables), ["staff->staff"]);
    assert_eq!(names(&planned.closure.up, &tables), ["staff->staff"]);
    assert_eq!(
        planned.closure.roots[0].pick,
        Pick::Fraction {
            fraction: 0.5,
            seed: "boss".into()
        }
    );
}

#[test]
fn virtual_foreign_keys_are_links_like_real_ones() {
    let (tables, mut fks) = schema();
    let f = file(
        "[subsets.log]\nwhere = { customers = \"true\" }\n[[virtual_foreign_keys]]\nname = \"log_customer\"\ntable = \"audit_log\"\ncolumns = [\"customer_ref\"]\nparent = \"customers\"\nparent_columns = [\"id\"]\n",
    );
    fks.extend(f.foreign_keys());
    let planned = plan(&f, "log", &tables, &fks).unwrap();
    assert!(names(&planned.closure.down, &tables).contains(&"audit_log->customers".to_string()));
    assert!(!planned.outside.contains(&t("audit_log")));
}

#[test]
fn bad_files_and_names_are_refused_with_a_reason() {
    for (text, says) in [
        ("[subsets.a]\noutside = \"empty\"\n", "has no root"),
        (
            "[subsets.a]\nfraction = { customers = 2.0 }\n",
            "from 0 to 1",
        ),
        (
            "[subsets.a]\nwhere = { customers = \"true; DROP TABLE x\" }\n",
            "without `;`",
        ),
        (
            "[subsets.\"a b\"]\nwhere = { customers = \"true\" }\n",
            "letters, digits",
        ),
        (
            "[subsets.a]\nwhere = { customers = \"true\" }\nseed = \"x'y\"\n",
            "seed",
        ),
        (
            "[subsets.a]\nwhere = { customers = \"true\" }\nlimit = 3\n",
            "unknown field",
        ),
    ] {
        let error = SubsetFile::parse("f.toml", text).unwrap_err().to_string();
        assert!(error.contains(says), "{text}: {error}");
    }
    let (tables, fks) = schema();
    let f = file("[subsets.a]\nwhere = { nowhere = \"true\" }\n");
    assert!(matches!(
        plan(&f, "a", &tables, &fks),
        Err(SubsetError::RootNotServed { .. })
    ));
    assert!(matches!(
        plan(&f, "b", &tables, &fks),
        Err(SubsetError::Unknown { .. })
    ));
}

fn keyless(name: &str) -> (TableRef, KeyDef) {
    (
        t(name),
        KeyDef {
            columns: maskbus_pg::model::ROW_LOCATION
                .iter()
                .map(|(name, sql_type)| KeyColumn {
                    name: name.to_string(),
                    sql_type: sql_type.to_string(),
                })
                .collect(),
            source: KeySource::RowLocation,
        },
    )
}

#[test]
fn a_keyless_table_is_a_child_of_the_closure_by_its_foreign_keys_never_a_root_or_a_parent() {
    let (mut tables, mut fks) = schema();
    // visits (keyless) reference customers (reached down) and merchants; notes (keyless)
    // reference nothing; a virtual key naming visits as a parent is no link.
    tables.extend([keyless("visits"), keyless("notes")]);
    fks.push(fk("visits_customer", "visits", "customer_id", "customers"));
    fks.push(fk("visits_merchant", "visits", "merchant_id", "merchants"));
    fks.push(fk("staff_visit", "staff", "visit_id", "visits"));
    let f = file("[subsets.texas]\nwhere = { customers = \"true\" }\n");
    let planned = plan(&f, "texas", &tables, &fks).unwrap();
    let down = names(&planned.closure.down, &tables);
    assert!(down.contains(&"visits->customers".to_string()), "{down:?}");
    let up = names(&planned.closure.up, &tables);
    assert!(up.contains(&"visits->merchants".to_string()), "{up:?}");
    assert!(!up.iter().chain(&down).any(|l| l.ends_with("->visits")));
    assert!(!planned.outside.contains(&t("visits")));
    assert!(planned.outside.contains(&t("notes")));
    // Its rows are picked by its parents: it cannot be a root.
    let f = file("[subsets.v]\nwhere = { visits = \"true\" }\n");
    let refused = plan(&f, "v", &tables, &fks).unwrap_err();
    assert!(matches!(refused, SubsetError::KeylessRoot { .. }));
    assert!(refused.to_string().contains("public.visits"), "{refused}");
}
