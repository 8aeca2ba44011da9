//! Loading empty tables in bulk, as `pg_restore` does: the secondary indexes and foreign keys of
//! the tables being filled are lifted first (their definitions read from the catalog), rows go
//! in with `COPY ... FROM STDIN`, and the lifted objects are rebuilt at the end, where every
//! foreign key is validated once, in one pass, instead of row by row.
//!
//! Indexes that back a constraint (primary keys, UNIQUE, exclusion) stay: they are what the keys
//! are checked against. Indexes of partitioned tables and of partitions stay too (a partitioned
//! index is rebuilt only through its partitions, which `pg_get_indexdef` does not say).
//! What to lift is read here; where the definitions are kept until they are restored is the
//! caller's business (the seeder holds them in its transaction, the consumer in
//! `maskbus.lifted`, so an interrupted load restores them on its next run).

use crate::model::{ForeignKey, TableRef};
use crate::{quote_ident, Database, PgError};
use tokio_postgres::GenericClient;

/// The `work_mem` a foreign key's validation gets at least (see [`Lifted::restore_batch`]).
pub const VALIDATION_WORK_MEM: &str = "64MB";

/// What kind of object a [`Lifted`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiftedKind {
    Index,
    ForeignKey,
}

impl LiftedKind {
    /// The spelling kept in bookkeeping tables and shown to people.
    pub fn as_str(self) -> &'static str {
        match self {
            LiftedKind::Index => "index",
            LiftedKind::ForeignKey => "foreign key",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "index" => Some(LiftedKind::Index),
            "foreign key" => Some(LiftedKind::ForeignKey),
            _ => None,
        }
    }
}

/// A secondary index or foreign key taken off a table for a bulk load, with what rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifted {
    pub table: TableRef,
    pub kind: LiftedKind,
    pub name: String,
    /// For an index, its whole `CREATE INDEX` statement (schema-qualified); for a foreign key,
    /// its `FOREIGN KEY (...) REFERENCES ...` clause.
    pub definition: String,
    /// For a foreign key, what it links: while it is lifted the catalog no longer says, and
    /// the fill order and the skipping of children of failed parents still need it.
    pub foreign_key: Option<ForeignKey>,
}

impl Lifted {
    /// The statement that takes it off.
    pub fn drop_sql(&self) -> String {
        match self.kind {
            LiftedKind::Index => format!(
                "DROP INDEX {}.{}",
                quote_ident(&self.table.schema),
                quote_ident(&self.name)
            ),
            LiftedKind::ForeignKey => format!(
                "ALTER TABLE {} DROP CONSTRAINT {}",
                self.table.sql(),
                quote_ident(&self.name)
            ),
        }
    }

    /// The statement that puts it back (a foreign key is validated by it, in one pass).
    pub fn restore_sql(&self) -> String {
        match self.kind {
            LiftedKind::Index => self.definition.clone(),
            LiftedKind::ForeignKey => format!(
                "ALTER TABLE {} ADD CONSTRAINT {} {}",
                self.table.sql(),
                quote_ident(&self.name),
                self.definition
            ),
        }
    }

    /// The statements to run, as one batch inside the transaction that puts it back: for a
    /// foreign key, whose validation joins the whole child with its parent and spills to disk
    /// in a small `work_mem`, `work_mem` is first raised (never lowered) to
    /// [`VALIDATION_WORK_MEM`] for that transaction only.
    pub fn restore_batch(&self) -> String {
        match self.kind {
            LiftedKind::Index => self.restore_sql(),
            LiftedKind::ForeignKey => format!(
                "SELECT set_config('work_mem', '{VALIDATION_WORK_MEM}', true) \
                  WHERE pg_size_bytes(current_setting('work_mem')) < pg_size_bytes('{VALIDATION_WORK_MEM}'); {}",
                self.restore_sql()
            ),
        }
    }

    /// Indexes first: a foreign key's validation reads them.
    pub fn restore_order(&self) -> u8 {
        match self.kind {
            LiftedKind::Index => 0,
            LiftedKind::ForeignKey => 1,
        }
    }
}

