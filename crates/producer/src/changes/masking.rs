//! One answer's masking of row changes: each row through the same masker as pages, every
//! table's shape read once per answer, and the tables that fail closed left out.
//!
//! Before a change is masked it is admitted ([`Masking::admit`]): a table whose policy refuses it
//! now (a column without a rule) is closed and its changes are left out; a table whose columns in
//! the stream are not those its shape has has its shape read again: the same now (a migration
//! since the shape was read), it stops the answer, as the consumer must apply the new schema
//! first; still not (the change was made before a migration since), the table is closed too and
//! the consumer copies it again.
//!
//! Deletes carry the key columns only, masked like the rest (a key's rule is `keep` or a
//! bijective pseudonym, fitted to the key columns' shapes as pages fit them: the consumer
//! deletes the same masked key it stored). An update of a key is a delete of the old key and an
//! upsert of the new row. A row whose change left a TOASTed value out is read from the source by
//! its key.
//!
//! A table without a usable key ([`maskbus_model::KeySource::RowLocation`]) is followed as a
//! multiset, by its `REPLICA IDENTITY FULL` ([`mask_keyless`]): a delete carries the whole old
//! row, masked by the same masker as its new rows and its pages (so it is the row the target
//! holds), and the consumer deletes one copy of it per row sent; an update is such a delete and
//! an insert of the new row; an insert inserts. A run of such changes is cut as its deletes and
//! its inserts ([`Parts::push_whole`]).

use super::reply_cut::{Parts, SetOf};
use super::txn::{cells_of, has_unchanged, Relation, RowChange};
use crate::reply::Reply;
use crate::source::{Refusal, Shape, Source};
use maskbus_mask::{MaskedRow, Masker};
use maskbus_pg::pgoutput::Cell;
use maskbus_protocol::{ChangeOp, ErrorCode};
use std::collections::{BTreeSet, HashMap};

/// Whether a change goes out.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// Mask it.
    Mask,
    /// Leave it out: its table fails closed.
    Closed,
    /// Stop before it: this table's columns changed, and the change has the new ones (the
    /// consumer applies the schema first).
    Changed(String),
}

/// The masking state of one answer.
pub struct Masking<'s> {
    source: &'s Source,
    shapes: HashMap<String, Shape>,
    closed: BTreeSet<String>,
    /// One masker per table and kind of row for the whole answer: a big update is thousands of
    /// rows of one table, and a masker is looked up in the policy and fitted to the table's
    /// columns once.
    rows_of: HashMap<String, Masker<'s>>,
    keys_of: HashMap<String, Masker<'s>>,
    /// Tables whose shape was read again in this answer, the stream having described other
    /// columns.
    reread: BTreeSet<String>,
}

impl<'s> Masking<'s> {
    pub fn new(source: &'s Source) -> Self {
        Self {
            source,
            shapes: HashMap::new(),
            closed: BTreeSet::new(),
            rows_of: HashMap::new(),
            keys_of: HashMap::new(),
            reread: BTreeSet::new(),
        }
    }

    /// The tables left out so far.
    pub fn closed(&self) -> &BTreeSet<String> {
        &self.closed
    }

