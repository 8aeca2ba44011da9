//! The pure half of the change stream: pgoutput messages read one at a time ([`Decoder`]) or
//! grouped into source transactions, the transactions the consumer's copy holds already passed
//! over, and each row change named by its entity and what it does. No I/O; the feed (`super`)
//! masks what comes out. A relation is shared by every change of it (one description, not a
//! copy per row).

use maskbus_pg::pgoutput::{Cell, Lsn, Message, OldRow, RelationColumn};
use maskbus_pg::slot::SlotChange;
use maskbus_protocol::Snapshot;
use std::collections::HashMap;
use std::sync::Arc;

/// A relation as the stream described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// `schema.table`, as the policy names entities.
    pub entity: String,
    pub columns: Vec<RelationColumn>,
}

/// One row change of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowChange {
    /// A new row, or a row's new values (cells in the relation's column order).
    Upsert {
        relation: Arc<Relation>,
        new: Vec<Cell>,
        /// The row's key before an update that changed it (cells in column order); with
        /// `REPLICA IDENTITY FULL`, the whole old row, on every update.
        old_key: Option<Vec<Cell>>,
        /// `old_key` is the whole old row (`REPLICA IDENTITY FULL`), not the key alone (whose
        /// other cells are null): what a table without a key is followed by.
        full: bool,
    },
    Delete {
        relation: Arc<Relation>,
        old: Vec<Cell>,
        /// `old` is the whole row (`REPLICA IDENTITY FULL`), not the key alone.
        full: bool,
    },
    Truncate {
        relations: Vec<Arc<Relation>>,
    },
}

/// A committed source transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    pub xid: u32,
    /// The end of its commit record: confirming this position confirms the transaction.
    pub end: Lsn,
    pub changes: Vec<RowChange>,
}

/// Reads messages one at a time, as a walsender sends them: the relations described so far, and
/// whether a transaction is open. A change whose relation was never described is an error (the
/// stream is not pgoutput as this build knows it); a change outside a transaction is passed
/// over.
#[derive(Debug, Default)]
pub struct Decoder {
    relations: HashMap<u32, Arc<Relation>>,
    open: bool,
}

/// What one message says.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A transaction begins: one that has committed (pgoutput without streaming sends a
    /// transaction once its commit is decoded), or one still being written, sent in blocks
    /// (`maskbus_pg::walsender::Blocks`), whose `Commit` may never come.
    Begin {
        xid: u32,
    },
    Change(RowChange),
    /// The transaction ends; confirming `end` confirms it.
    Commit {
        end: Lsn,
    },
    /// A description, or nothing maskbus reads.
    Nothing,
}

impl Decoder {
    pub fn push(&mut self, message: Message) -> Result<Decoded, String> {
        let relation = |oid: u32| {
            self.relations.get(&oid).cloned().ok_or_else(|| {
                format!("a change names relation {oid}, which the stream did not describe")
            })
        };
        let change = match message {
            Message::Begin { xid, .. } => {
                self.open = true;
                return Ok(Decoded::Begin { xid });
            }
            Message::Commit { end_lsn, .. } => {
                if !std::mem::take(&mut self.open) {
                    return Ok(Decoded::Nothing);
                }
                return Ok(Decoded::Commit { end: end_lsn });
            }
            Message::Relation {
                oid,
                schema,
                name,
                columns,
            } => {
                self.relations.insert(
                    oid,
                    Arc::new(Relation {
                        entity: format!("{schema}.{name}"),
                        columns,
                    }),
                );
                return Ok(Decoded::Nothing);
            }
            Message::Insert { relation: oid, new } => RowChange::Upsert {
                relation: relation(oid)?,
                new,
                old_key: None,
                full: false,
            },
            Message::Update {
                relation: oid,
                old,
                new,
            } => RowChange::Upsert {
                relation: relation(oid)?,
                new,
                full: matches!(old, Some(OldRow::Full(_))),
                old_key: old.map(|o| match o {
                    OldRow::Key(cells) | OldRow::Full(cells) => cells,
                }),
            },
            Message::Delete { relation: oid, old } => RowChange::Delete {
                relation: relation(oid)?,
                full: matches!(old, OldRow::Full(_)),
                old: match old {
                    OldRow::Key(cells) | OldRow::Full(cells) => cells,
                },
            },
            Message::Truncate {
                relations: oids, ..
            } => RowChange::Truncate {
                relations: oids
                    .iter()
                    .map(|oid| relation(*oid))
                    .collect::<Result<_, _>>()?,
            },
            Message::Origin { .. } | Message::Type { .. } | Message::Logical { .. } => {
                return Ok(Decoded::Nothing)
            }
        };
        Ok(if self.open {
            Decoded::Change(change)
        } else {
            Decoded::Nothing
        })
    }
}

/// Groups messages (as a slot returns them: whole transactions, in commit order) into
/// transactions, through a [`Decoder`].
pub fn transactions(messages: Vec<SlotChange>) -> Result<Vec<Transaction>, String> {
    let mut decoder = Decoder::default();
    let mut done = Vec::new();
    let mut open: Option<Transaction> = None;
    for change in messages {
        match decoder.push(change.message)? {
            Decoded::Begin { xid } => {
                open = Some(Transaction {
                    xid,
                    end: Lsn::default(),
                    changes: Vec::new(),
                })
            }
            Decoded::Change(row) => {
                if let Some(txn) = open.as_mut() {
                    txn.changes.push(row);
                }
            }
            Decoded::Commit { end } => {
                if let Some(mut txn) = open.take() {
                    txn.end = end;
                    done.push(txn);
                }
            }
            Decoded::Nothing => {}
        }
    }
    Ok(done)
}

