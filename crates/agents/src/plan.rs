//! The order the consumer fills tables in: parents before children, from the target's foreign
//! keys. Pure, so the ordering rules are unit-tested without a database.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("foreign keys form a cycle among {0}; cyclic schemas are not supported yet")]
    Cycle(String),
}

/// Orders `entities` so that every table comes after the tables it references (self-references
/// are ignored: a page inserts its own parents first by key order). Ties keep name order, so the
/// plan is the same on every run.
pub fn fk_order(entities: &[String], edges: &[(String, String)]) -> Result<Vec<String>, PlanError> {
    let wanted: BTreeSet<&str> = entities.iter().map(String::as_str).collect();
    let mut parents: BTreeMap<&str, BTreeSet<&str>> =
        wanted.iter().map(|e| (*e, BTreeSet::new())).collect();
    for (child, parent) in edges {
        if child != parent && wanted.contains(child.as_str()) && wanted.contains(parent.as_str()) {
            parents
                .entry(child.as_str())
                .or_default()
                .insert(parent.as_str());
        }
    }
    let mut order = Vec::with_capacity(wanted.len());
    let mut placed = BTreeSet::new();
    while placed.len() < wanted.len() {
        let ready: Vec<&str> = parents
            .iter()
            .filter(|(e, ps)| !placed.contains(*e) && ps.iter().all(|p| placed.contains(p)))
            .map(|(e, _)| *e)
            .collect();
        if ready.is_empty() {
            let stuck: Vec<&str> = wanted
                .iter()
                .filter(|e| !placed.contains(*e))
                .copied()
                .collect();
            return Err(PlanError::Cycle(stuck.join(", ")));
        }
        for entity in ready {
            placed.insert(entity);
            order.push(entity.to_string());
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_bank_fills_parents_first() {
        let edges = [
            ("addresses", "customers"),
            ("accounts", "customers"),
            ("cards", "accounts"),
            ("transactions", "accounts"),
            ("transactions", "cards"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()));
        let order = fk_order(
            &s(&[
                "transactions",
                "cards",
                "customers",
                "addresses",
                "accounts",
            ]),
            &edges,
        )
        .unwrap();
        assert_eq!(
            order,
            s(&[
                "customers",
                "accounts",
                "addresses",
                "cards",
                "transactions"
            ])
        );
    }

    #[test]
    fn cycles_are_named_and_self_references_ignored() {
        let edges =
            [("a", "b"), ("b", "a"), ("c", "c")].map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(
            fk_order(&s(&["a", "b", "c"]), &edges),
            Err(PlanError::Cycle("a, b".into()))
        );
        assert_eq!(fk_order(&s(&["c"]), &edges), Ok(s(&["c"])));
    }
}
