//! What the consumer owns in its target, and the rule that it writes nothing else.
//!
//! The bus is untrusted input: whatever the producer serves (an entity list, a schema, pages,
//! changes, hashes) and whatever a tool call names, maskbus writes, repairs, truncates, alters
//! and drops only the tables recorded in `maskbus.owned_tables` ([`Owned`]):
//! - those it created from the served schema, recorded in the transaction that creates them
//!   (`TargetDb::create_schema`, and a `CREATE TABLE` of a schema change, [`Step::Created`]);
//! - those its own config told it to take: on the first run, once the first-run guard passed
//!   (or `--init-target` took the database), the tables the target was made with (by hand,
//!   `pg_dump --schema-only`) ([`adopt_all`]); on a target that has not taken in a served
//!   schema yet, the served tables it holds while the guard still passes; with
//!   `--init-target`, the served tables it holds ([`adopt_served`]).
//!
//! A served table outside that set fails closed by name with [`not_owned`], and is never
//! written. A name in schema `maskbus` (the consumer's own bookkeeping) or in one of
//! PostgreSQL's own schemas is refused before anything else, wherever it comes from
//! ([`is_reserved`]): so no page or tool can write `maskbus.schema_state`, the baseline schema
//! changes are computed from. Every write path checks again before it writes: the page writer,
//! the bulk load (lift and unload), the change stream, the repair, the rebuild of what a load
//! lifted, the `insert_rows` tool. A schema change applies to owned tables only ([`decide`]),
//! and an index is dropped only when the catalog says it is that owned table's
//! ([`Step::DropIndex`]).

use super::bookkeeping;
use super::target_db::TargetDb;
use super::ConsumerError;
use maskbus_model::schema::{Change, ConstraintKind, Schema};
use maskbus_pg::{Database, PgError, TableRef};
use std::collections::BTreeSet;
use tokio_postgres::GenericClient;

/// Whether `schema` is one maskbus never writes whatever names it: `maskbus` (its own
/// bookkeeping), `information_schema`, and PostgreSQL's `pg_*` schemas (`pg_catalog`,
/// `pg_toast`, `pg_temp_N`, ...). Case does not matter.
pub fn is_reserved_schema(schema: &str) -> bool {
    let schema = schema.to_ascii_lowercase();
    schema == "maskbus" || schema == "information_schema" || schema.starts_with("pg_")
}

/// Whether `entity` (`schema.table`, or a table of `public`) is in a reserved schema
/// ([`is_reserved_schema`]).
pub fn is_reserved(entity: &str) -> bool {
    is_reserved_schema(&TableRef::parse(&maskbus_model::qualify(entity)).schema)
}

/// Why `entity` (in a reserved schema) is refused.
pub fn reserved(entity: &str) -> String {
    let schema = TableRef::parse(&maskbus_model::qualify(entity)).schema;
    let whose = if schema.eq_ignore_ascii_case("maskbus") {
        "maskbus's own bookkeeping"
    } else {
        "PostgreSQL's own"
    };
    format!(
        "{entity} is in schema {schema}, {whose}: maskbus never writes it, whatever the producer or a tool names; leave it out of the policy"
    )
}

/// Why `entity` (a table maskbus neither created nor adopted) is refused.
pub fn not_owned(entity: &str) -> String {
    format!(
        "{entity} is not a table maskbus created or adopted in this target; it is never written (adopt it with --init-target if it should be synced)"
    )
}

/// The tables maskbus owns in its target (`maskbus.owned_tables`), by `schema.table`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owned {
    tables: BTreeSet<String>,
}

impl Owned {
    /// Reads the set on `client` (in its transaction, when it has one).
    pub async fn read(target: &Database, client: &impl GenericClient) -> Result<Self, PgError> {
        let rows = client
            .query(bookkeeping::OWNED_TABLES, &[])
            .await
            .map_err(|e| target.query_error("reading maskbus.owned_tables", &e))?;
        Ok(Self {
            tables: rows.iter().map(|r| r.get(0)).collect(),
        })
    }

    /// Reads the set from `db`.
    pub async fn load(db: &TargetDb) -> Result<Self, PgError> {
        let client = db.client().await?;
        let client: &tokio_postgres::Client = &client;
        Self::read(db.target(), client).await
    }

