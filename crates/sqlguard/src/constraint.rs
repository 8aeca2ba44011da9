//! Table and domain constraints (`pg_get_constraintdef`).

use crate::expr::Walker;
use crate::index::{include, index_elem, take_method};
use crate::parse::{self, is_wrapper_relation};
use crate::refusal::{shown, Refusal};
use crate::sql::{columns, operator, reloptions, strings};
use crate::Scope;
use maskbus_model::quote_ident;
use pg_query::protobuf as pb;
use pg_query::protobuf::node::Node as N;

/// A served constraint definition as `pg_get_constraintdef` prints it, parsed as
/// `ALTER TABLE t ADD CONSTRAINT c <definition>` and rebuilt:
///
/// * `CHECK (expr) [NO INHERIT]` with an allowed expression over `scope`'s columns (for a
///   domain, [`Scope::of_domain`]: `VALUE`);
/// * `PRIMARY KEY (cols) [INCLUDE (cols)]`, `UNIQUE [NULLS NOT DISTINCT] (cols) [INCLUDE (cols)]`,
///   with storage parameters of constant value (`WITH (fillfactor = '70')`);
/// * `FOREIGN KEY (cols) REFERENCES schema.table [(cols)] [MATCH FULL]
///   [ON UPDATE action] [ON DELETE action [(cols)]]` of a table in `scope`;
/// * `EXCLUDE [USING method] (elem WITH op, ...) [INCLUDE (cols)] [WHERE (pred)]`;
///
/// each with `DEFERRABLE`, `INITIALLY DEFERRED`, `NOT VALID` and `NOT ENFORCED` as given.
/// `USING INDEX TABLESPACE` is dropped (the test database has its own tablespaces).
///
/// ```
/// use maskbus_model::TableRef;
/// use maskbus_sqlguard::{constraint, Scope};
/// let scope = Scope::of_columns(["customer_id"])
///     .with_tables([&TableRef::new("public", "customers")]);
/// assert_eq!(
///     constraint(
///         "FOREIGN KEY (customer_id) REFERENCES public.customers(id) ON DELETE CASCADE",
///         &scope
///     )
///     .unwrap(),
///     r#"FOREIGN KEY ("customer_id") REFERENCES "public"."customers" ("id") ON DELETE CASCADE"#
/// );
/// ```
pub fn constraint(definition: &str, scope: &Scope) -> Result<String, Refusal> {
    const PLACE: &str = "one constraint";
    let N::AlterTableStmt(alter) =
        parse::statement("ALTER TABLE t ADD CONSTRAINT c ", definition, "", PLACE)?
    else {
        return Err(Refusal::shape(PLACE, "it is not a constraint"));
    };
    let mut alter = alter;
    let relation_ok = is_wrapper_relation(alter.relation.take().as_ref(), "t");
    let cmds = std::mem::take(&mut alter.cmds);
    let bare = pb::AlterTableStmt {
        objtype: pb::ObjectType::ObjectTable as i32,
        ..pb::AlterTableStmt::default()
    };
    if !relation_ok || alter != bare {
        return Err(Refusal::shape(PLACE, "it changes more than one constraint"));
    }
    let [cmd] = cmds.as_slice() else {
        return Err(Refusal::shape(PLACE, "it holds more than one subcommand"));
    };
    let Some(N::AlterTableCmd(cmd)) = &cmd.node else {
        return Err(Refusal::shape(PLACE, "it is not a constraint"));
    };
    let mut cmd = (**cmd).clone();
    let def = cmd.def.take();
    let bare_cmd = pb::AlterTableCmd {
        subtype: pb::AlterTableType::AtAddConstraint as i32,
        behavior: pb::DropBehavior::DropRestrict as i32,
        ..pb::AlterTableCmd::default()
    };
    if cmd != bare_cmd {
        return Err(Refusal::shape(PLACE, "it is not ADD CONSTRAINT"));
    }
    let Some(N::Constraint(c)) = def.and_then(|d| d.node) else {
        return Err(Refusal::shape(PLACE, "it is not a constraint"));
    };
    Rebuild {
        c: *c,
        scope,
        walker: Walker { scope },
    }
    .run()
}

/// A `Constraint` node taken apart field by field: each field read is reset, and whatever is
/// left at the end must be the default, so a clause this rebuild does not print is refused
/// rather than dropped.
struct Rebuild<'a> {
    c: pb::Constraint,
    scope: &'a Scope,
    walker: Walker<'a>,
}