    /// Whether `change` may be masked: its tables' policies are read (a table the policy
    /// refuses now is closed, with a warning), and its columns are compared with its table's.
    pub async fn admit(&mut self, change: &RowChange) -> Result<Admit, Refusal> {
        let relations: Vec<&Relation> = match change {
            RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => {
                vec![relation]
            }
            RowChange::Truncate { relations } => relations.iter().map(|r| &**r).collect(),
        };
        let mut admit = Admit::Mask;
        for relation in relations {
            if self.closed.contains(&relation.entity) {
                admit = Admit::Closed;
                continue;
            }
            match shape(self.source, &mut self.shapes, &relation.entity).await {
                Ok(_) => {}
                Err(refusal)
                    if matches!(refusal.code(), ErrorCode::NoRule | ErrorCode::PolicyRefused) =>
                {
                    tracing::warn!(entity = %relation.entity, refused = %refusal, "this table fails closed: its changes are left out of the stream until the policy has its rules");
                    self.closed.insert(relation.entity.clone());
                    admit = Admit::Closed;
                }
                Err(refusal) => return Err(refusal),
            }
        }
        if admit == Admit::Closed {
            return Ok(admit);
        }
        if let RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } = change {
            let entity = &relation.entity;
            if self.fits(relation).await? {
                return Ok(Admit::Mask);
            }
            // The shape read may be older than the change (a migration since): read again.
            if self.reread.insert(entity.clone()) {
                self.source.forget_shapes().await;
                self.shapes.remove(entity);
                self.rows_of.remove(entity);
                self.keys_of.remove(entity);
                if self.fits(relation).await? {
                    return Ok(Admit::Changed(entity.clone()));
                }
            }
            // The change is older than the table's columns: it was made before a migration
            // the source has since run, and no longer fits the table or its policy. Its table
            // is left out like one that fails closed, so the consumer copies it again, after
            // the migration, instead of asking for this change forever.
            tracing::warn!(%entity, "changes made before a migration of this table, which the consumer had not followed yet, are left out: the table is copied again");
            self.closed.insert(entity.clone());
            return Ok(Admit::Closed);
        }
        Ok(Admit::Mask)
    }

    /// Whether the columns the stream describes are the table's, as its shape has them.
    async fn fits(&mut self, relation: &Relation) -> Result<bool, Refusal> {
        let shape = shape(self.source, &mut self.shapes, &relation.entity).await?;
        let streamed: BTreeSet<&str> = relation.columns.iter().map(|c| c.name.as_str()).collect();
        let known: BTreeSet<&str> = shape.columns.iter().map(String::as_str).collect();
        Ok(streamed == known)
    }

    /// The first table of `changes` whose columns changed, the tables that fail closed closed
    /// on the way: a transaction is admitted whole, or not at all.
    pub async fn changed(&mut self, changes: &[RowChange]) -> Result<Option<String>, Refusal> {
        for change in changes {
            if let Admit::Changed(entity) = self.admit(change).await? {
                return Ok(Some(entity));
            }
        }
        Ok(None)
    }

    /// Masks an admitted change into `parts`; a change of a closed table is passed over.
    /// Returns the rows added. A change the egress guard refuses closes its table: nothing of
    /// it crosses, and the consumer copies the table again once it masks clean.
    pub async fn mask(&mut self, change: &RowChange, parts: &mut Parts) -> Result<usize, Refusal> {
        match self.mask_admitted(change, parts).await {
            Err(refusal)
                if matches!(
                    refusal.code(),
                    ErrorCode::Guarded | ErrorCode::NoReplicaIdentity
                ) =>
            {
                let relations: Vec<&Relation> = match change {
                    RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => {
                        vec![relation]
                    }
                    RowChange::Truncate { relations } => relations.iter().map(|r| &**r).collect(),
                };
                for relation in relations {
                    tracing::warn!(entity = %relation.entity, refused = %refusal, "this table fails closed: a change of it cannot go out (the egress guard refused it, or a table without a key lost its REPLICA IDENTITY FULL)");
                    self.closed.insert(relation.entity.clone());
                }
                Ok(0)
            }
            other => other,
        }
    }

    async fn mask_admitted(
        &mut self,
        change: &RowChange,
        parts: &mut Parts,
    ) -> Result<usize, Refusal> {
        let touches_closed = match change {
            RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => {
                self.closed.contains(&relation.entity)
            }
            RowChange::Truncate { relations } => {
                relations.iter().any(|r| self.closed.contains(&r.entity))
            }
        };
        if touches_closed {
            return Ok(0);
        }
        let source = self.source;
        if let RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } = change {
            let shape = shape(source, &mut self.shapes, &relation.entity).await?;
            if shape.key.is_keyless() {
                return mask_keyless(source, &mut self.rows_of, shape, change, parts);
            }
        }
        match change {
            RowChange::Upsert {
                relation,
                new,
                old_key,
                ..
            } => {
                let shape = shape(source, &mut self.shapes, &relation.entity).await?;
                let key = shape.key.names();
                let mut added = 0;
                if let Some(old) = old_key {
                    let old_values = cells_of(relation, old, &key);
                    if old_values != cells_of(relation, new, &key) {
                        let row = mask_key(
                            source,
                            &mut self.keys_of,
                            &relation.entity,
                            shape,
                            old_values,
                        )?;
                        parts.push(set_of(&relation.entity, shape, ChangeOp::Delete, &key), row);
                        added += 1;
                    }
                }
                let row = if has_unchanged(new) {
                    // A TOASTed value the update did not touch: read the row as it is now
                    // (a later change in the stream brings it further still).
                    let key_values = cells_of(relation, new, &key);
                    match current_row(source, &relation.entity, &key, key_values).await? {
                        Some(row) => row,
                        None => return Ok(added),
                    }
                } else {
                    let values: Vec<Option<String>> = cells_of(relation, new, &shape.columns)
                        .into_iter()
                        .map(|v| v.map(String::from))
                        .collect();
                    cached(&mut self.rows_of, &relation.entity, || source.masker(shape))?
                        .mask(values)
                        .map_err(|e| Refusal::of_mask(e, &relation.entity))?
                };
                parts.push(set_of(&relation.entity, shape, ChangeOp::Upsert, &key), row);
                Ok(added + 1)
            }
            RowChange::Delete { relation, old, .. } => {
                let shape = shape(source, &mut self.shapes, &relation.entity).await?;
                let key = shape.key.names();
                let row = mask_key(
                    source,
                    &mut self.keys_of,
                    &relation.entity,
                    shape,
                    cells_of(relation, old, &key),
                )?;
                parts.push(set_of(&relation.entity, shape, ChangeOp::Delete, &key), row);
                Ok(1)
            }
            RowChange::Truncate { relations } => {
                for relation in relations {
                    let shape = shape(source, &mut self.shapes, &relation.entity).await?;
                    let entity = shape.table.to_string();
                    let key = shape.key.names();
                    parts.push_empty(SetOf {
                        entity: &entity,
                        op: ChangeOp::Truncate,
                        key: &key,
                        columns: &[],
                    });
                }
                Ok(0)
            }
        }
    }
}

