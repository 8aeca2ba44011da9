//! What a served text may name, as the caller knows it from the same reply.

use maskbus_model::TableRef;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The names a served text may use, built by the caller from the reply the text came in:
///
/// * the columns of the table the text belongs to (a `ColumnRef` must be one of them; for a
///   domain's default or check the only column is `value`, see [`Scope::of_domain`]);
/// * the sequences the consumer creates from the same reply, schema-qualified (a default may
///   call `nextval` of one of them, and of nothing else);
/// * the tables a foreign key may reference (the reply's tables).
///
/// Names are compared exactly, as the catalog spells them (`Order Id`, not `"Order Id"`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    columns: BTreeSet<String>,
    /// The reply's names, shared by the scopes of all its tables ([`Scope::with_columns`]): a
    /// reply of many tables is judged in time linear in its size, not quadratic.
    names: Arc<ReplyNames>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ReplyNames {
    sequences: BTreeSet<(String, String)>,
    tables: BTreeSet<(String, String)>,
}

impl Scope {
    /// A scope with the given columns and no sequence or referenced table.
    pub fn of_columns<I, S>(columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            columns: columns.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The scope of a domain's check: its one column is `value` (`CHECK (VALUE > 0)`).
    pub fn of_domain() -> Self {
        Self::of_columns(["value"])
    }

    /// The same sequences and tables (shared, not copied) with these columns: the scope of
    /// another table of the same reply.
    pub fn with_columns<I, S>(&self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            columns: columns.into_iter().map(Into::into).collect(),
            names: Arc::clone(&self.names),
        }
    }

    /// Adds sequences the consumer creates from the same reply (`nextval` may draw from them).
    pub fn with_sequences<'a, I>(mut self, sequences: I) -> Self
    where
        I: IntoIterator<Item = &'a TableRef>,
    {
        Arc::make_mut(&mut self.names).sequences.extend(
            sequences
                .into_iter()
                .map(|s| (s.schema.clone(), s.name.clone())),
        );
        self
    }

    /// Adds tables a foreign key may reference (the reply's tables).
    pub fn with_tables<'a, I>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = &'a TableRef>,
    {
        Arc::make_mut(&mut self.names).tables.extend(
            tables
                .into_iter()
                .map(|t| (t.schema.clone(), t.name.clone())),
        );
        self
    }

    pub(crate) fn has_column(&self, name: &str) -> bool {
        self.columns.contains(name)
    }

    pub(crate) fn has_table(&self, schema: &str, name: &str) -> bool {
        self.names
            .tables
            .contains(&(schema.to_string(), name.to_string()))
    }

    /// The sequence a `nextval` argument names: `schema.seq`, or a bare `seq` when exactly one
    /// sequence of the scope has that name.
    pub(crate) fn sequence(&self, parts: &[String]) -> Option<(&str, &str)> {
        let sequences = &self.names.sequences;
        match parts {
            [schema, name] => sequences
                .get(&(schema.clone(), name.clone()))
                .map(|(s, n)| (s.as_str(), n.as_str())),
            [name] => {
                let mut found = sequences.iter().filter(|(_, n)| n == name);
                match (found.next(), found.next()) {
                    (Some((s, n)), None) => Some((s.as_str(), n.as_str())),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}