impl Rebuild<'_> {
    fn run(mut self) -> Result<String, Refusal> {
        use pb::ConstrType as T;
        if self.c.conname != "c" {
            return Err(Refusal::shape(
                "one constraint",
                "it renames the constraint",
            ));
        }
        self.c.conname.clear();
        self.c.location = 0;
        let kind = T::try_from(std::mem::take(&mut self.c.contype))
            .map_err(|_| Refusal::leftover("a constraint of a kind"))?;
        let mut sql = match kind {
            T::ConstrCheck => self.check()?,
            T::ConstrPrimary => format!("PRIMARY KEY {}", self.key()?),
            T::ConstrUnique => {
                let nulls = if std::mem::take(&mut self.c.nulls_not_distinct) {
                    "NULLS NOT DISTINCT "
                } else {
                    ""
                };
                format!("UNIQUE {nulls}{}", self.key()?)
            }
            T::ConstrForeign => self.foreign()?,
            T::ConstrExclusion => self.exclusion()?,
            _ => {
                return Err(Refusal::new(
                    "is a constraint of a kind the consumer does not rebuild (only CHECK, \
                     PRIMARY KEY, UNIQUE, FOREIGN KEY and EXCLUDE)",
                ))
            }
        };
        sql += &self.attributes(kind);
        if self.c != pb::Constraint::default() {
            return Err(Refusal::leftover("a constraint clause"));
        }
        Ok(sql)
    }

    fn check(&mut self) -> Result<String, Refusal> {
        let expr = self
            .c
            .raw_expr
            .take()
            .ok_or_else(|| Refusal::leftover("a CHECK without an expression"))?;
        let mut sql = format!("CHECK ({})", self.walker.expr(&expr, 0)?);
        if std::mem::take(&mut self.c.is_no_inherit) {
            sql += " NO INHERIT";
        }
        Ok(sql)
    }

    /// `("a", "b" [WITHOUT OVERLAPS]) [INCLUDE (...)] [WITH (...)]` of a primary or unique key.
    fn key(&mut self) -> Result<String, Refusal> {
        let keys = std::mem::take(&mut self.c.keys);
        if keys.is_empty() {
            return Err(Refusal::leftover("a key without columns"));
        }
        let mut sql = format!("({}", columns(&keys, self.scope, "a key column")?);
        if std::mem::take(&mut self.c.without_overlaps) {
            sql += " WITHOUT OVERLAPS";
        }
        sql += ")";
        sql += &self.index_parameters()?;
        Ok(sql)
    }

    /// `INCLUDE` and `WITH` of the index behind a key or an exclusion; its tablespace dropped.
    fn index_parameters(&mut self) -> Result<String, Refusal> {
        let mut sql = include(&std::mem::take(&mut self.c.including), self.scope)?;
        sql += &reloptions(&std::mem::take(&mut self.c.options))?;
        self.c.indexspace.clear();
        Ok(sql)
    }

    fn foreign(&mut self) -> Result<String, Refusal> {
        let table = self
            .c
            .pktable
            .take()
            .ok_or_else(|| Refusal::leftover("a foreign key without a table"))?;
        if !table.catalogname.is_empty() || table.alias.is_some() || !table.inh {
            return Err(Refusal::leftover("a referenced table"));
        }
        if table.schemaname.is_empty() {
            return Err(Refusal::new(format!(
                "references table {} without its schema",
                shown(&table.relname)
            )));
        }
        if !self.scope.has_table(&table.schemaname, &table.relname) {
            return Err(Refusal::new(format!(
                "references table {}.{}, which this reply does not create",
                shown(&table.schemaname),
                shown(&table.relname)
            )));
        }
        let fk = std::mem::take(&mut self.c.fk_attrs);
        if fk.is_empty() {
            return Err(Refusal::leftover("a foreign key without columns"));
        }
        let mut fk_cols: Vec<String> = strings(&fk, "a foreign key column")?
            .iter()
            .map(|c| crate::sql::column(c, self.scope))
            .collect::<Result<_, _>>()?;
        if std::mem::take(&mut self.c.fk_with_period) {
            if let Some(last) = fk_cols.last_mut() {
                *last = format!("PERIOD {last}");
            }
        }
        let mut sql = format!(
            "FOREIGN KEY ({}) REFERENCES {}.{}",
            fk_cols.join(", "),
            quote_ident(&table.schemaname),
            quote_ident(&table.relname)
        );
        // The referenced table's columns: names only (the reply's other table is checked
        // when its own key is created).
        let mut pk_cols: Vec<String> =
            strings(&std::mem::take(&mut self.c.pk_attrs), "a referenced column")?
                .iter()
                .map(|c| quote_ident(c))
                .collect();
        if std::mem::take(&mut self.c.pk_with_period) {
            match pk_cols.last_mut() {
                Some(last) => *last = format!("PERIOD {last}"),
                None => return Err(Refusal::leftover("a PERIOD without a column")),
            }
        }
        if !pk_cols.is_empty() {
            sql += &format!(" ({})", pk_cols.join(", "));
        }
        match std::mem::take(&mut self.c.fk_matchtype).as_str() {
            "" | "s" => {}
            "f" => sql += " MATCH FULL",
            _ => {
                return Err(Refusal::new(
                    "uses MATCH PARTIAL, which PostgreSQL does not implement",
                ))
            }
        }
        let update = action(&std::mem::take(&mut self.c.fk_upd_action))?;
        if !update.is_empty() {
            sql += &format!(" ON UPDATE {update}");
        }
        let delete = action(&std::mem::take(&mut self.c.fk_del_action))?;
        if !delete.is_empty() {
            sql += &format!(" ON DELETE {delete}");
            let set_cols = std::mem::take(&mut self.c.fk_del_set_cols);
            if !set_cols.is_empty() {
                sql += &format!(" ({})", columns(&set_cols, self.scope, "a column to set")?);
            }
        }
        Ok(sql)
    }

    fn exclusion(&mut self) -> Result<String, Refusal> {
        let mut sql = String::from("EXCLUDE");
        if !self.c.access_method.is_empty() {
            sql += &format!(
                " USING {}",
                take_method(&mut self.c.access_method, "index")?
            );
        }
        let exclusions = std::mem::take(&mut self.c.exclusions);
        if exclusions.is_empty() {
            return Err(Refusal::leftover("an EXCLUDE without elements"));
        }
        let mut elems = Vec::with_capacity(exclusions.len());
        for e in &exclusions {
            let Some(N::List(pair)) = &e.node else {
                return Err(Refusal::leftover("an EXCLUDE element"));
            };
            let [elem, op] = pair.items.as_slice() else {
                return Err(Refusal::leftover("an EXCLUDE element"));
            };
            let Some(N::List(op)) = &op.node else {
                return Err(Refusal::leftover("an EXCLUDE operator"));
            };
            let op = operator(&op.items)?;
            elems.push(format!("{} WITH {op}", index_elem(elem, &self.walker)?));
        }
        sql += &format!(" ({})", elems.join(", "));
        sql += &self.index_parameters()?;
        if let Some(pred) = self.c.where_clause.take() {
            sql += &format!(" WHERE ({})", self.walker.expr(&pred, 0)?);
        }
        Ok(sql)
    }

    /// `DEFERRABLE`, `INITIALLY DEFERRED`, `NOT VALID`, `NOT ENFORCED`; the parser's defaults
    /// for the validity flags are reset.
    fn attributes(&mut self, kind: pb::ConstrType) -> String {
        use pb::ConstrType as T;
        let mut sql = String::new();
        if std::mem::take(&mut self.c.deferrable) {
            sql += " DEFERRABLE";
        }
        if std::mem::take(&mut self.c.initdeferred) {
            sql += " INITIALLY DEFERRED";
        }
        let enforced = std::mem::take(&mut self.c.is_enforced);
        let skip_validation = std::mem::take(&mut self.c.skip_validation);
        self.c.initially_valid = false;
        if matches!(kind, T::ConstrCheck | T::ConstrForeign) {
            if !enforced {
                // NOT ENFORCED implies NOT VALID.
                sql += " NOT ENFORCED";
            } else if skip_validation {
                sql += " NOT VALID";
            }
        } else if skip_validation {
            sql += " NOT VALID";
        }
        sql
    }
}

/// A foreign key action as the parser codes it; `NO ACTION` (the default) as nothing.
fn action(code: &str) -> Result<&'static str, Refusal> {
    match code {
        "" | "a" => Ok(""),
        "r" => Ok("RESTRICT"),
        "c" => Ok("CASCADE"),
        "n" => Ok("SET NULL"),
        "d" => Ok("SET DEFAULT"),
        _ => Err(Refusal::leftover("a foreign key action")),
    }
}