    /// Whether maskbus may write `entity` (`schema.table`): it created or adopted it, and it is
    /// in no reserved schema.
    pub fn owns(&self, entity: &str) -> bool {
        !is_reserved(entity) && self.tables.contains(entity)
    }

    /// [`Owned::owns`], or the error that names the table and the fix.
    pub fn require(&self, entity: &str) -> Result<(), ConsumerError> {
        if is_reserved(entity) {
            return Err(ConsumerError::Reserved {
                entity: entity.to_string(),
            });
        }
        if !self.tables.contains(entity) {
            return Err(ConsumerError::NotOwned {
                entity: entity.to_string(),
            });
        }
        Ok(())
    }

    /// [`Owned::require`] where a database error is expected: a refusal of `doing` on `target`.
    pub fn refuse_unless_owned(
        &self,
        target: &Database,
        doing: &str,
        table: &TableRef,
    ) -> Result<(), PgError> {
        let entity = table.to_string();
        self.require(&entity).map_err(|e| {
            target.refusal(
                format!("{doing} {entity}"),
                match e {
                    ConsumerError::NotOwned { .. } => not_owned(&entity),
                    _ => reserved(&entity),
                },
            )
        })
    }
}

/// The steps of `changes` (one table's, or the types', of a served schema change that
/// [`decide`] let through), in order: each change's DDL, an index dropped only as its table's,
/// and what they do to `maskbus.owned_tables` (a table created is recorded, one dropped
/// forgotten), all to run in one transaction.
pub fn steps(
    changes: &[&Change],
    served: &maskbus_model::schema::Schema,
    not_made: &mut Vec<maskbus_pg::ddl::Refused>,
) -> Result<Vec<Step>, ConsumerError> {
    let mut out = Vec::new();
    let (mut created, mut dropped) = (Vec::new(), Vec::new());
    for change in changes {
        match change {
            Change::DropIndex { table, name } => {
                out.push(Step::DropIndex {
                    table: table.clone(),
                    name: name.clone(),
                });
                continue;
            }
            Change::CreateTable(def) => created.push(def.table.to_string()),
            Change::DropTable(table) => dropped.push(table.to_string()),
            _ => {}
        }
        let (sql, refused) =
            maskbus_pg::ddl::alter(change, served).map_err(|e| ConsumerError::BadReply {
                entity: change.table().map(|t| t.to_string()).unwrap_or_default(),
                reason: e.to_string(),
            })?;
        not_made.extend(refused);
        out.extend(sql.into_iter().map(Step::Sql));
    }
    if !created.is_empty() {
        out.push(Step::Created(created));
    }
    if !dropped.is_empty() {
        out.push(Step::Dropped(dropped));
    }
    Ok(out)
}

/// Adopts the served tables (`offered`, `schema.table`) that the target already holds and
/// maskbus does not own yet, when its own config says so: with `init_target`
/// (`--init-target`), always; else only on a target that has not taken in a served schema yet
/// (its first run: a hand-made or `pg_dump`'d schema), and only while the first-run guard
/// passes (no table outside maskbus's own schema holds a row). Partitions come with their
/// tables. Nothing else ever makes a table maskbus's but creating it.
pub async fn adopt_served(
    db: &TargetDb,
    offered: &[String],
    init_target: bool,
) -> Result<(), ConsumerError> {
    let owned = Owned::load(db).await?;
    let candidates: Vec<&String> = offered
        .iter()
        .filter(|e| !is_reserved(e) && !owned.owns(e))
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    let adopting = init_target
        || (db.schema_baseline().await?.is_none() && db.first_run_guard_passes().await?);
    if !adopting {
        return Ok(());
    }
    let tables: Vec<TableRef> = candidates.iter().map(|e| TableRef::parse(e)).collect();
    let schemas: Vec<&str> = tables.iter().map(|t| t.schema.as_str()).collect();
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let client = db.client().await?;
    let adopted: Vec<String> = client
        .query(bookkeeping::ADOPT, &[&schemas, &names])
        .await
        .map_err(|e| {
            db.target()
                .query_error("adopting tables in maskbus.owned_tables", &e)
        })?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !adopted.is_empty() {
        tracing::info!(
            tables = %adopted.join(", "),
            by = if init_target { "--init-target" } else { "the first run" },
            "adopted the served tables the target already held: maskbus writes them from now on"
        );
    }
    Ok(())
}