/// What a set of `op` on `entity` (of `shape`) holds: its columns, or the key's alone for a
/// delete (a table without a key: the whole row, by which its copy is found).
fn set_of<'a>(entity: &'a str, shape: &'a Shape, op: ChangeOp, key: &'a [String]) -> SetOf<'a> {
    SetOf {
        entity,
        op,
        key,
        columns: if op == ChangeOp::Delete && !shape.key.is_keyless() {
            key
        } else {
            &shape.columns
        },
    }
}

/// Masks a change of a table without a usable key (of `shape`), followed as a multiset: an
/// insert is a row to insert; a delete the whole old row, one copy of which the consumer
/// deletes; an update both, the old row first. Every row goes through the table's one row
/// masker, as its pages do: masking is deterministic, so a masked old row is the row the target
/// holds. The old row must be whole (`REPLICA IDENTITY FULL`): a change that carries less is
/// refused ([`ErrorCode::NoReplicaIdentity`]), and the table fails closed. Returns the rows
/// added.
fn mask_keyless<'s>(
    source: &'s Source,
    maskers: &mut HashMap<String, Masker<'s>>,
    shape: &Shape,
    change: &RowChange,
    parts: &mut Parts,
) -> Result<usize, Refusal> {
    let key = shape.key.names();
    let (relation, new, old, full) = match change {
        RowChange::Upsert {
            relation,
            new,
            old_key,
            full,
        } => (relation, Some(new), old_key.as_ref(), *full),
        RowChange::Delete {
            relation,
            old,
            full,
        } => (relation, None, Some(old), *full),
        RowChange::Truncate { .. } => return Ok(0),
    };
    let entity = relation.entity.as_str();
    let refused = |what: &str| {
        Refusal::new(
            ErrorCode::NoReplicaIdentity,
            format!("{what} of {entity}, a table without a primary key or unique NOT NULL key, does not carry its whole old row: give it REPLICA IDENTITY FULL (ALTER TABLE {entity} REPLICA IDENTITY FULL), name key columns in the policy's [maskbus.keys], or sync in watermark mode"),
        )
        .on(entity)
    };
    let mut mask = |cells: &[Cell]| -> Result<MaskedRow, Refusal> {
        let values: Vec<Option<String>> = cells_of(relation, cells, &shape.columns)
            .into_iter()
            .map(|v| v.map(String::from))
            .collect();
        cached(maskers, entity, || source.masker(shape))?
            .mask(values)
            .map_err(|e| Refusal::of_mask(e, entity))
    };
    let mut added = 0;
    if let Some(old) = old {
        let what = if new.is_some() {
            "an update"
        } else {
            "a delete"
        };
        if !full || has_unchanged(old) {
            return Err(refused(what));
        }
        let row = mask(old)?;
        parts.push_whole(set_of(entity, shape, ChangeOp::Delete, &key), row);
        added += 1;
    }
    if let Some(new) = new {
        // A TOASTed value the update left untouched is the old row's.
        let whole: Vec<Cell> = match old {
            Some(old) if has_unchanged(new) => new
                .iter()
                .zip(old)
                .map(|(n, o)| if *n == Cell::Unchanged { o } else { n })
                .cloned()
                .collect(),
            _ => new.clone(),
        };
        if has_unchanged(&whole) {
            return Err(refused("an update"));
        }
        let row = mask(&whole)?;
        parts.push_whole(set_of(entity, shape, ChangeOp::Upsert, &key), row);
        added += 1;
    }
    Ok(added)
}

