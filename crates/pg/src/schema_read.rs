//! Reads the schema objects of a set of tables from the source catalog
//! ([`maskbus_model::schema::Schema`]): the tables and their partitions, columns, constraints,
//! indexes, the sequences their defaults draw from, the types they use (enums, domains,
//! composites, ranges, recursively), the extensions those or their expressions need, and the
//! comments. Read on a connection whose `search_path` is empty, so every name Postgres prints
//! outside `pg_catalog` is schema-qualified and the text means the same in any target.
//!
//! What it returns is the source's, unfiltered: the masking boundary
//! (`maskbus_mask::schema::serve`) decides what of it crosses.

use crate::{Database, PgError, TableRef};
use maskbus_model::schema::{
    ColumnDef, CommentDef, ConstraintDef, ConstraintKind, Extension, Identity, IndexDef,
    NotServedDef, NotServedKind, Schema, SequenceDef, TableDef, TypeDef, TypeKind,
};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::types::Oid;
use tokio_postgres::Client;

/// A user type the read cannot describe (a base type of its own, say): the tables using it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    pub table: TableRef,
    pub reason: String,
}

/// The schema of `tables` (and their partitions). `client` must be a connection of its own:
/// its `search_path` is emptied.
pub async fn read(
    source: &Database,
    client: &Client,
    tables: &[TableRef],
) -> Result<(Schema, Vec<Unreadable>), PgError> {
    let q = |action: &str| {
        let action = action.to_string();
        move |e: tokio_postgres::Error| source.query_error(action, &e)
    };
    client
        .batch_execute("SET search_path = ''")
        .await
        .map_err(q("emptying the search path to read the schema"))?;
    let names: Vec<String> = tables
        .iter()
        .map(|t| format!("{}\u{1}{}", t.schema, t.name))
        .collect();
    // The tables, then their partitions (depth first, parents before children).
    let rows = client
        .query(
            "WITH RECURSIVE t(oid, depth, parent) AS (
                 SELECT c.oid, 0, NULL::oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname || E'\\x01' || c.relname = ANY($1) AND c.relkind IN ('r', 'p')
                 UNION
                 SELECT i.inhrelid, t.depth + 1, t.oid FROM pg_inherits i JOIN t ON i.inhparent = t.oid
                   JOIN pg_class c ON c.oid = i.inhrelid AND c.relispartition)
             SELECT t.oid, n.nspname, c.relname, t.depth, t.parent,
                    CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END,
                    pg_get_expr(c.relpartbound, c.oid), obj_description(c.oid, 'pg_class')
               FROM t JOIN pg_class c ON c.oid = t.oid JOIN pg_namespace n ON n.oid = c.relnamespace
              ORDER BY t.depth, n.nspname, c.relname",
            &[&names],
        )
        .await
        .map_err(q("reading the tables of the policy"))?;
    let mut schema = Schema::default();
    let mut by_oid: BTreeMap<Oid, TableRef> = BTreeMap::new();
    /// (table, its parent, its partition key, its bound).
    type Read = (Oid, Option<Oid>, Option<String>, Option<String>);
    let mut parents: Vec<Read> = Vec::new();
    for row in &rows {
        let oid: Oid = row.get(0);
        let table = TableRef::new(row.get::<_, String>(1), row.get::<_, String>(2));
        if let Some(comment) = row.get::<_, Option<String>>(7) {
            schema.comments.push(CommentDef {
                table: table.clone(),
                column: None,
                text: comment,
            });
        }
        by_oid.insert(oid, table);
        parents.push((oid, row.get(4), row.get(5), row.get(6)));
    }
    let oids: Vec<Oid> = parents.iter().map(|p| p.0).collect();
    // Columns.
    let rows = client
        .query(
            "SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                    CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END,
                    a.attidentity::text,
                    CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END,
                    CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                         THEN format('%I.%I', cn.nspname, co.collname) END,
                    a.atttypid, col_description(a.attrelid, a.attnum)
               FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
               LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
               LEFT JOIN pg_collation co ON co.oid = a.attcollation
               LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
              WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attrelid, a.attnum",
            &[&oids],
        )
        .await
        .map_err(q("reading the columns of the policy's tables"))?;
    let mut columns: BTreeMap<Oid, Vec<ColumnDef>> = BTreeMap::new();
    let mut used_types: BTreeMap<Oid, BTreeSet<Oid>> = BTreeMap::new();
    for row in &rows {
        let rel: Oid = row.get(0);
        let name: String = row.get(1);
        if let (Some(comment), Some(table)) = (row.get::<_, Option<String>>(9), by_oid.get(&rel)) {
            schema.comments.push(CommentDef {
                table: table.clone(),
                column: Some(name.clone()),
                text: comment,
            });
        }
        used_types.entry(row.get(8)).or_default().insert(rel);
        columns.entry(rel).or_default().push(ColumnDef {
            name,
            sql_type: row.get(2),
            not_null: row.get(3),
            default: row.get(4),
            identity: match row.get::<_, String>(5).as_str() {
                "a" => Some(Identity::Always),
                "d" => Some(Identity::ByDefault),
                _ => None,
            },
            generated: row.get(6),
            collation: row.get(7),
        });
    }
    for (oid, parent, key, bound) in &parents {
        let Some(table) = by_oid.get(oid).cloned() else {
            continue;
        };
        schema.tables.push(TableDef {
            table,
            columns: columns.remove(oid).unwrap_or_default(),
            partition_key: key.clone(),
            partition_of: parent
                .and_then(|p| by_oid.get(&p).cloned())
                .zip(bound.clone()),
        });
    }
    let mut unreadable = Vec::new();
    let types = read_types(client, &used_types, &by_oid, &mut unreadable)
        .await
        .map_err(q("reading the types of the policy's columns"))?;
    schema.types = types.0;
    let mut extensions: BTreeSet<(String, String)> = types.1;
    // Constraints of the tables themselves (a partition's come from its parent).
    let rows = client
        .query(
            "SELECT k.conrelid, k.conname, k.contype::text, pg_get_constraintdef(k.oid), k.confrelid
               FROM pg_constraint k
              WHERE k.conrelid = ANY($1) AND k.contype IN ('p', 'u', 'f', 'c', 'x')
                AND k.conislocal AND k.conparentid = 0
              ORDER BY CASE k.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'c' THEN 2 WHEN 'x' THEN 3 ELSE 4 END,
                       k.conrelid, k.conname",
            &[&oids],
        )
        .await
        .map_err(q("reading the constraints of the policy's tables"))?;
    for row in &rows {
        let kind = match row.get::<_, String>(2).as_str() {
            "p" => ConstraintKind::Primary,
            "u" => ConstraintKind::Unique,
            "c" => ConstraintKind::Check,
            "x" => ConstraintKind::Exclusion,
            _ => ConstraintKind::Foreign,
        };
        // Every row is of a table read above (`conrelid = ANY`); a table attached meanwhile
        // is passed over, never a panic.
        let Some(table) = by_oid.get(&row.get::<_, Oid>(0)).cloned() else {
            continue;
        };
        let references: Oid = row.get(4);
        if kind == ConstraintKind::Foreign && !by_oid.contains_key(&references) {
            // A key to a table the sync does not carry: the target cannot hold its parents.
            continue;
        }
        schema.constraints.push(ConstraintDef {
            table,
            name: row.get(1),
            kind,
            definition: row.get(3),
        });
    }
    // Indexes that back no constraint, and are not a partition's copy of its parent's.
    let rows = client
        .query(
            "SELECT i.indrelid, ic.relname, pg_get_indexdef(i.indexrelid)
               FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
              WHERE i.indrelid = ANY($1)
                AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid
                                   AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x'))
                AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
              ORDER BY i.indrelid, ic.relname",
            &[&oids],
        )
        .await
        .map_err(q("reading the indexes of the policy's tables"))?;
    for row in &rows {
        if let Some(table) = by_oid.get(&row.get::<_, Oid>(0)).cloned() {
            schema.indexes.push(IndexDef {
                table,
                name: row.get(1),
                definition: row.get(2),
            });
        }
    }
    // Sequences the defaults draw from, and the column that owns each.
    let rows = client
        .query(
            "SELECT DISTINCT n.nspname, c.relname, format_type(s.seqtypid, NULL), s.seqstart,
                    s.seqincrement, s.seqmin, s.seqmax, s.seqcycle, o.refobjid, oa.attname
               FROM pg_attrdef ad
               JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                               AND d.refclassid = 'pg_class'::regclass
               JOIN pg_sequence s ON s.seqrelid = d.refobjid
               JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
               LEFT JOIN pg_depend o ON o.classid = 'pg_class'::regclass AND o.objid = s.seqrelid
                                    AND o.refclassid = 'pg_class'::regclass AND o.deptype = 'a'
               LEFT JOIN pg_attribute oa ON oa.attrelid = o.refobjid AND oa.attnum = o.refobjsubid
              WHERE ad.adrelid = ANY($1)
              ORDER BY 1, 2",
            &[&oids],
        )
        .await
        .map_err(q("reading the sequences of the policy's tables"))?;
    for row in &rows {
        let owner: Option<Oid> = row.get(8);
        schema.sequences.push(SequenceDef {
            schema: row.get(0),
            name: row.get(1),
            data_type: row.get(2),
            start: row.get(3),
            increment: row.get(4),
            min: row.get(5),
            max: row.get(6),
            cycle: row.get(7),
            owned_by: owner
                .and_then(|o| by_oid.get(&o).cloned())
                .zip(row.get::<_, Option<String>>(9)),
        });
    }
    // Extensions that the tables' expressions, constraints and indexes use.
    let rows = client
        .query(
            "SELECT DISTINCT e.extname, en.nspname
               FROM pg_depend d
               JOIN pg_depend x ON x.classid = d.refclassid AND x.objid = d.refobjid AND x.deptype = 'e'
               JOIN pg_extension e ON e.oid = x.refobjid AND x.refclassid = 'pg_extension'::regclass
               JOIN pg_namespace en ON en.oid = e.extnamespace
              WHERE (d.classid = 'pg_class'::regclass AND d.objid IN (
                        SELECT indexrelid FROM pg_index WHERE indrelid = ANY($1)
                        UNION SELECT unnest($1)))
                 OR (d.classid = 'pg_attrdef'::regclass AND d.objid IN (
                        SELECT oid FROM pg_attrdef WHERE adrelid = ANY($1)))
                 OR (d.classid = 'pg_constraint'::regclass AND d.objid IN (
                        SELECT oid FROM pg_constraint WHERE conrelid = ANY($1)))",
            &[&oids],
        )
        .await
        .map_err(q("reading the extensions the policy's tables use"))?;
    for row in &rows {
        extensions.insert((row.get(0), row.get(1)));
    }
    schema.extensions = extensions
        .into_iter()
        .map(|(name, schema)| Extension { name, schema })
        .collect();
    let mut namespaces: BTreeSet<String> = schema
        .tables
        .iter()
        .map(|t| t.table.schema.clone())
        .chain(schema.types.iter().map(|t| t.schema.clone()))
        .chain(schema.sequences.iter().map(|s| s.schema.clone()))
        .chain(schema.extensions.iter().map(|e| e.schema.clone()))
        .collect();
    namespaces.remove(maskbus_model::DEFAULT_SCHEMA);
    schema.schemas = namespaces.into_iter().collect();
    // What no served schema carries, named so the consumer's report says what the target lacks.
    let rows = client
        .query(crate::statements::NOT_SERVED_OF_TABLES, &[&names])
        .await
        .map_err(q(
            "reading the triggers, rules and policies of the policy's tables",
        ))?;
    for row in &rows {
        if let Some(kind) = NotServedKind::from_catalog(row.get(2)) {
            schema.not_served.push(NotServedDef {
                table: TableRef::new(row.get::<_, String>(0), row.get::<_, String>(1)),
                kind,
                name: row.get(3),
            });
        }
    }
    Ok((schema, unreadable))
}

