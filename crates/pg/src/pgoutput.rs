//! The messages of Postgres's `pgoutput` logical decoding plugin, protocol version 1, decoded
//! from their bytes (the wire format of the "Logical Replication Message Formats" chapter of the
//! Postgres manual). Pure: no I/O; [`crate::slot`] reads the bytes from a replication slot.
//!
//! Cell values stay in Postgres's text format, as the plugin sends them: a change stream is
//! masked from the same text a page is masked from. A value the change left in TOAST storage,
//! unchanged, is [`Cell::Unchanged`]: pgoutput does not send it again.

/// A byte string that is not a pgoutput message maskbus can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a pgoutput (protocol 1) message: {0}")]
pub struct DecodeError(String);

pub use maskbus_model::Lsn;

/// One column of a relation, as the plugin describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationColumn {
    pub name: String,
    /// Part of the replica identity (the key a delete or an update carries).
    pub key: bool,
    pub type_oid: u32,
}

/// One cell of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    Null,
    /// A TOASTed value the change did not touch (not sent again).
    Unchanged,
    Text(String),
}

/// What a change carries of the row it changed before the change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OldRow {
    /// The replica identity's columns (the others are null).
    Key(Vec<Cell>),
    /// Every column (`REPLICA IDENTITY FULL`).
    Full(Vec<Cell>),
}

/// One decoded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    Begin {
        final_lsn: Lsn,
        /// Microseconds since 2000-01-01, as Postgres keeps time.
        commit_time: i64,
        xid: u32,
    },
    Commit {
        commit_lsn: Lsn,
        end_lsn: Lsn,
        commit_time: i64,
    },
    Origin {
        lsn: Lsn,
        name: String,
    },
    /// Sent before the first change of a relation in a session, and again when it changes.
    Relation {
        oid: u32,
        schema: String,
        name: String,
        columns: Vec<RelationColumn>,
    },
    Type {
        oid: u32,
        schema: String,
        name: String,
    },
    Insert {
        relation: u32,
        new: Vec<Cell>,
    },
    Update {
        relation: u32,
        /// Present when the key changed, or with `REPLICA IDENTITY FULL`.
        old: Option<OldRow>,
        new: Vec<Cell>,
    },
    Delete {
        relation: u32,
        old: OldRow,
    },
    Truncate {
        relations: Vec<u32>,
        cascade: bool,
        restart_identity: bool,
    },
    /// A message a session wrote with `pg_logical_emit_message`.
    Logical {
        transactional: bool,
        lsn: Lsn,
        prefix: String,
        content: Vec<u8>,
    },
}

/// Decodes one message.
pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    let message = match r.u8()? {
        b'B' => Message::Begin {
            final_lsn: Lsn(r.u64()?),
            commit_time: r.i64()?,
            xid: r.u32()?,
        },
        b'C' => {
            r.u8()?; // flags, unused
            Message::Commit {
                commit_lsn: Lsn(r.u64()?),
                end_lsn: Lsn(r.u64()?),
                commit_time: r.i64()?,
            }
        }
        b'O' => Message::Origin {
            lsn: Lsn(r.u64()?),
            name: r.string()?,
        },
        b'R' => {
            let oid = r.u32()?;
            let schema = r.string()?;
            let name = r.string()?;
            r.u8()?; // replica identity setting
            let count = r.u16()?;
            let columns = (0..count)
                .map(|_| {
                    let flags = r.u8()?;
                    let name = r.string()?;
                    let type_oid = r.u32()?;
                    r.u32()?; // type modifier
                    Ok(RelationColumn {
                        name,
                        key: flags & 1 != 0,
                        type_oid,
                    })
                })
                .collect::<Result<_, DecodeError>>()?;
            Message::Relation {
                oid,
                schema,
                name,
                columns,
            }
        }
        b'Y' => Message::Type {
            oid: r.u32()?,
            schema: r.string()?,
            name: r.string()?,
        },
        b'I' => {
            let relation = r.u32()?;
            r.expect(b'N')?;
            Message::Insert {
                relation,
                new: r.tuple()?,
            }
        }
        b'U' => {
            let relation = r.u32()?;
            let old = match r.u8()? {
                b'K' => Some(OldRow::Key(r.tuple()?)),
                b'O' => Some(OldRow::Full(r.tuple()?)),
                b'N' => None,
                other => return Err(r.unexpected(other)),
            };
            if old.is_some() {
                r.expect(b'N')?;
            }
            Message::Update {
                relation,
                old,
                new: r.tuple()?,
            }
        }
        b'D' => {
            let relation = r.u32()?;
            let old = match r.u8()? {
                b'K' => OldRow::Key(r.tuple()?),
                b'O' => OldRow::Full(r.tuple()?),
                other => return Err(r.unexpected(other)),
            };
            Message::Delete { relation, old }
        }
        b'T' => {
            let count = r.u32()?;
            let options = r.u8()?;
            let relations = (0..count).map(|_| r.u32()).collect::<Result<_, _>>()?;
            Message::Truncate {
                relations,
                cascade: options & 1 != 0,
                restart_identity: options & 2 != 0,
            }
        }
        b'M' => {
            let transactional = r.u8()? & 1 != 0;
            let lsn = Lsn(r.u64()?);
            let prefix = r.string()?;
            let length = r.u32()? as usize;
            Message::Logical {
                transactional,
                lsn,
                prefix,
                content: r.take(length)?.to_vec(),
            }
        }
        other => {
            return Err(DecodeError(format!(
                "unknown message type {:?}",
                other as char
            )))
        }
    };
    if r.at != bytes.len() {
        return Err(DecodeError(format!(
            "{} bytes left after the message",
            bytes.len() - r.at
        )));
    }
    Ok(message)
}