/// The entity's shape, asked of the source once per answer.
async fn shape<'m>(
    source: &Source,
    shapes: &'m mut HashMap<String, Shape>,
    entity: &str,
) -> Result<&'m Shape, Refusal> {
    if !shapes.contains_key(entity) {
        let shape = source.shape(entity).await?;
        shapes.insert(entity.to_string(), shape);
    }
    shapes
        .get(entity)
        .ok_or_else(|| Refusal::new(ErrorCode::Unavailable, "an entity's shape went missing"))
}

/// A deleted row's key, through the key's masker (its rules for key columns are bijective). A
/// change that does not carry the whole key (a replica identity other than the key maskbus pages
/// by) is refused.
fn mask_key<'s>(
    source: &'s Source,
    maskers: &mut HashMap<String, Masker<'s>>,
    entity: &str,
    shape: &Shape,
    values: Vec<Option<&str>>,
) -> Result<MaskedRow, Refusal> {
    if values.iter().any(Option::is_none) {
        return Err(Refusal::new(ErrorCode::PolicyRefused,
            format!(
                "a delete of {entity} does not carry its key ({}): give the table REPLICA IDENTITY FULL, or a replica identity index on that key",
                shape.key.names().join(", ")
            ),
        ));
    }
    cached(maskers, entity, || source.key_masker(shape))?
        .mask(values.into_iter().map(|v| v.map(String::from)).collect())
        .map_err(|e| Refusal::of_mask(e, entity))
}

/// The row with this key as the source holds it now, masked; `None` if it is gone.
async fn current_row(
    source: &Source,
    entity: &str,
    key: &[String],
    values: Vec<Option<&str>>,
) -> Result<Option<MaskedRow>, Refusal> {
    let Some(values) = values.into_iter().map(|v| v.map(String::from)).collect() else {
        return Ok(None);
    };
    let source_keys = crate::rows_by_key::KeysAre::Source;
    match crate::rows_by_key::lookup(source, entity, key, &[values], source_keys)
        .await
        .into_iter()
        .next()
    {
        Some(Reply::Page(page)) => Ok(page.rows.into_iter().next()),
        Some(Reply::Error { error, .. }) => Err(Refusal(
            error,
            format!("looking up a changed row of {entity} by key"),
        )),
        _ => Ok(None),
    }
}

/// `entity`'s masker in `maskers`, made by `make` the first time the answer needs it.
fn cached<'c, 'm>(
    maskers: &'c mut HashMap<String, Masker<'m>>,
    entity: &str,
    make: impl FnOnce() -> Result<Masker<'m>, Refusal>,
) -> Result<&'c Masker<'m>, Refusal> {
    if !maskers.contains_key(entity) {
        maskers.insert(entity.to_string(), make()?);
    }
    maskers
        .get(entity)
        .ok_or_else(|| Refusal::new(ErrorCode::Unavailable, "a table's masker went missing"))
}