/// Adopts every table `target` holds, on its first run (no marker yet) once the first-run guard
/// passed (the database held no row) or `--init-target` took it: the schema the test database
/// was made with (by hand, `pg_dump --schema-only`, `maskbus bank init`). A table added after
/// that is never maskbus's, unless `--init-target` adopts it when it is served.
pub async fn adopt_all(target: &Database) -> Result<(), PgError> {
    let client = target.connect().await?;
    let adopted: Vec<String> = client
        .query(bookkeeping::ADOPT_ALL, &[])
        .await
        .map_err(|e| target.query_error("adopting tables in maskbus.owned_tables", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !adopted.is_empty() {
        tracing::info!(
            tables = adopted.len(),
            "first run: adopted the tables the target was made with; maskbus writes no table added later unless it created it"
        );
    }
    Ok(())
}

/// The catalog's answer to "is index `$3` one of table `$1`.`$2`'s": a row when it is. An index
/// is resolved by its table's oid, never by schema and name alone.
const INDEX_OF_TABLE: &str = "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = to_regclass(format('%I.%I', $1::text, $2::text)) AND c.relname = $3";

/// One step of one table's schema change, run in that change's transaction
/// (`TargetDb::apply_changes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A statement of `maskbus_pg::ddl`, on a table [`decide`] let through.
    Sql(String),
    /// Drops index `name` if it is `table`'s (the catalog says so by the table's oid): an index
    /// of that name on any other table, in the same schema, is left alone.
    DropIndex { table: TableRef, name: String },
    /// Records `tables` (`schema.table`) as created by maskbus.
    Created(Vec<String>),
    /// Forgets `tables` (dropped by this change) and every owned table that is gone.
    Dropped(Vec<String>),
}

impl Step {
    /// Runs the step on `tx`; `what` names the table in errors.
    pub async fn run(
        &self,
        tx: &impl GenericClient,
        target: &Database,
        what: &str,
    ) -> Result<(), PgError> {
        let failed =
            |action: String| move |e: tokio_postgres::Error| target.query_error(action, &e);
        match self {
            Step::Sql(statement) => {
                // Named by maskbus's own statement (kind and object), with the grant a missing
                // privilege needs.
                tx.execute(statement.as_str(), &[]).await.map_err(|e| {
                    let described = maskbus_pg::ddl::describe(statement);
                    target.query_error_fixed(
                        format!("changing the schema of {what}: {described}"),
                        &e,
                        |code| {
                            (code == "42501").then(|| {
                                described.permission_fix(
                                    target.user().unwrap_or("the target role"),
                                    target.dbname(),
                                )
                            })
                        },
                    )
                })?;
            }
            Step::DropIndex { table, name } => {
                let theirs = tx
                    .query_opt(INDEX_OF_TABLE, &[&table.schema, &table.name, name])
                    .await
                    .map_err(failed(format!("looking for index {name} of {table}")))?;
                if theirs.is_some() {
                    let drop = maskbus_pg::statements::drop_index_of(table, name);
                    tx.execute(drop.as_str(), &[])
                        .await
                        .map_err(failed(format!("dropping index {name} of {table}")))?;
                } else {
                    tracing::warn!(%table, index = %name, "the served schema drops an index this table does not have (one of that name, if any, is another table's): nothing dropped");
                }
            }
            Step::Created(tables) => {
                tx.execute(bookkeeping::RECORD_CREATED, &[tables])
                    .await
                    .map_err(failed("recording maskbus.owned_tables".into()))?;
            }
            Step::Dropped(tables) => {
                tx.execute(bookkeeping::FORGET_OWNED, &[tables])
                    .await
                    .map_err(failed("recording maskbus.owned_tables".into()))?;
            }
        }
        Ok(())
    }
}

/// What a served schema change may do to one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Its changes run (a `CREATE TABLE` of a table the target lacks records it created; a
    /// `DROP TABLE` of an owned table forgets it).
    Apply,
    /// A table maskbus owns (adopted) that the baseline lacks: the served description is taken
    /// as it is, nothing runs (the target's differences stay, as on a first run).
    Describe,
    /// A table no longer served that maskbus does not own: nothing runs, the baseline forgets it.
    LeaveAlone,
    /// Not maskbus's to change: nothing runs, and it fails closed with the reason.
    Refuse(String),
}