/// The user types behind `used` (type oid -> tables using it), each after those it uses, and
/// the extensions that own the types among them (described as the extension, not the type).
async fn read_types(
    client: &Client,
    used: &BTreeMap<Oid, BTreeSet<Oid>>,
    tables: &BTreeMap<Oid, TableRef>,
    unreadable: &mut Vec<Unreadable>,
) -> Result<(Vec<TypeDef>, BTreeSet<(String, String)>), tokio_postgres::Error> {
    struct Found {
        def: Option<TypeDef>,
        uses: Vec<Oid>,
    }
    let mut found: BTreeMap<Oid, Found> = BTreeMap::new();
    let mut users: BTreeMap<Oid, BTreeSet<Oid>> = used.clone();
    let mut extensions = BTreeSet::new();
    let mut todo: Vec<Oid> = used.keys().copied().collect();
    while !todo.is_empty() {
        let rows = client
            .query(
                "SELECT t.oid, n.nspname, t.typname, t.typtype::text, t.typelem, t.typbasetype,
                        t.typnotnull, t.typdefault,
                        CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) END,
                        ARRAY(SELECT enumlabel::text FROM pg_enum WHERE enumtypid = t.oid ORDER BY enumsortorder),
                        ARRAY(SELECT conname::text FROM pg_constraint WHERE contypid = t.oid AND contype = 'c' ORDER BY conname),
                        ARRAY(SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contypid = t.oid AND contype = 'c' ORDER BY conname),
                        ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = t.typrelid AND attnum > 0 AND NOT attisdropped ORDER BY attnum),
                        ARRAY(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = t.typrelid AND attnum > 0 AND NOT attisdropped ORDER BY attnum),
                        ARRAY(SELECT atttypid FROM pg_attribute WHERE attrelid = t.typrelid AND attnum > 0 AND NOT attisdropped ORDER BY attnum),
                        (SELECT rngsubtype FROM pg_range WHERE rngtypid = t.oid),
                        (SELECT format_type(rngsubtype, NULL) FROM pg_range WHERE rngtypid = t.oid),
                        (SELECT e.extname || E'\\x01' || en.nspname FROM pg_depend d
                           JOIN pg_extension e ON e.oid = d.refobjid JOIN pg_namespace en ON en.oid = e.extnamespace
                          WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'),
                        (SELECT relkind::text FROM pg_class WHERE oid = t.typrelid)
                   FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                  WHERE t.oid = ANY($1)",
                &[&todo],
            )
            .await?;
        todo.clear();
        for row in &rows {
            let oid: Oid = row.get(0);
            let schema: String = row.get(1);
            let name: String = row.get(2);
            let typtype: String = row.get(3);
            let elem: Oid = row.get(4);
            let mut uses = Vec::new();
            let builtin = schema == "pg_catalog" || schema == "information_schema";
            let def = if let Some(extension) = row.get::<_, Option<String>>(17) {
                if let Some((ext, ns)) = extension.split_once('\u{1}') {
                    extensions.insert((ext.to_string(), ns.to_string()));
                }
                None
            } else if elem != 0 && typtype == "b" {
                uses.push(elem); // an array: its element type is what needs making
                None
            } else if builtin {
                None
            } else {
                let kind = match typtype.as_str() {
                    "e" => Some(TypeKind::Enum { labels: row.get(9) }),
                    "d" => {
                        uses.push(row.get::<_, Oid>(5));
                        let names: Vec<String> = row.get(10);
                        let checks: Vec<String> = row.get(11);
                        Some(TypeKind::Domain {
                            base: row.get::<_, Option<String>>(8).unwrap_or_default(),
                            not_null: row.get(6),
                            default: row.get(7),
                            checks: names.into_iter().zip(checks).collect(),
                        })
                    }
                    "c" if row.get::<_, Option<String>>(18).as_deref() == Some("c") => {
                        uses.extend(row.get::<_, Vec<Oid>>(14));
                        let names: Vec<String> = row.get(12);
                        let types: Vec<String> = row.get(13);
                        Some(TypeKind::Composite {
                            attributes: names.into_iter().zip(types).collect(),
                        })
                    }
                    "r" => {
                        if let Some(subtype) = row.get::<_, Option<Oid>>(15) {
                            uses.push(subtype);
                        }
                        Some(TypeKind::Range {
                            subtype: row.get::<_, Option<String>>(16).unwrap_or_default(),
                        })
                    }
                    _ => None,
                };
                if kind.is_none() {
                    for table in users.get(&oid).into_iter().flatten() {
                        if let Some(table) = tables.get(table) {
                            unreadable.push(Unreadable {
                                table: table.clone(),
                                reason: format!(
                                    "it uses type {}.{name}, which maskbus cannot describe (a base type or a table's row type); create it in the target by hand",
                                    maskbus_model::shorten(&schema)
                                ),
                            });
                        }
                    }
                }
                kind.map(|kind| TypeDef { schema, name, kind })
            };
            let holders = users.get(&oid).cloned().unwrap_or_default();
            for used in &uses {
                users
                    .entry(*used)
                    .or_default()
                    .extend(holders.iter().copied());
                if !found.contains_key(used) && !todo.contains(used) {
                    todo.push(*used);
                }
            }
            found.insert(oid, Found { def, uses });
        }
        todo.retain(|o| !found.contains_key(o));
    }
    // Each type after the types it uses.
    let mut ordered = Vec::new();
    let mut done: BTreeSet<Oid> = BTreeSet::new();
    fn visit(
        oid: Oid,
        found: &BTreeMap<Oid, Found>,
        done: &mut BTreeSet<Oid>,
        ordered: &mut Vec<TypeDef>,
    ) {
        if !done.insert(oid) {
            return;
        }
        if let Some(f) = found.get(&oid) {
            for used in &f.uses {
                visit(*used, found, done, ordered);
            }
            if let Some(def) = &f.def {
                ordered.push(def.clone());
            }
        }
    }
    for oid in found.keys() {
        visit(*oid, &found, &mut done, &mut ordered);
    }
    Ok((ordered, extensions))
}
