//! A JSON body as the audit reads it: a flat tape of nodes whose strings borrow from the
//! message text.
//!
//! `serde_json::Value` copies every string and key into its own allocation and keeps arrays and
//! objects in their own vectors and maps; on clean traffic the audit spent most of its time
//! building and freeing that tree. The tape is parsed by the same parser (serde_json, so the
//! same grammar, escapes and nesting limit) into one vector: a string without escapes is a slice
//! of the body, an array or object is a node that knows where its subtree ends, and an object's
//! members stay in document order, duplicates included (a hostile body that repeats a key has
//! every copy read). An [`Intercept`] may read chosen members of the root object as they are
//! parsed instead (the audit checks a page's rows so), leaving [`Node::Taken`] in their place.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// One node of the tape.
#[derive(Clone, Debug, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// A number, as serde_json prints it.
    Number(serde_json::Number),
    String(Cow<'a, str>),
    /// An array: its items follow it; `end` is the index just past its subtree.
    Array {
        end: usize,
    },
    /// An object: its members follow it, each a `Key` node and then the value's subtree.
    Object {
        end: usize,
    },
    Key(Cow<'a, str>),
    /// A member of the root object whose value an [`Intercept`] read while it was parsed; the
    /// tape keeps only its place.
    Taken,
}

/// The most nodes a tape parsed from text may hold (64 MiB of nodes): every body of up to
/// 4 MiB fits (a node takes at least two bytes of text), a page's rows of any size take none
/// (an [`Intercept`] reads them), and a larger body whose structure would take more is refused
/// like one nested past the parser's limit (the audit then reads it as text in windows).
pub const MAX_TAPE_NODES: usize = (1 << 21) + 64;

/// The most nodes reserved before a parse.
const RESERVE_NODES: usize = 1 << 18;

/// A parsed body: node 0 is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct Tape<'a> {
    nodes: Vec<Node<'a>>,
}

impl<'a> Tape<'a> {
    /// Parses a body. Fails on what serde_json refuses, nesting past 128 levels included.
    pub fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        Self::parse_reusing(text, Vec::new())
    }

    /// Parses a body into the memory of a tape that is done with (see [`Tape::recycle`]): a
    /// scan of many bodies writes its nodes into memory that is already in the cache, instead
    /// of touching fresh pages for every body.
    pub fn parse_reusing(
        text: &'a str,
        spare: Vec<Node<'static>>,
    ) -> Result<Self, serde_json::Error> {
        Self::parse_intercepting(text, spare, &mut NoIntercept)
    }

    /// As [`Tape::parse_reusing`], with `intercept` offered each member of the root object: the
    /// values it takes are read by it as they are parsed and stand in the tape as
    /// [`Node::Taken`].
    pub fn parse_intercepting(
        text: &'a str,
        spare: Vec<Node<'static>>,
        intercept: &mut impl Intercept<'a>,
    ) -> Result<Self, serde_json::Error> {
        let mut nodes: Vec<Node<'a>> = spare;
        nodes.clear();
        // About one node per eight bytes of a body that is not a page (a page's rows are taken
        // and leave a few nodes); no more up front than a spare tape keeps.
        nodes.reserve((text.len() / 8 + 1).min(RESERVE_NODES));
        let mut deserializer = serde_json::Deserializer::from_str(text);
        (&mut deserializer).deserialize_any(Root {
            nodes: &mut nodes,
            intercept,
        })?;
        deserializer.end()?;
        Ok(Tape { nodes })
    }

    /// The tape of nodes appended by [`Append`].
    pub(crate) fn from_nodes(nodes: Vec<Node<'a>>) -> Self {
        Tape { nodes }
    }

    /// The tape's memory, emptied, for the next [`Tape::parse_reusing`]. (Collecting an
    /// emptied vector into one of the same layout keeps its allocation.)
    pub fn recycle(self) -> Vec<Node<'static>> {
        let mut nodes = self.nodes;
        nodes.clear();
        nodes.into_iter().map(|_| Node::Null).collect()
    }

    /// The tape of a parsed `Value` (strings borrowed from it).
    pub fn from_value(value: &'a serde_json::Value) -> Self {
        let mut nodes = Vec::new();
        // Reading a Value as a deserializer cannot fail: every node has a visitor arm, and a
        // tape of a Value has no bound (the Value is already in memory).
        let _ = Append::unbounded(&mut nodes).deserialize(value);
        Tape { nodes }
    }

    /// A tape of one string.
    pub fn of_string(text: &'a str) -> Self {
        Tape {
            nodes: vec![Node::String(Cow::Borrowed(text))],
        }
    }

    pub fn node(&self, at: usize) -> &Node<'a> {
        &self.nodes[at]
    }

    /// The tape read through a [`View`].
    pub fn view(&self) -> View<'_, 'a> {
        View(&self.nodes)
    }

    /// The index just past the subtree at `at`.
    pub fn skip(&self, at: usize) -> usize {
        self.view().skip(at)
    }

    /// The items of the array at `at` (none if it is not an array).
    pub fn items(&self, at: usize) -> impl Iterator<Item = usize> + '_ {
        self.view().items(at)
    }

    /// The members of the object at `at`, as (key, index of the value), in document order.
    pub fn members(&self, at: usize) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.view().members(at)
    }

    /// The value of the last member named `key` of the object at `at` (the one a reader that
    /// keeps one value per key keeps).
    pub fn member(&self, at: usize, key: &str) -> Option<usize> {
        self.view().member(at, key)
    }

    /// The string at `at`, if it is one.
    pub fn str_at(&self, at: usize) -> Option<&str> {
        self.view().str_at(at)
    }
}

