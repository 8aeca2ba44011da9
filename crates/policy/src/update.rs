//! `maskbus policy init --update FILE`: a reviewed policy brought up to date with the schema,
//! so that a migration's review is a small diff. Every line already in the file stays exactly
//! as it is (rule, comment, order); what is new in the source is added as `policy init` would
//! propose it, each line marked new; a rule for a column or a table the source no longer has
//! is marked, not removed (a reviewer decides whether it was dropped or renamed). Pure: text in,
//! text out, through `toml_edit`.

use maskbus_mask::escape::one_line;
use maskbus_mask::policy::SETTINGS_SECTION;
use toml_edit::{DocumentMut, Item, Table};

/// What an update changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateSummary {
    pub new_tables: Vec<String>,
    /// `schema.table.column`.
    pub new_columns: Vec<String>,
    /// Rules for columns the source no longer has.
    pub gone_columns: Vec<String>,
    pub gone_tables: Vec<String>,
}

impl UpdateSummary {
    pub fn is_empty(&self) -> bool {
        self.new_tables.is_empty()
            && self.new_columns.is_empty()
            && self.gone_columns.is_empty()
            && self.gone_tables.is_empty()
    }
}

/// Why a policy file cannot be updated.
#[derive(Debug, thiserror::Error)]
#[error("{file} is not a TOML policy this update can read: {reason}")]
pub struct UpdateError {
    file: String,
    reason: String,
}

/// Each table section of `doc` with its `schema.table` name: `[orders]`, `["sales.orders"]`
/// and `[sales.orders]` alike.
fn tables_of(doc: &DocumentMut) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (key, item) in doc.iter() {
        if key == SETTINGS_SECTION {
            continue;
        }
        let Some(table) = item.as_table() else {
            continue;
        };
        let is_entity = table.iter().all(|(_, v)| !v.is_table());
        if key.contains('.') || is_entity {
            out.push((maskbus_mask::qualify(key), vec![key.to_string()]));
        } else {
            for (sub, v) in table.iter() {
                if v.is_table() {
                    out.push((
                        format!("{key}.{sub}"),
                        vec![key.to_string(), sub.to_string()],
                    ));
                }
            }
        }
    }
    out
}

/// The tables a policy leaves out on purpose, by its comment lines `# left out: NAME, why`
/// (what `policy init` writes for a table it leaves out, and what a reviewer may write) and
/// `# known: A, B` (every table `policy init` proposed: one whose section the reviewer deleted
/// was left out on purpose), as `schema.table`.
pub fn left_out_of(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix('#').map(str::trim))
        .flat_map(|comment| {
            let names: Vec<&str> = if let Some(rest) = comment.strip_prefix("left out:") {
                rest.split(',').take(1).collect()
            } else if let Some(rest) = comment.strip_prefix(crate::propose::KNOWN_MARK) {
                rest.split(',').collect()
            } else {
                Vec::new()
            };
            names
                .into_iter()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(maskbus_mask::qualify)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn table_at<'d>(doc: &'d mut DocumentMut, path: &[String]) -> Option<&'d mut Table> {
    let mut item: &mut Item = doc.get_mut(path.first()?)?;
    for part in &path[1..] {
        item = item.as_table_mut()?.get_mut(part)?;
    }
    item.as_table_mut()
}