/// What one table's `changes` (of a served schema change) may do, from what maskbus owns and
/// whether the target `exists`-ly holds the table.
pub fn decide(table: &TableRef, changes: &[&Change], exists: bool, owned: &Owned) -> Decision {
    let entity = table.to_string();
    if is_reserved(&entity) {
        return Decision::Refuse(reserved(&entity));
    }
    if changes.iter().any(|c| matches!(c, Change::DropTable(_))) {
        return if owned.owns(&entity) {
            Decision::Apply
        } else {
            Decision::LeaveAlone
        };
    }
    let created = changes.iter().find_map(|c| match c {
        Change::CreateTable(def) => Some(def),
        _ => None,
    });
    match created {
        Some(_) if exists && owned.owns(&entity) => Decision::Describe,
        Some(_) if exists => Decision::Refuse(not_owned(&entity)),
        Some(def) => match &def.partition_of {
            // A partition of a table maskbus does not own would change that table.
            Some((parent, _)) if !owned.owns(&parent.to_string()) => Decision::Refuse(format!(
                "it is a partition of {parent}, and {}",
                not_owned(&parent.to_string())
            )),
            _ => Decision::Apply,
        },
        None if owned.owns(&entity) => Decision::Apply,
        None => Decision::Refuse(not_owned(&entity)),
    }
}

/// The schema of the table a foreign key's definition (`FOREIGN KEY (a) REFERENCES s.t(id)`,
/// as `pg_get_constraintdef` prints it) references, unquoted.
fn referenced_schema(definition: &str) -> Option<String> {
    let (_, after) = definition.split_once(" REFERENCES ")?;
    let name = after.split('(').next().unwrap_or_default().trim();
    let (schema, _) = name.rsplit_once('.')?;
    Some(schema.trim_matches('"').replace("\"\"", "\""))
}