/// Nodes read as a tape: a whole tape, or the part of one parsed so far (whose open arrays and
/// objects end where the nodes do).
#[derive(Clone, Copy)]
pub struct View<'t, 'a>(&'t [Node<'a>]);

impl<'t, 'a> View<'t, 'a> {
    fn skip(self, at: usize) -> usize {
        match self.0[at] {
            Node::Array { end } | Node::Object { end } if end > at => end,
            Node::Array { .. } | Node::Object { .. } => self.0.len(),
            _ => at + 1,
        }
    }

    fn items(self, at: usize) -> impl Iterator<Item = usize> + 't {
        let (mut next, end) = match self.0[at] {
            Node::Array { .. } => (at + 1, self.skip(at)),
            _ => (0, 0),
        };
        std::iter::from_fn(move || {
            (next < end).then(|| {
                let item = next;
                next = self.skip(item);
                item
            })
        })
    }

    /// The members of the object at `at`, as (key, index of the value), in document order.
    pub fn members(self, at: usize) -> impl Iterator<Item = (&'t str, usize)> + 't {
        let (mut next, end) = match self.0[at] {
            Node::Object { .. } => (at + 1, self.skip(at)),
            _ => (0, 0),
        };
        std::iter::from_fn(move || {
            // A member parsed up to its key only (the one being offered) is not one yet.
            (next + 1 < end).then(|| {
                let key = match &self.0[next] {
                    Node::Key(key) => key.as_ref(),
                    _ => "",
                };
                let value = next + 1;
                next = self.skip(value);
                (key, value)
            })
        })
    }

    /// The value of the last member named `key` of the object at `at`.
    pub fn member(self, at: usize, key: &str) -> Option<usize> {
        self.members(at)
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .last()
    }

    /// The items of the array at `at` (none if it is not an array).
    pub fn array_items(self, at: usize) -> Option<impl Iterator<Item = usize> + 't> {
        matches!(self.0[at], Node::Array { .. }).then(|| self.items(at))
    }

    /// The string at `at`, if it is one.
    pub fn str_at(self, at: usize) -> Option<&'t str> {
        match &self.0[at] {
            Node::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Reads chosen members of a body's root object while they are parsed, instead of the tape
/// keeping their nodes (the audit checks a page's rows this way).
pub trait Intercept<'de> {
    /// Whether to read the value of the root member `key`; `so_far` is the root object as far
    /// as it is parsed (node 0), this member's key included.
    fn wants(&mut self, key: &str, so_far: View<'_, 'de>) -> bool;
    /// Reads the value (call `map.next_value_seed` exactly once).
    fn read<A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error>;
}