/// `current` (the reviewed file) brought up to date with `fresh` (what `policy init` proposes
/// for the source now). `origin` names the file in errors.
pub fn update(
    origin: &str,
    current: &str,
    fresh: &str,
) -> Result<(String, UpdateSummary), UpdateError> {
    let bad = |e: toml_edit::TomlError| UpdateError {
        file: origin.to_string(),
        reason: e.message().to_string(),
    };
    let mut doc: DocumentMut = current.parse().map_err(bad)?;
    let proposed: DocumentMut = fresh.parse().map_err(bad)?;
    let mut summary = UpdateSummary::default();
    let have = tables_of(&doc);
    let want = tables_of(&proposed);
    let left_out = left_out_of(current);
    for (name, path) in &want {
        // A table the reviewer left out (`# left out: NAME, why`) stays out.
        if left_out.contains(name) && !have.iter().any(|(n, _)| n == name) {
            continue;
        }
        let Some(fresh_table) = table_at(&mut proposed.clone(), path).cloned() else {
            continue;
        };
        match have.iter().find(|(n, _)| n == name) {
            None => {
                // A new table: as proposed, said so above its header.
                let mut table = fresh_table;
                let prefix = format!(
                    "\n# new in the source: table {}; every line below is a proposal, review it\n",
                    one_line(name)
                );
                table.decor_mut().set_prefix(prefix);
                let key = if path.len() == 1 {
                    path[0].clone()
                } else {
                    name.clone()
                };
                doc.insert(&key, Item::Table(table));
                summary.new_tables.push(name.clone());
                let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
                doc.set_trailing(format!(
                    "{trailing}# {} {}\n",
                    crate::propose::KNOWN_MARK,
                    one_line(name)
                ));
            }
            Some((_, at)) => {
                let Some(table) = table_at(&mut doc, at) else {
                    continue;
                };
                for (column, value) in fresh_table.iter() {
                    if table.contains_key(column) {
                        continue;
                    }
                    table.insert(column, value.clone());
                    if let Some(mut key) = table.key_mut(column) {
                        key.leaf_decor_mut().set_prefix(format!(
                            "# new in the source: column {}; a proposal, review it\n",
                            one_line(column)
                        ));
                    }
                    summary.new_columns.push(format!("{name}.{column}"));
                }
                let gone: Vec<String> = table
                    .iter()
                    .map(|(c, _)| c.to_string())
                    .filter(|c| !fresh_table.contains_key(c))
                    .collect();
                for column in gone {
                    if let Some(mut key) = table.key_mut(&column) {
                        let old = key
                            .leaf_decor()
                            .prefix()
                            .and_then(|p| p.as_str())
                            .unwrap_or_default()
                            .to_string();
                        if !old.contains("gone from the source") {
                            key.leaf_decor_mut().set_prefix(format!(
                                "{old}# gone from the source: column {}; remove this rule (dropped) or rename it (renamed)\n",
                                one_line(&column)
                            ));
                        }
                    }
                    summary.gone_columns.push(format!("{name}.{column}"));
                }
            }
        }
    }
    for (name, path) in &have {
        if want.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some(table) = table_at(&mut doc, path) {
            let old = table
                .decor()
                .prefix()
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string();
            if !old.contains("gone from the source") {
                table.decor_mut().set_prefix(format!(
                    "{old}\n# gone from the source: table {}; remove this section (dropped) or rename it (renamed)\n",
                    one_line(name)
                ));
            }
        }
        summary.gone_tables.push(name.clone());
    }
    // Key columns proposed for new keyless tables.
    if let Some(keys) = proposed
        .get(SETTINGS_SECTION)
        .and_then(|m| m.get("keys"))
        .and_then(Item::as_table)
    {
        for (table, columns) in keys.iter() {
            if !summary
                .new_tables
                .iter()
                .any(|t| t == &maskbus_mask::qualify(table))
            {
                continue;
            }
            let maskbus = doc.entry(SETTINGS_SECTION).or_insert_with(|| {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            });
            if let Some(settings) = maskbus.as_table_mut() {
                let section = settings
                    .entry("keys")
                    .or_insert_with(|| Item::Table(Table::new()));
                if let Some(section) = section.as_table_mut() {
                    section.insert(table, columns.clone());
                }
            }
        }
    }
    Ok((doc.to_string(), summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reviewed_lines_stay_and_only_what_is_new_or_gone_is_marked() {
        let current = "# reviewed\n[people]\nid = \"keep\"\nname = \"redact\"   # a reviewer chose this\nold = \"null\"\n\n[\"sales.gone\"]\nid = \"keep\"\n";
        let fresh = "[people]\nid = \"keep\"\nname = { pseudonym = \"first_name\" }\nemail = \"email\"   # looks like emails\n\n[pets]\nid = \"keep\"\n";
        let (text, summary) = update("p.toml", current, fresh).unwrap();
        assert!(
            text.contains("name = \"redact\"   # a reviewer chose this"),
            "{text}"
        );
        assert!(text.contains("# new in the source: column email"), "{text}");
        assert!(text.contains("email = \"email\""), "{text}");
        assert!(
            text.contains("# gone from the source: column old"),
            "{text}"
        );
        assert!(
            text.contains("# new in the source: table public.pets"),
            "{text}"
        );
        assert!(
            text.contains("# gone from the source: table sales.gone"),
            "{text}"
        );
        assert_eq!(summary.new_columns, vec!["public.people.email"]);
        assert_eq!(summary.new_tables, vec!["public.pets"]);
        assert_eq!(summary.gone_columns, vec!["public.people.old"]);
        assert_eq!(summary.gone_tables, vec!["sales.gone"]);
        // Run again on its own output: nothing new, the marks not doubled.
        let (again, _) = update("p.toml", &text, fresh).unwrap();
        assert_eq!(again.matches("gone from the source: column old").count(), 1);
        assert!(
            maskbus_mask::Policy::from_toml("p", &again).is_ok(),
            "{again}"
        );
    }
}
