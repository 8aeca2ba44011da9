//! The order the consumer fills tables in, from the foreign keys: parents before children, and
//! cycles broken by writing some foreign keys later. Pure, so the rules are unit-tested without a
//! database.
//!
//! Tables that reference each other (a store managed by a staff member who works in a store), or
//! themselves (an employee's manager), form strongly connected components of the foreign-key
//! graph. Inside such a component every foreign key whose columns are all nullable is *deferred*:
//! its rows are written with those columns NULL, the real values are staged beside them, and the
//! links are set once the component's rows are all in. A cycle left after that whose links are
//! `DEFERRABLE` is filled *together*: all its tables in one transaction with the constraints
//! deferred, so they are checked once, at its commit. If a cycle is left even then, every link of
//! it is NOT NULL and not deferrable, and it cannot be broken: [`PlanError::Unbreakable`] names
//! its tables and constraints.

use crate::{ForeignKey, TableRef};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("foreign keys form a cycle that cannot be broken among {tables}: every one of its constraints ({constraints}) is NOT NULL and not DEFERRABLE; make one of them nullable or DEFERRABLE, or leave one of the tables out of the policy")]
    Unbreakable { tables: String, constraints: String },
}

/// How a set of tables is filled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FillPlan {
    /// Every table after the tables it references (deferred links aside); ties in name order.
    pub order: Vec<TableRef>,
    /// Per table, the foreign keys written NULL first and set after its component is in.
    pub deferred: BTreeMap<TableRef, Vec<ForeignKey>>,
    /// Tables filled together, in one transaction with deferred constraints: cycles whose
    /// remaining links are NOT NULL but DEFERRABLE.
    pub together: Vec<BTreeSet<TableRef>>,
}

impl FillPlan {
    /// The columns of `table` written later, in a stable order.
    pub fn deferred_columns(&self, table: &TableRef) -> Vec<String> {
        let mut columns: Vec<String> = self
            .deferred
            .get(table)
            .into_iter()
            .flatten()
            .flat_map(|fk| fk.columns.iter().cloned())
            .collect();
        columns.sort();
        columns.dedup();
        columns
    }
}