/// The secondary indexes and foreign keys of `tables` that a bulk load may lift: only those of
/// tables the session's role owns (only an owner may drop and add them back), each foreign key
/// with its model. Call it inside
/// a transaction: for the time of the read, the search_path is emptied so that every name in a
/// definition comes out schema-qualified, and then put back.
pub async fn liftable(
    target: &Database,
    client: &impl GenericClient,
    tables: &[TableRef],
) -> Result<Vec<Lifted>, PgError> {
    let names: Vec<String> = tables.iter().map(TableRef::sql).collect();
    let q = |e: tokio_postgres::Error| {
        target.query_error("reading the indexes and foreign keys to lift", &e)
    };
    let search_path: String = client
        .query_one(
            "SELECT current_setting('search_path'), set_config('search_path', '', true)",
            &[],
        )
        .await
        .map_err(q)?
        .get(0);
    let rows = client
        .query(
            "WITH t AS (SELECT c.oid, n.nspname, c.relname, c.relkind, c.relispartition,
                           pg_has_role(c.relowner, 'USAGE') AS owned
                          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE c.oid = ANY (SELECT to_regclass(x)::oid FROM unnest($1::text[]) x))
             SELECT t.nspname, t.relname, 'foreign key', k.conname, pg_get_constraintdef(k.oid)
               FROM t JOIN pg_constraint k ON k.conrelid = t.oid
              WHERE k.contype = 'f' AND k.conparentid = 0 AND NOT t.relispartition AND t.owned
             UNION ALL
             SELECT t.nspname, t.relname, 'index', ic.relname, pg_get_indexdef(i.indexrelid)
               FROM t JOIN pg_index i ON i.indrelid = t.oid
                      JOIN pg_class ic ON ic.oid = i.indexrelid
              WHERE t.relkind = 'r' AND NOT t.relispartition AND t.owned
                AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
             ORDER BY 1, 2, 3, 4",
            &[&names],
        )
        .await
        .map_err(q)?;
    client
        .query_one(
            "SELECT set_config('search_path', $1, true)",
            &[&search_path],
        )
        .await
        .map_err(q)?;
    let schemas: Vec<String> = tables
        .iter()
        .map(|t| t.schema.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let models = crate::catalog::foreign_keys(target, client, &schemas).await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let table = TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1));
            let kind = LiftedKind::parse(r.get(2))?;
            let name: String = r.get(3);
            let foreign_key = match kind {
                LiftedKind::Index => None,
                // A foreign key the model does not know is not lifted: it could not be planned.
                LiftedKind::ForeignKey => Some(
                    models
                        .iter()
                        .find(|fk| fk.table == table && fk.name == name)?
                        .clone(),
                ),
            };
            Some(Lifted {
                table,
                kind,
                name,
                definition: r.get(4),
                foreign_key,
            })
        })
        .collect())
}

/// `COPY table (columns) FROM STDIN`, text format.
pub fn copy_in(table: &TableRef, columns: &[String]) -> String {
    format!(
        "COPY {} ({}) FROM STDIN",
        table.sql(),
        columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Appends one row in COPY's text format: values as Postgres prints them, tab-separated,
/// `\N` for NULL, backslash, tab, newline and carriage return escaped.
pub fn copy_row(out: &mut Vec<u8>, values: &[Option<&str>]) {
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match value {
            None => out.extend_from_slice(b"\\N"),
            Some(text)
                if !text
                    .bytes()
                    .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r')) =>
            {
                out.extend_from_slice(text.as_bytes());
            }
            Some(text) => {
                for &b in text.as_bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        _ => out.push(b),
                    }
                }
            }
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_rows_escape_what_the_text_format_reserves() {
        let mut out = Vec::new();
        copy_row(&mut out, &[Some("a\tb"), None, Some("c\\d\ne\r"), Some("")]);
        assert_eq!(out, b"a\\tb\t\\N\tc\\\\d\\ne\\r\t\n".to_vec());
        // A value that spells \N is data, not NULL.
        let mut out = Vec::new();
        copy_row(&mut out, &[Some("\\N")]);
        assert_eq!(out, b"\\\\N\n".to_vec());
    }

    #[test]
    fn lifted_objects_drop_and_restore_by_quoted_name() {
        let fk = Lifted {
            table: TableRef::new("sales", "Order"),
            kind: LiftedKind::ForeignKey,
            name: "order_customer_fk".into(),
            definition: "FOREIGN KEY (customer_id) REFERENCES sales.customer(id)".into(),
            foreign_key: None,
        };
        assert_eq!(
            fk.drop_sql(),
            "ALTER TABLE \"sales\".\"Order\" DROP CONSTRAINT \"order_customer_fk\""
        );
        assert_eq!(
            fk.restore_sql(),
            "ALTER TABLE \"sales\".\"Order\" ADD CONSTRAINT \"order_customer_fk\" FOREIGN KEY (customer_id) REFERENCES sales.customer(id)"
        );
        let index = Lifted {
            kind: LiftedKind::Index,
            name: "order_date_idx".into(),
            definition: "CREATE INDEX order_date_idx ON sales.\"Order\" USING btree (placed)"
                .into(),
            ..fk
        };
        assert_eq!(index.drop_sql(), "DROP INDEX \"sales\".\"order_date_idx\"");
        assert_eq!(index.restore_sql(), index.definition);
        assert!(
            index.restore_order()
                < Lifted {
                    kind: LiftedKind::ForeignKey,
                    ..index.clone()
                }
                .restore_order()
        );
        assert_eq!(
            LiftedKind::parse(LiftedKind::ForeignKey.as_str()),
            Some(LiftedKind::ForeignKey)
        );
    }
}