/// Reads the fields of a message, each read failing (not panicking) past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| DecodeError(format!("cut short at byte {}", self.at)))?;
        let part = &self.bytes[self.at..end];
        self.at = end;
        Ok(part)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    fn expect(&mut self, tag: u8) -> Result<(), DecodeError> {
        match self.u8()? {
            found if found == tag => Ok(()),
            other => Err(self.unexpected(other)),
        }
    }
    fn unexpected(&self, tag: u8) -> DecodeError {
        DecodeError(format!(
            "unexpected tag {:?} at byte {}",
            tag as char,
            self.at - 1
        ))
    }
    /// A NUL-terminated UTF-8 string.
    fn string(&mut self) -> Result<String, DecodeError> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| DecodeError("a string without its terminating NUL".into()))?;
        let text = std::str::from_utf8(&rest[..len])
            .map_err(|_| DecodeError("a name that is not UTF-8".into()))?
            .to_string();
        self.at += len + 1;
        Ok(text)
    }
    fn tuple(&mut self) -> Result<Vec<Cell>, DecodeError> {
        let count = self.u16()?;
        (0..count)
            .map(|_| match self.u8()? {
                b'n' => Ok(Cell::Null),
                b'u' => Ok(Cell::Unchanged),
                b't' => {
                    let length = self.u32()? as usize;
                    let text = std::str::from_utf8(self.take(length)?)
                        .map_err(|_| DecodeError("a text cell that is not UTF-8".into()))?;
                    Ok(Cell::Text(text.to_string()))
                }
                other => Err(self.unexpected(other)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(cells: &[Option<&str>]) -> Vec<u8> {
        let mut out = (cells.len() as u16).to_be_bytes().to_vec();
        for cell in cells {
            match cell {
                None => out.push(b'n'),
                Some(text) => {
                    out.push(b't');
                    out.extend((text.len() as u32).to_be_bytes());
                    out.extend(text.as_bytes());
                }
            }
        }
        out
    }

    /// An insert into relation 16384.
    fn insert(cells: &[Option<&str>]) -> Vec<u8> {
        let mut insert = vec![b'I'];
        insert.extend(16384u32.to_be_bytes());
        insert.push(b'N');
        insert.extend(tuple(cells));
        insert
    }

    #[test]
    fn a_transaction_of_every_change_decodes() {
        let mut begin = vec![b'B'];
        begin.extend(0x16_B374_D848u64.to_be_bytes());
        begin.extend(7i64.to_be_bytes());
        begin.extend(731u32.to_be_bytes());
        assert_eq!(
            decode(&begin).unwrap(),
            Message::Begin {
                final_lsn: Lsn(0x16_B374_D848),
                commit_time: 7,
                xid: 731
            }
        );

        let mut relation = vec![b'R'];
        relation.extend(16384u32.to_be_bytes());
        relation.extend(b"public\0customers\0d");
        relation.extend(2u16.to_be_bytes());
        relation.extend(b"\x01id\0");
        relation.extend(23u32.to_be_bytes());
        relation.extend((-1i32).to_be_bytes());
        relation.extend(b"\x00ssn\0");
        relation.extend(25u32.to_be_bytes());
        relation.extend((-1i32).to_be_bytes());
        assert_eq!(
            decode(&relation).unwrap(),
            Message::Relation {
                oid: 16384,
                schema: "public".into(),
                name: "customers".into(),
                columns: vec![
                    RelationColumn {
                        name: "id".into(),
                        key: true,
                        type_oid: 23
                    },
                    RelationColumn {
                        name: "ssn".into(),
                        key: false,
                        type_oid: 25
                    },
                ],
            }
        );

        let insert = insert(&[Some("1"), Some("224-30-8280")]);
        assert_eq!(
            decode(&insert).unwrap(),
            Message::Insert {
                relation: 16384,
                new: vec![Cell::Text("1".into()), Cell::Text("224-30-8280".into())]
            }
        );

        let mut update = vec![b'U'];
        update.extend(16384u32.to_be_bytes());
        update.push(b'K');
        update.extend(tuple(&[Some("1"), None]));
        update.push(b'N');
        let mut unchanged = tuple(&[Some("2")]);
        unchanged[1] = 2; // two cells: the second one TOASTed and unchanged
        unchanged.push(b'u');
        update.extend(unchanged);
        assert_eq!(
            decode(&update).unwrap(),
            Message::Update {
                relation: 16384,
                old: Some(OldRow::Key(vec![Cell::Text("1".into()), Cell::Null])),
                new: vec![Cell::Text("2".into()), Cell::Unchanged]
            }
        );

        let mut delete = vec![b'D'];
        delete.extend(16384u32.to_be_bytes());
        delete.push(b'K');
        delete.extend(tuple(&[Some("2"), None]));
        assert!(matches!(
            decode(&delete).unwrap(),
            Message::Delete {
                relation: 16384,
                old: OldRow::Key(_)
            }
        ));

        let mut truncate = vec![b'T'];
        truncate.extend(2u32.to_be_bytes());
        truncate.push(1);
        truncate.extend(16384u32.to_be_bytes());
        truncate.extend(16390u32.to_be_bytes());
        assert_eq!(
            decode(&truncate).unwrap(),
            Message::Truncate {
                relations: vec![16384, 16390],
                cascade: true,
                restart_identity: false
            }
        );

        let mut commit = vec![b'C', 0];
        commit.extend(5u64.to_be_bytes());
        commit.extend(6u64.to_be_bytes());
        commit.extend(8i64.to_be_bytes());
        assert_eq!(
            decode(&commit).unwrap(),
            Message::Commit {
                commit_lsn: Lsn(5),
                end_lsn: Lsn(6),
                commit_time: 8
            }
        );
    }

    #[test]
    fn every_cut_and_every_stray_byte_is_an_error_not_a_panic() {
        let insert = insert(&[Some("1"), None, Some("text")]);
        for end in 0..insert.len() {
            assert!(decode(&insert[..end]).is_err(), "cut at {end}");
        }
        let mut longer = insert.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        for at in 0..insert.len() {
            for byte in [0u8, 0xFF, b'x'] {
                let mut changed = insert.clone();
                changed[at] = byte;
                let _ = decode(&changed);
            }
        }
        assert!(decode(b"Zanything").is_err());
        assert!(decode(&[b'R', 0, 0, 0, 1, b'n', b'o', b'n', b'u', b'l']).is_err());
    }

    #[test]
    fn wal_positions_read_and_print_as_postgres_does() {
        let lsn: Lsn = "16/B374D848".parse().unwrap();
        assert_eq!(lsn, Lsn(0x16_B374_D848));
        assert_eq!(lsn.to_string(), "16/B374D848");
        assert_eq!("0/0".parse::<Lsn>().unwrap(), Lsn(0));
        for bad in ["", "16", "x/1", "1/2/3", "100000000/0"] {
            assert!(bad.parse::<Lsn>().is_err(), "{bad}");
        }
    }
}