/// Strongly connected components (Tarjan), each as a sorted set, over `nodes` and `edges`
/// (child → parent).
fn components(
    nodes: &BTreeSet<TableRef>,
    edges: &[(&TableRef, &TableRef)],
) -> Vec<BTreeSet<TableRef>> {
    let index_of: BTreeMap<&TableRef, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let list: Vec<&TableRef> = nodes.iter().collect();
    let mut adjacent = vec![Vec::new(); list.len()];
    for (from, to) in edges {
        adjacent[index_of[from]].push(index_of[to]);
    }
    // Iterative Tarjan: no recursion, so a deep graph cannot overflow the stack.
    let n = list.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut result, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, i)) = work.pop() {
            if i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = adjacent[v].get(i) {
                work.push((v, i + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.insert(list[w].clone());
                    if w == v {
                        break;
                    }
                }
                result.push(component);
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    result
}

/// Plans how to fill `tables`, given the foreign keys among them (others are ignored).
pub fn fill_plan(tables: &[TableRef], fks: &[ForeignKey]) -> Result<FillPlan, PlanError> {
    let nodes: BTreeSet<TableRef> = tables.iter().cloned().collect();
    let inside: Vec<&ForeignKey> = fks
        .iter()
        .filter(|fk| nodes.contains(&fk.table) && nodes.contains(&fk.parent))
        .collect();
    let edges: Vec<(&TableRef, &TableRef)> =
        inside.iter().map(|fk| (&fk.table, &fk.parent)).collect();
    let component_of: BTreeMap<TableRef, usize> = components(&nodes, &edges)
        .into_iter()
        .enumerate()
        .flat_map(|(i, c)| c.into_iter().map(move |t| (t, i)))
        .collect();
    let mut plan = FillPlan::default();
    let mut kept: Vec<&ForeignKey> = Vec::new();
    for fk in &inside {
        let cyclic = component_of[&fk.table] == component_of[&fk.parent];
        if cyclic && fk.nullable {
            plan.deferred
                .entry(fk.table.clone())
                .or_default()
                .push((*fk).clone());
        } else {
            kept.push(fk);
        }
    }
    // What is left of a cycle after its nullable links are deferred is made of NOT NULL links.
    // Deferrable ones are checked at commit, so a cycle of them is filled in one transaction.
    let kept_edges: Vec<(&TableRef, &TableRef)> =
        kept.iter().map(|fk| (&fk.table, &fk.parent)).collect();
    let mut ordering: Vec<&ForeignKey> = Vec::new();
    let mut in_group: BTreeMap<&TableRef, usize> = BTreeMap::new();
    for component in components(&nodes, &kept_edges) {
        let looped: Vec<&&ForeignKey> = kept
            .iter()
            .filter(|fk| component.contains(&fk.table) && component.contains(&fk.parent))
            .collect();
        if component.len() > 1 || !looped.is_empty() {
            let index = plan.together.len();
            plan.together.push(component.clone());
            for table in component.iter().filter_map(|t| nodes.get(t)) {
                in_group.insert(table, index);
            }
        }
    }
    for fk in &kept {
        let same_group =
            in_group.contains_key(&fk.table) && in_group.get(&fk.table) == in_group.get(&fk.parent);
        if !(same_group && fk.deferrable) {
            ordering.push(fk);
        }
    }
    let ordering_edges: Vec<(&TableRef, &TableRef)> =
        ordering.iter().map(|fk| (&fk.table, &fk.parent)).collect();
    for component in components(&nodes, &ordering_edges) {
        let looped = ordering
            .iter()
            .filter(|fk| component.contains(&fk.table) && component.contains(&fk.parent))
            .collect::<Vec<_>>();
        if component.len() > 1 || !looped.is_empty() {
            return Err(PlanError::Unbreakable {
                tables: component
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                constraints: looped
                    .iter()
                    .map(|fk| format!("{} on {}", fk.name, fk.table))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    // Kahn over the kept edges; ties in name order, so the plan is the same on every run.
    let mut parents: BTreeMap<&TableRef, BTreeSet<&TableRef>> =
        nodes.iter().map(|t| (t, BTreeSet::new())).collect();
    for fk in &ordering {
        if fk.table != fk.parent {
            parents.entry(&fk.table).or_default().insert(&fk.parent);
        }
    }
    let mut placed: BTreeSet<&TableRef> = BTreeSet::new();
    while placed.len() < nodes.len() {
        let ready: Vec<&TableRef> = parents
            .iter()
            .filter(|(t, ps)| !placed.contains(*t) && ps.iter().all(|p| placed.contains(p)))
            .map(|(t, _)| *t)
            .collect();
        // The kept edges are acyclic (checked above), so something is always ready.
        if ready.is_empty() {
            break;
        }
        for table in ready {
            placed.insert(table);
            plan.order.push(table.clone());
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> TableRef {
        TableRef::parse(name)
    }

    fn fk(name: &str, child: &str, parent: &str, nullable: bool) -> ForeignKey {
        ForeignKey {
            name: name.into(),
            table: t(child),
            columns: vec![format!("{}_id", parent.rsplit('.').next().unwrap())],
            parent: t(parent),
            parent_columns: vec!["id".into()],
            nullable,
            deferrable: false,
        }
    }

    fn names(order: &[TableRef]) -> Vec<String> {
        order.iter().map(|t| t.name.clone()).collect()
    }

    #[test]
    fn the_bank_fills_parents_first() {
        let fks = [
            fk("a", "addresses", "customers", false),
            fk("b", "accounts", "customers", false),
            fk("c", "cards", "accounts", false),
            fk("d", "transactions", "accounts", false),
            fk("e", "transactions", "cards", true),
        ];
        let tables: Vec<TableRef> = [
            "transactions",
            "cards",
            "customers",
            "addresses",
            "accounts",
        ]
        .map(t)
        .to_vec();
        let plan = fill_plan(&tables, &fks).unwrap();
        assert_eq!(
            names(&plan.order),
            [
                "customers",
                "accounts",
                "addresses",
                "cards",
                "transactions"
            ]
        );
        assert!(plan.deferred.is_empty());
    }

    #[test]
    fn nullable_links_of_cycles_and_self_references_are_deferred() {
        let fks = [
            fk("staff_manager", "staff", "staff", true),
            fk("store_manager", "store", "staff", true),
            fk("staff_store", "staff", "store", false),
            fk("city_of", "address", "city", false),
            fk("store_address", "store", "address", false),
        ];
        let tables: Vec<TableRef> = ["staff", "store", "address", "city"].map(t).to_vec();
        let plan = fill_plan(&tables, &fks).unwrap();
        assert_eq!(names(&plan.order), ["city", "address", "store", "staff"]);
        assert_eq!(plan.deferred_columns(&t("staff")), ["staff_id"]);
        assert_eq!(plan.deferred_columns(&t("store")), ["staff_id"]);
        assert!(plan.deferred_columns(&t("city")).is_empty());
    }

    #[test]
    fn a_cycle_of_not_null_links_is_named_exactly() {
        let fks = [
            fk("a_b", "a", "b", false),
            fk("b_c", "b", "c", false),
            fk("c_a", "c", "a", false),
            fk("d_a", "d", "a", false),
            fk("e_e", "e", "e", false),
        ];
        let err = fill_plan(&["a", "b", "c", "d"].map(t), &fks).unwrap_err();
        assert_eq!(
            err.to_string(),
            "foreign keys form a cycle that cannot be broken among public.a, public.b, public.c: \
             every one of its constraints (a_b on public.a, b_c on public.b, c_a on public.c) is \
             NOT NULL and not DEFERRABLE; make one of them nullable or DEFERRABLE, or leave one of \
             the tables out of the policy"
        );
        let err = fill_plan(&[t("e")], &fks).unwrap_err().to_string();
        assert!(
            err.contains("among public.e") && err.contains("e_e on public.e"),
            "{err}"
        );
        // One nullable link is enough to break a cycle.
        let mut fks = fks;
        fks[1].nullable = true;
        let plan = fill_plan(&["a", "b", "c", "d"].map(t), &fks).unwrap();
        assert_eq!(names(&plan.order), ["b", "a", "c", "d"]);
        assert!(plan.together.is_empty());
    }

    #[test]
    fn a_cycle_of_deferrable_not_null_links_is_filled_together() {
        let mut fks = vec![
            fk("a_b", "a", "b", false),
            fk("b_a", "b", "a", false),
            fk("c_a", "c", "a", false),
        ];
        fks[0].deferrable = true;
        // One deferrable link is enough when the rest of the cycle orders the tables.
        let plan = fill_plan(&["a", "b", "c"].map(t), &fks).unwrap();
        assert_eq!(names(&plan.order), ["a", "b", "c"]);
        assert_eq!(plan.together, vec![["a", "b"].map(t).into_iter().collect()]);
        fks[1].deferrable = true;
        let plan = fill_plan(&["a", "b", "c"].map(t), &fks).unwrap();
        assert_eq!(names(&plan.order), ["a", "b", "c"]);
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let tables: Vec<TableRef> = (0..1500).map(|i| t(&format!("t{i:05}"))).collect();
        let fks: Vec<ForeignKey> = (1..1500)
            .map(|i| {
                fk(
                    &format!("f{i}"),
                    &format!("t{i:05}"),
                    &format!("t{:05}", i - 1),
                    true,
                )
            })
            .collect();
        let plan = fill_plan(&tables, &fks).unwrap();
        assert_eq!(plan.order.first(), Some(&t("t00000")));
    }
}
