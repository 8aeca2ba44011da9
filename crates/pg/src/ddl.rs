//! The statements that create a served schema ([`maskbus_model::schema::Schema`]) in an empty
//! target, in dependency order: schemas, extensions, types, sequences, tables (partitioned
//! parents first), sequence ownership, constraints (foreign keys last), indexes, comments.
//!
//! Names are quoted here; expressions are Postgres's own deparsed text from the source, and each
//! is checked to be one fragment ([`fragment_is_single`]) before it is spliced: a producer
//! cannot end a statement and start another through a default.

use maskbus_model::quote_ident as q;
use maskbus_model::schema::{Identity, Schema, TypeKind};

/// A fragment that is not one SQL expression (named by what it was for).
#[derive(Debug, thiserror::Error)]
#[error("the served schema's {what} is not one SQL fragment (a `;`, a comment or an unclosed quote outside any literal); the consumer runs no such text")]
pub struct NotAFragment {
    pub what: String,
}

/// Whether `text` is one fragment: no `;`, no comment, every quote and parenthesis closed,
/// outside string literals and quoted names. Dollar quoting is refused (deparsed expressions
/// never use it).
pub fn fragment_is_single(text: &str) -> bool {
    let mut depth: i64 = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => loop {
                match chars.next() {
                    None => return false,
                    Some(x) if x == c => {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    Some(_) => {}
                }
            },
            ';' | '$' | '\\' => return false,
            '-' if chars.peek() == Some(&'-') => return false,
            '/' if chars.peek() == Some(&'*') => return false,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

fn checked(what: impl FnOnce() -> String, text: &str) -> Result<&str, NotAFragment> {
    if fragment_is_single(text) {
        Ok(text)
    } else {
        Err(NotAFragment { what: what() })
    }
}

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The statements that create `schema`, in order, for one transaction.
pub fn create(schema: &Schema) -> Result<Vec<String>, NotAFragment> {
    let mut out = Vec::new();
    for name in &schema.schemas {
        out.push(format!("CREATE SCHEMA IF NOT EXISTS {}", q(name)));
    }
    for e in &schema.extensions {
        out.push(format!(
            "CREATE EXTENSION IF NOT EXISTS {} WITH SCHEMA {}",
            q(&e.name),
            q(&e.schema)
        ));
    }
    for t in &schema.types {
        let name = format!("{}.{}", q(&t.schema), q(&t.name));
        let what = || format!("type {}.{}", t.schema, t.name);
        out.push(match &t.kind {
            TypeKind::Enum { labels } => format!(
                "CREATE TYPE {name} AS ENUM ({})",
                labels
                    .iter()
                    .map(|l| literal(l))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TypeKind::Domain {
                base,
                not_null,
                default,
                checks,
            } => {
                let mut sql = format!("CREATE DOMAIN {name} AS {}", checked(what, base)?);
                if let Some(default) = default {
                    sql += &format!(" DEFAULT {}", checked(what, default)?);
                }
                if *not_null {
                    sql += " NOT NULL";
                }
                for (constraint, check) in checks {
                    sql += &format!(" CONSTRAINT {} {}", q(constraint), checked(what, check)?);
                }
                sql
            }
            TypeKind::Composite { attributes } => {
                let mut parts = Vec::new();
                for (a, ty) in attributes {
                    parts.push(format!("{} {}", q(a), checked(what, ty)?));
                }
                format!("CREATE TYPE {name} AS ({})", parts.join(", "))
            }
            TypeKind::Range { subtype } => {
                format!(
                    "CREATE TYPE {name} AS RANGE (SUBTYPE = {})",
                    checked(what, subtype)?
                )
            }
        });
    }
    for s in &schema.sequences {
        let what = || format!("sequence {}.{}", s.schema, s.name);
        out.push(format!(
            "CREATE SEQUENCE {}.{} AS {} INCREMENT BY {} MINVALUE {} MAXVALUE {} START WITH {}{}",
            q(&s.schema),
            q(&s.name),
            checked(what, &s.data_type)?,
            s.increment,
            s.min,
            s.max,
            s.start,
            if s.cycle { " CYCLE" } else { "" }
        ));
    }
    for t in &schema.tables {
        let what = |part: &str| format!("{part} of table {}", t.table);
        let mut sql = format!("CREATE TABLE {}", t.table.sql());
        if let Some((parent, bound)) = &t.partition_of {
            sql += &format!(
                " PARTITION OF {} {}",
                parent.sql(),
                checked(|| what("partition bound"), bound)?
            );
        } else {
            let mut columns = Vec::new();
            for c in &t.columns {
                let mut col = format!(
                    "{} {}",
                    q(&c.name),
                    checked(|| what("a column type"), &c.sql_type)?
                );
                if let Some(collation) = &c.collation {
                    col += &format!(" COLLATE {}", checked(|| what("a collation"), collation)?);
                }
                if let Some(generated) = &c.generated {
                    col += &format!(
                        " GENERATED ALWAYS AS ({}) STORED",
                        checked(|| what("a generated column"), generated)?
                    );
                } else if let Some(default) = &c.default {
                    col += &format!(" DEFAULT {}", checked(|| what("a default"), default)?);
                }
                match c.identity {
                    Some(Identity::Always) => col += " GENERATED ALWAYS AS IDENTITY",
                    Some(Identity::ByDefault) => col += " GENERATED BY DEFAULT AS IDENTITY",
                    None => {}
                }
                if c.not_null {
                    col += " NOT NULL";
                }
                columns.push(col);
            }
            sql += &format!(" ({})", columns.join(", "));
        }
        if let Some(key) = &t.partition_key {
            sql += &format!(
                " PARTITION BY {}",
                checked(|| what("the partition key"), key)?
            );
        }
        out.push(sql);
    }
    for s in &schema.sequences {
        if let Some((table, column)) = &s.owned_by {
            out.push(format!(
                "ALTER SEQUENCE {}.{} OWNED BY {}.{}",
                q(&s.schema),
                q(&s.name),
                table.sql(),
                q(column)
            ));
        }
    }
    for c in &schema.constraints {
        out.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            c.table.sql(),
            q(&c.name),
            checked(
                || format!("constraint {} of {}", c.name, c.table),
                &c.definition
            )?
        ));
    }
    for i in &schema.indexes {
        let definition = checked(|| format!("index {} of {}", i.name, i.table), &i.definition)?;
        if !definition.starts_with("CREATE INDEX ")
            && !definition.starts_with("CREATE UNIQUE INDEX ")
        {
            return Err(NotAFragment {
                what: format!("index {} of {}", i.name, i.table),
            });
        }
        out.push(definition.to_string());
    }
    for c in &schema.comments {
        out.push(match &c.column {
            None => format!("COMMENT ON TABLE {} IS {}", c.table.sql(), literal(&c.text)),
            Some(column) => format!(
                "COMMENT ON COLUMN {}.{} IS {}",
                c.table.sql(),
                q(column),
                literal(&c.text)
            ),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_cannot_end_the_statement_or_hide_text() {
        for good in [
            "nextval('zoo.keepers_id_seq'::regclass)",
            "upper(name)",
            "CHECK ((VALUE > 0))",
            "'it''s'::text",
            "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
            "(\"weird;name\" > 0)",
        ] {
            assert!(fragment_is_single(good), "{good}");
        }
        for bad in [
            "0); DROP TABLE x; --",
            "1 -- hidden",
            "1 /* hidden */",
            "'open",
            "(1",
            "1)",
            "$$x$$",
        ] {
            assert!(!fragment_is_single(bad), "{bad}");
        }
    }
}