/// Takes nothing.
pub struct NoIntercept;

impl<'de> Intercept<'de> for NoIntercept {
    fn wants(&mut self, _: &str, _: View<'_, 'de>) -> bool {
        false
    }
    fn read<A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        map.next_value::<serde::de::IgnoredAny>().map(|_| ())
    }
}

/// The root value: as [`Append`], except that an object offers its members to the intercept.
struct Root<'t, 'a, I> {
    nodes: &'t mut Vec<Node<'a>>,
    intercept: &'t mut I,
}

impl<'de, I: Intercept<'de>> Visitor<'de> for Root<'_, 'de, I> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let at = self.nodes.len();
        self.nodes.push(Node::Object { end: 0 });
        while map.next_key_seed(Key(&mut *self.nodes))?.is_some() {
            if self.nodes.len() > MAX_TAPE_NODES {
                return Err(too_many_nodes());
            }
            let wanted = match self.nodes.last() {
                Some(Node::Key(key)) => self.intercept.wants(key, View(&self.nodes[at..])),
                _ => false,
            };
            if wanted {
                self.intercept.read(&mut map)?;
                self.nodes.push(Node::Taken);
            } else {
                map.next_value_seed(Append::bounded(&mut *self.nodes))?;
            }
        }
        let end = self.nodes.len();
        self.nodes[at] = Node::Object { end };
        Ok(())
    }
    // Anything but an object is appended as it is.
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Append::bounded(self.nodes).visit_unit()
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        Append::bounded(self.nodes).visit_bool(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        Append::bounded(self.nodes).visit_u64(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        Append::bounded(self.nodes).visit_i64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        Append::bounded(self.nodes).visit_f64(v)
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<(), E> {
        Append::bounded(self.nodes).visit_borrowed_str(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        Append::bounded(self.nodes).visit_str(v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Append::bounded(self.nodes).visit_seq(seq)
    }
}

/// Appends the nodes of one value to the tape; when bounded, fails once the tape holds more
/// than [`MAX_TAPE_NODES`].
pub(crate) struct Append<'t, 'a> {
    nodes: &'t mut Vec<Node<'a>>,
    bounded: bool,
}

impl<'t, 'a> Append<'t, 'a> {
    /// For a body read from text: its structure may take at most [`MAX_TAPE_NODES`].
    pub(crate) fn bounded(nodes: &'t mut Vec<Node<'a>>) -> Self {
        Append {
            nodes,
            bounded: true,
        }
    }

    fn unbounded(nodes: &'t mut Vec<Node<'a>>) -> Self {
        Append {
            nodes,
            bounded: false,
        }
    }

    fn nested(&mut self) -> Append<'_, 'a> {
        Append {
            nodes: &mut *self.nodes,
            bounded: self.bounded,
        }
    }

    fn full(&self) -> bool {
        self.bounded && self.nodes.len() > MAX_TAPE_NODES
    }
}

/// The error of a body whose structure would take more than [`MAX_TAPE_NODES`].
fn too_many_nodes<E: serde::de::Error>() -> E {
    E::custom(format_args!(
        "the body's structure takes more than {MAX_TAPE_NODES} nodes"
    ))
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for Append<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A key, borrowed from the text when it can be.
struct Key<'t, 'a>(&'t mut Vec<Node<'a>>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Key<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Key<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<(), E> {
        self.0.push(Node::Key(Cow::Borrowed(v)));
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.push(Node::Key(Cow::Owned(v.to_owned())));
        Ok(())
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Append<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.nodes.push(Node::Null);
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.nodes.push(Node::Null);
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.nodes.push(Node::Bool(v));
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.nodes.push(Node::Number(v.into()));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.nodes.push(Node::Number(v.into()));
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // serde_json never yields a non-finite float; null keeps the tape total if it did.
        self.nodes
            .push(serde_json::Number::from_f64(v).map_or(Node::Null, Node::Number));
        Ok(())
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<(), E> {
        self.nodes.push(Node::String(Cow::Borrowed(v)));
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.nodes.push(Node::String(Cow::Owned(v.to_owned())));
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut this = self;
        let at = this.nodes.len();
        this.nodes.push(Node::Array { end: 0 });
        while seq.next_element_seed(this.nested())?.is_some() {
            if this.full() {
                return Err(too_many_nodes());
            }
        }
        let end = this.nodes.len();
        this.nodes[at] = Node::Array { end };
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut this = self;
        let at = this.nodes.len();
        this.nodes.push(Node::Object { end: 0 });
        while map.next_key_seed(Key(&mut *this.nodes))?.is_some() {
            map.next_value_seed(this.nested())?;
            if this.full() {
                return Err(too_many_nodes());
            }
        }
        let end = this.nodes.len();
        this.nodes[at] = Node::Object { end };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_without_escapes_borrow_and_escapes_are_decoded() {
        let text = r#"{"a":"plain","b":"\u0034\n","c":[1,-2,2.5,true,null],"d":{}}"#;
        let tape = Tape::parse(text).unwrap();
        let members: Vec<_> = tape.members(0).collect();
        assert_eq!(
            members.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            ["a", "b", "c", "d"]
        );
        assert!(matches!(
            tape.node(members[0].1),
            Node::String(Cow::Borrowed("plain"))
        ));
        assert_eq!(tape.str_at(members[1].1), Some("4\n"));
        let items: Vec<_> = tape.items(members[2].1).map(|i| tape.node(i)).collect();
        assert_eq!(
            items,
            [
                &Node::Number(1.into()),
                &Node::Number((-2).into()),
                &Node::Number(serde_json::Number::from_f64(2.5).unwrap()),
                &Node::Bool(true),
                &Node::Null
            ]
        );
        assert_eq!(tape.members(members[3].1).count(), 0);
    }

    #[test]
    fn a_recycled_tape_keeps_its_memory_and_parses_the_next_body_alike() {
        let first = Tape::parse(r#"{"a":["b","c"]}"#).unwrap();
        let spare = first.recycle();
        assert!(spare.is_empty());
        let capacity = spare.capacity();
        let text = r#"[1,"x",{"y":null}]"#;
        let second = Tape::parse_reusing(text, spare).unwrap();
        assert_eq!(second, Tape::parse(text).unwrap());
        assert!(second.recycle().capacity() >= capacity);
    }

    #[test]
    fn nested_subtrees_are_skipped_whole() {
        let tape = Tape::parse(r#"[[1,[2,{"x":[3]}]],"after",{"k":{"j":1}},"last"]"#).unwrap();
        let items: Vec<_> = tape.items(0).collect();
        assert_eq!(items.len(), 4);
        assert_eq!(tape.str_at(items[1]), Some("after"));
        assert_eq!(tape.str_at(items[3]), Some("last"));
    }

    #[test]
    fn repeated_keys_are_all_kept_and_the_last_one_is_the_member() {
        let tape = Tape::parse(r#"{"k":"first","k":"second"}"#).unwrap();
        assert_eq!(tape.members(0).count(), 2);
        assert_eq!(
            tape.member(0, "k").and_then(|v| tape.str_at(v)),
            Some("second")
        );
    }

    #[test]
    fn nesting_past_the_parsers_limit_and_trailing_text_are_refused() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(Tape::parse(&deep).is_err());
        assert!(Tape::parse(r#"{"a":1} {"b":2}"#).is_err());
    }

    #[test]
    fn a_value_reads_as_the_same_tape() {
        let text = r#"{"x":["a",{"y":7}],"z":null}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(Tape::from_value(&value), Tape::parse(text).unwrap());
    }
}