/// The first object of a served schema that lies in a reserved schema ([`is_reserved_schema`]),
/// named: a table (a partition, say, of a served table), a type, a sequence, a foreign key to
/// a table there, or an extension put into schema `maskbus`.
pub fn reserved_object(schema: &Schema) -> Option<String> {
    if let Some(t) = schema
        .tables
        .iter()
        .find(|t| is_reserved_schema(&t.table.schema))
    {
        return Some(format!("table {}", t.table));
    }
    if let Some(t) = schema.types.iter().find(|t| is_reserved_schema(&t.schema)) {
        return Some(format!("type {}.{}", t.schema, t.name));
    }
    if let Some(s) = schema.sequences.iter().find(|s| {
        is_reserved_schema(&s.schema)
            || s.owned_by
                .as_ref()
                .is_some_and(|(t, _)| is_reserved_schema(&t.schema))
    }) {
        return Some(format!("sequence {}.{}", s.schema, s.name));
    }
    if let Some(c) = schema.constraints.iter().find(|c| {
        c.kind == ConstraintKind::Foreign
            && referenced_schema(&c.definition).is_some_and(|s| is_reserved_schema(&s))
    }) {
        return Some(format!("foreign key {} of {}", c.name, c.table));
    }
    schema
        .extensions
        .iter()
        .find(|e| e.schema.eq_ignore_ascii_case("maskbus"))
        .map(|e| format!("extension {} in schema {}", e.name, e.schema))
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_model::schema::TableDef;

    fn owned(tables: &[&str]) -> Owned {
        Owned {
            tables: tables.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn def(table: &str, parent: Option<&str>) -> TableDef {
        TableDef {
            table: TableRef::parse(table),
            columns: vec![],
            partition_key: None,
            partition_of: parent.map(|p| (TableRef::parse(p), "DEFAULT".to_string())),
        }
    }

    #[test]
    fn maskbus_and_postgres_schemas_are_reserved_whatever_the_case() {
        for name in [
            "maskbus.sync_state",
            "MaskBus.schema_state",
            "pg_catalog.pg_class",
            "pg_toast.pg_toast_1",
            "pg_temp_3.t",
            "information_schema.tables",
        ] {
            assert!(is_reserved(name), "{name}");
            assert!(!owned(&[name]).owns(name), "{name}");
            assert!(reserved(name).contains("never writes"), "{name}");
        }
        for name in ["public.maskbus", "maskbus_app.t", "t", "sales.pg_like"] {
            assert!(!is_reserved(name), "{name}");
        }
        assert!(reserved("maskbus.lifted").contains("maskbus's own bookkeeping"));
    }

    #[test]
    fn only_what_is_recorded_is_owned() {
        let set = owned(&["public.items"]);
        assert!(set.owns("public.items"));
        assert!(!set.owns("public.team_notes"));
        let refused = set.require("public.team_notes").unwrap_err().to_string();
        assert!(
            refused.contains("public.team_notes is not a table maskbus created or adopted")
                && refused.contains("--init-target"),
            "{refused}"
        );
        assert!(set.require("maskbus.sync_state").is_err());
    }

    #[test]
    fn a_schema_change_touches_only_owned_tables() {
        let set = owned(&["public.items", "public.parts"]);
        let t = |name: &str| TableRef::parse(name);
        let drop_items = Change::DropTable(t("public.items"));
        let drop_team = Change::DropTable(t("public.team_notes"));
        assert_eq!(
            decide(&t("public.items"), &[&drop_items], true, &set),
            Decision::Apply
        );
        assert_eq!(
            decide(&t("public.team_notes"), &[&drop_team], true, &set),
            Decision::LeaveAlone
        );
        let index = Change::DropIndex {
            table: t("public.team_notes"),
            name: "team_idx".into(),
        };
        assert!(matches!(
            decide(&t("public.team_notes"), &[&index], true, &set),
            Decision::Refuse(reason) if reason.contains("not a table maskbus created")
        ));
        let create = Change::CreateTable(def("public.fresh", None));
        assert_eq!(
            decide(&t("public.fresh"), &[&create], false, &set),
            Decision::Apply
        );
        let create_team = Change::CreateTable(def("public.team_notes", None));
        assert!(matches!(
            decide(&t("public.team_notes"), &[&create_team], true, &set),
            Decision::Refuse(_)
        ));
        let create_parts = Change::CreateTable(def("public.parts", None));
        assert_eq!(
            decide(&t("public.parts"), &[&create_parts], true, &set),
            Decision::Describe
        );
        let partition = Change::CreateTable(def("public.team_2024", Some("public.team_notes")));
        assert!(matches!(
            decide(&t("public.team_2024"), &[&partition], false, &set),
            Decision::Refuse(reason) if reason.contains("partition of public.team_notes")
        ));
        let ours = Change::CreateTable(def("public.items_2024", Some("public.items")));
        assert_eq!(
            decide(&t("public.items_2024"), &[&ours], false, &set),
            Decision::Apply
        );
        let into_maskbus = Change::CreateTable(def("maskbus.evil", Some("public.items")));
        assert!(matches!(
            decide(&t("maskbus.evil"), &[&into_maskbus], false, &set),
            Decision::Refuse(_)
        ));
    }

    #[test]
    fn a_served_schema_reaching_into_maskbus_is_named() {
        let mut schema = Schema {
            tables: vec![def("public.items", None)],
            ..Schema::default()
        };
        assert_eq!(reserved_object(&schema), None);
        schema
            .tables
            .push(def("maskbus.items_evil", Some("public.items")));
        assert_eq!(
            reserved_object(&schema).as_deref(),
            Some("table maskbus.items_evil")
        );
        schema.tables.pop();
        let fk = |definition: &str| maskbus_model::schema::ConstraintDef {
            table: TableRef::parse("public.items"),
            name: "items_fk".into(),
            kind: ConstraintKind::Foreign,
            definition: definition.into(),
        };
        schema
            .constraints
            .push(fk("FOREIGN KEY (a) REFERENCES public.parts(id)"));
        assert_eq!(reserved_object(&schema), None);
        schema.constraints.push(fk(
            "FOREIGN KEY (a) REFERENCES \"MaskBus\".sync_state(entity) ON DELETE CASCADE",
        ));
        assert_eq!(
            reserved_object(&schema).as_deref(),
            Some("foreign key items_fk of public.items")
        );
    }
}