/// Whether the transaction with 32-bit id `xid` is visible in `snapshot` (committed before it
/// was taken), widening the id to 64 bits against the snapshot's `xmax` (ids within 2^31 of it).
pub fn visible_in(xid: u32, snapshot: &Snapshot) -> bool {
    snapshot.holds(xid)
}

/// The values of `names` in a row of `relation`, `None` where the row has no usable value (a
/// NULL cell, a value the change did not carry).
pub fn cells_of<'c>(
    relation: &Relation,
    cells: &'c [Cell],
    names: &[String],
) -> Vec<Option<&'c str>> {
    names
        .iter()
        .map(|name| {
            let at = relation.columns.iter().position(|c| c.name == *name)?;
            match cells.get(at)? {
                Cell::Text(text) => Some(text.as_str()),
                Cell::Null | Cell::Unchanged => None,
            }
        })
        .collect()
}

/// Whether a row's new values lack a TOASTed value the change left untouched (the row must then
/// be read from the source).
pub fn has_unchanged(cells: &[Cell]) -> bool {
    cells.contains(&Cell::Unchanged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation_message(oid: u32, name: &str) -> Message {
        Message::Relation {
            oid,
            schema: "public".into(),
            name: name.into(),
            columns: ["id", "name"]
                .iter()
                .map(|c| RelationColumn {
                    name: c.to_string(),
                    key: *c == "id",
                    type_oid: 25,
                })
                .collect(),
        }
    }

    fn at(lsn: u64, xid: u32, message: Message) -> SlotChange {
        SlotChange {
            lsn: Lsn(lsn),
            xid,
            message,
        }
    }

    fn text(v: &str) -> Cell {
        Cell::Text(v.into())
    }

    #[test]
    fn messages_become_transactions_in_commit_order() {
        let begin = |xid| Message::Begin {
            final_lsn: Lsn(0),
            commit_time: 0,
            xid,
        };
        let commit = |end| Message::Commit {
            commit_lsn: Lsn(end - 1),
            end_lsn: Lsn(end),
            commit_time: 0,
        };
        let messages = vec![
            at(10, 7, begin(7)),
            at(10, 7, relation_message(1, "customers")),
            at(
                10,
                7,
                Message::Insert {
                    relation: 1,
                    new: vec![text("1"), text("Ann")],
                },
            ),
            at(12, 7, commit(12)),
            at(20, 8, begin(8)),
            at(20, 8, relation_message(1, "customers")),
            at(
                20,
                8,
                Message::Update {
                    relation: 1,
                    old: Some(OldRow::Key(vec![text("1"), Cell::Null])),
                    new: vec![text("2"), Cell::Unchanged],
                },
            ),
            at(
                20,
                8,
                Message::Delete {
                    relation: 1,
                    old: OldRow::Key(vec![text("2"), Cell::Null]),
                },
            ),
            at(22, 8, commit(22)),
        ];
        let txns = transactions(messages).unwrap();
        assert_eq!(txns.len(), 2);
        assert_eq!((txns[0].xid, txns[0].end), (7, Lsn(12)));
        let RowChange::Upsert {
            relation,
            new,
            old_key,
            full,
        } = &txns[1].changes[0]
        else {
            panic!("an update is an upsert");
        };
        assert_eq!(relation.entity, "public.customers");
        assert_eq!(old_key.as_ref().unwrap()[0], text("1"));
        assert!(!full, "the key alone, not the whole old row");
        assert!(has_unchanged(new));
        assert_eq!(
            cells_of(relation, new, &["id".into(), "name".into(), "gone".into()]),
            vec![Some("2"), None, None]
        );
        assert!(matches!(txns[1].changes[1], RowChange::Delete { .. }));
        // Passed over when the copy's snapshot holds them.
        assert!(visible_in(txns[0].xid, &Snapshot("8:9:".into())));
        assert!(!visible_in(txns[0].xid, &Snapshot("7:9:7,8".into())));
        let unknown = vec![
            at(1, 1, begin(1)),
            at(
                1,
                1,
                Message::Insert {
                    relation: 9,
                    new: vec![],
                },
            ),
        ];
        assert!(transactions(unknown).is_err());
    }

    #[test]
    fn visibility_widens_ids_against_the_snapshot() {
        let snapshot = Snapshot("100:105:101,103".into());
        for (xid, visible) in [
            (99, true),
            (100, true),
            (101, false),
            (102, true),
            (103, false),
            (104, true),
            (105, false),
            (900, false),
        ] {
            assert_eq!(visible_in(xid, &snapshot), visible, "{xid}");
        }
        // Across the 32-bit wrap: xmax is 2^32 + 5, the transaction 2^32 + 2 has id 2.
        let wrapped = Snapshot(format!("{}:{}:", (1u64 << 32) + 1, (1u64 << 32) + 5));
        assert!(visible_in(2, &wrapped));
        assert!(!visible_in(6, &wrapped));
        assert!(
            visible_in(u32::MAX, &wrapped),
            "2^32 - 1 is older than xmin"
        );
    }
}
