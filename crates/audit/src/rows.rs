//! A page reply's rows, checked while they are parsed.
//!
//! Nearly every byte on the bus is a cell of a page reply's `rows`. Keeping each cell as a node
//! of the tape and walking the tape afterwards wrote and read again some thirty bytes per cell;
//! here a cell is checked the moment the parser has it, with the hint of its column, and only
//! its place in the root object is kept ([`Node::Taken`]). The findings are the same, in the
//! same order, as the walk over a whole tape gives: a value that is not a string (a number, a
//! nested array or object, a row that is not an array) is parsed into a small tape of its own
//! and walked as the whole tape's walk would. The rows are read this way when the root object
//! has named its `columns` before them, as the producer writes it; if a `columns` or `entity`
//! member comes after the rows (a hostile body, changing what the rows' hints would be), the
//! scan is [`PageRows::stale`] and the caller reads the body again, its rows taken under the
//! columns the first reading ended with ([`PageRows::fixed`]), which are the ones the whole
//! tape's walk reads them under. Either way a page's memory is its envelope and one row, never
//! a tape of its rows: a page of any size is read with its structure.

use crate::tree::{Append, Intercept, Node, Tape, View};
use crate::walk::{check_embedded_json, check_string, PageColumns, Step, Walker};
use crate::{Context, Finding, Hint};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Takes the `rows` of a page reply's root object.
pub(crate) struct PageRows<'c, 's> {
    context: Context<'c>,
    /// The last page's columns, as [`PageColumns::of_cached`] keeps them.
    last: &'s mut Option<LastColumns>,
    /// The columns named before the `rows` member on offer.
    page: Option<PageColumns>,
    /// The findings of each `rows` member taken, in document order.
    pub(crate) taken: Vec<Vec<Finding>>,
    /// A `columns` or `entity` member followed rows that were taken: read the body again.
    pub(crate) stale: bool,
    /// The columns every `rows` member is read under, known before the parse (the second
    /// reading of a stale body): nothing is stale then.
    fixed: Option<Option<PageColumns>>,
}

/// The entity and columns of the last page a scanner read, and what they say.
pub(crate) type LastColumns = (String, Vec<String>, PageColumns);

impl<'c, 's> PageRows<'c, 's> {
    /// `last` must be kept with one context: what a column says depends on its `kept`.
    pub(crate) fn new(context: Context<'c>, last: &'s mut Option<LastColumns>) -> Self {
        PageRows {
            context,
            last,
            page: None,
            taken: Vec::new(),
            stale: false,
            fixed: None,
        }
    }

    /// Takes every `rows` member under `page`: the columns of the root object as a reader keeping
    /// the last copy of each key sees them ([`PageColumns::of`] over the whole body), or none
    /// (the rows are then walked as any member is).
    pub(crate) fn fixed(
        context: Context<'c>,
        last: &'s mut Option<LastColumns>,
        page: Option<PageColumns>,
    ) -> Self {
        PageRows {
            fixed: Some(page),
            ..Self::new(context, last)
        }
    }
}

impl<'de> Intercept<'de> for PageRows<'_, '_> {
    fn wants(&mut self, key: &str, so_far: View<'_, 'de>) -> bool {
        if let Some(page) = &self.fixed {
            self.page = if key == "rows" { page.clone() } else { None };
            return self.page.is_some();
        }
        if !self.taken.is_empty() && (key == "columns" || key == "entity") {
            self.stale = true;
        }
        if key != "rows" || self.stale {
            return false;
        }
        self.page = PageColumns::of_cached(so_far, 0, self.context, self.last);
        self.page.is_some()
    }

    fn read<A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        let page = self.page.take().unwrap_or_default();
        let mut findings = Vec::new();
        map.next_value_seed(Read {
            at: Place::Rows,
            page: &page,
            context: self.context,
            findings: &mut findings,
            pieces: None,
        })?;
        self.taken.push(findings);
        Ok(())
    }
}

/// Where in the rows a value sits.
#[derive(Clone, Copy)]
enum Place {
    /// The value of `rows` itself.
    Rows,
    Row(usize),
    Cell(usize, usize),
}

/// Reads the value at one place of the rows.
struct Read<'s, 'c> {
    at: Place,
    page: &'s PageColumns,
    context: Context<'c>,
    findings: &'s mut Vec<Finding>,
    /// A row's cells as pieces of a split number ([`crate::walk::row_splits`]), by column.
    pieces: Option<&'s mut Vec<Option<Vec<String>>>>,
}

impl<'c> Read<'_, 'c> {
    /// The path, the hint and the exact matcher of a value at this place, as the whole tape's
    /// walk gives them.
    fn reading(&self) -> (Vec<Step<'static>>, Hint, Option<&'c crate::ExactMatcher>) {
        let exact = self.context.exact;
        match self.at {
            Place::Rows => (vec![Step::Key("rows")], Hint::of("rows"), exact),
            Place::Row(r) => (vec![Step::Key("rows"), Step::Index(r)], Hint::NONE, exact),
            Place::Cell(r, c) => {
                let (hint, exact) = self.page.cell(c, exact);
                (
                    vec![Step::Key("rows"), Step::Index(r), Step::Index(c)],
                    hint,
                    exact,
                )
            }
        }
    }

    /// A value this place does not read directly: parsed into a small tape and walked.
    fn walk<'de, E>(
        self,
        append: impl FnOnce(&mut Vec<Node<'de>>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut nodes = Vec::new();
        append(&mut nodes)?;
        let tape = Tape::from_nodes(nodes);
        let (path, hint, exact) = self.reading();
        let found = Walker::new(&tape, self.context, Vec::new()).findings_at(0, hint, exact, &path);
        self.findings.extend(found);
        Ok(())
    }

    fn string(self, text: &str) {
        if let Place::Cell(r, c) = self.at {
            // Most cells are strings: checked here, as the parser hands them over.
            let (hint, exact) = self.page.cell(c, self.context.exact);
            let path = [Step::Key("rows"), Step::Index(r), Step::Index(c)];
            check_string(text, hint, exact, &path, self.findings);
            check_embedded_json(text, exact, &path, self.findings);
            if let Some(pieces) = self.pieces {
                pieces.push(self.page.piece(c, text));
            }
        } else {
            let (path, hint, exact) = self.reading();
            check_string(text, hint, exact, &path, self.findings);
            check_embedded_json(text, exact, &path, self.findings);
        }
    }
}

impl<'de> DeserializeSeed<'de> for Read<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Read<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let at = self.at;
        let next = move |i: usize| match at {
            Place::Rows => Some(Place::Row(i)),
            Place::Row(r) => Some(Place::Cell(r, i)),
            Place::Cell(..) => None,
        };
        if next(0).is_none() {
            return self.walk(|nodes| Append::bounded(nodes).visit_seq(seq));
        }
        // A row's cells are collected as pieces of a split number, read once the row ends.
        let mut pieces: Option<Vec<Option<Vec<String>>>> =
            matches!(at, Place::Row(_)).then(Vec::new);
        let mut i = 0;
        while let Some(at) = next(i) {
            let before = pieces.as_ref().map_or(0, Vec::len);
            if let Place::Cell(_, c) = at {
                if self.page.reviewed(c) {
                    if seq.next_element::<serde::de::IgnoredAny>()?.is_none() {
                        break;
                    }
                    if let Some(p) = pieces.as_mut() {
                        p.push(None);
                    }
                    i += 1;
                    continue;
                }
            }
            let item = Read {
                at,
                page: self.page,
                context: self.context,
                findings: &mut *self.findings,
                pieces: pieces.as_mut(),
            };
            if seq.next_element_seed(item)?.is_none() {
                break;
            }
            // A cell that was not a string is no piece.
            if let Some(p) = pieces.as_mut() {
                if p.len() == before {
                    p.push(None);
                }
            }
            i += 1;
        }
        if let (Place::Row(r), Some(pieces)) = (at, pieces) {
            crate::walk::row_splits(&pieces, || format!("$.rows[{r}]"), self.findings);
        }
        Ok(())
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<(), E> {
        self.string(v);
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.string(v);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    // Numbers and objects are walked as the whole tape's walk would.
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.walk(|nodes| Append::bounded(nodes).visit_u64(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.walk(|nodes| Append::bounded(nodes).visit_i64(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.walk(|nodes| Append::bounded(nodes).visit_f64(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.walk(|nodes| Append::bounded(nodes).visit_map(map))
    }
}

#[cfg(test)]
mod tests {
    use crate::{scan_tape, Context, ExactMatcher, Finding, Scanner, Tape};
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// The walk over the whole tape, which reading the rows while parsing must equal.
    fn walked(body: &str, context: Context<'_>) -> Vec<Finding> {
        scan_tape(&Tape::parse(body).unwrap(), context)
    }

    fn streamed(body: &str, context: Context<'_>) -> Vec<Finding> {
        Scanner::default().scan_text(body, context).unwrap()
    }

    /// Cells that are clean, leaks of every shape, and values that are not strings.
    const CELLS: &[&str] = &[
        "null",
        r#""plain text""#,
        r#""224-30-8280""#,
        "224308280",
        r#""4111 1111 1111 1111""#,
        r#""\u0034111111111111111""#,
        r#""1990-04-17""#,
        r#""(212) 555-0147""#,
        r#""021000021""#,
        r#""jane.roe@gmail.com""#,
        r#""Veronica Quill""#,
        r#"{"pan":"4111111111111111"}"#,
        r#"["a","224-30-8280"]"#,
        "true",
        "12.5",
    ];
    const COLUMNS: &str =
        r#"["id","birth_date","phone","routing_number","account_number","surname"]"#;

    fn context<'a>(exact: &'a ExactMatcher, kept: &'a HashSet<(String, String)>) -> Context<'a> {
        Context {
            exact: Some(exact),
            kept: Some(kept),
            reviewed: None,
        }
    }

    fn matcher() -> (ExactMatcher, HashSet<(String, String)>) {
        let mut exact = ExactMatcher::new([7; 32]);
        exact.add("veronica quill");
        let kept = HashSet::from([("people".to_string(), "surname".to_string())]);
        (exact, kept)
    }

    fn body(members: &[(&str, String)]) -> String {
        let members: Vec<String> = members.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
        format!("{{{}}}", members.join(","))
    }

    fn rows(cells: &[Vec<usize>]) -> String {
        let rows: Vec<String> = cells
            .iter()
            .map(|row| {
                let row: Vec<&str> = row.iter().map(|&i| CELLS[i % CELLS.len()]).collect();
                format!("[{}]", row.join(","))
            })
            .collect();
        format!("[{}]", rows.join(","))
    }

    #[test]
    fn a_page_as_the_producer_writes_it_finds_what_the_walk_finds() {
        let (exact, kept) = matcher();
        let all: Vec<usize> = (0..CELLS.len()).collect();
        let cells: Vec<Vec<usize>> = (0..CELLS.len())
            .map(|shift| all.iter().map(|i| i + shift).take(7).collect())
            .collect();
        let page = body(&[
            ("type", r#""page""#.into()),
            ("entity", r#""people""#.into()),
            ("columns", COLUMNS.into()),
            ("rows", rows(&cells)),
            ("next_after", "224308280".into()),
        ]);
        let mut last = None;
        let mut intercept = super::PageRows::new(Context::default(), &mut last);
        let tape = Tape::parse_intercepting(&page, Vec::new(), &mut intercept).unwrap();
        assert_eq!((intercept.taken.len(), intercept.stale), (1, false));
        assert_eq!(
            tape.node(tape.member(0, "rows").unwrap()),
            &crate::tree::Node::Taken
        );
        for context in [Context::default(), context(&exact, &kept)] {
            let found = streamed(&page, context);
            assert!(found.len() > 20, "{found:?}");
            assert_eq!(found, walked(&page, context));
        }
    }

    #[test]
    fn rows_that_are_not_arrays_and_rows_before_their_columns_are_read_alike() {
        let odd_rows = r#"["224-30-8280",{"ssn":"224308280"},7,null,[["4111111111111111"]]]"#;
        for members in [
            vec![("columns", COLUMNS.to_string()), ("rows", odd_rows.into())],
            vec![
                ("columns", COLUMNS.into()),
                ("rows", r#""224-30-8280""#.into()),
            ],
            vec![
                ("columns", COLUMNS.into()),
                ("rows", r#"{"a":"224308280"}"#.into()),
            ],
            vec![("rows", rows(&[vec![2, 4]])), ("columns", COLUMNS.into())],
            vec![
                ("columns", r#""not an array""#.into()),
                ("rows", rows(&[vec![2]])),
            ],
        ] {
            let page = body(&members);
            assert_eq!(
                streamed(&page, Context::default()),
                walked(&page, Context::default()),
                "{page}"
            );
        }
    }

    /// A page of any size is read in the memory of its envelope: its rows leave one node in
    /// the tape, and columns named again after them are read with a second pass that takes
    /// the rows again, never a tape of them.
    #[test]
    fn a_big_page_leaves_a_tape_of_its_envelope_only() {
        let (exact, kept) = matcher();
        let context = context(&exact, &kept);
        let cells: Vec<Vec<usize>> = (0..60_000).map(|i| vec![i % 3, 1, 2 + i % 2]).collect();
        for members in [
            vec![("columns", COLUMNS.to_string()), ("rows", rows(&cells))],
            vec![
                ("columns", r#"["id"]"#.to_string()),
                ("rows", rows(&cells)),
                ("columns", COLUMNS.to_string()),
            ],
        ] {
            let page = body(&members);
            assert!(page.len() > crate::tree::MAX_TAPE_NODES, "{}", page.len());
            let mut last = None;
            let mut intercept = super::PageRows::new(context, &mut last);
            let tape = Tape::parse_intercepting(&page, Vec::new(), &mut intercept).unwrap();
            assert!(tape.skip(0) < 40, "{} nodes", tape.skip(0));
            let mut scanner = Scanner::default();
            let found = scanner.scan_text(&page, context).unwrap();
            // The tape a scanner keeps for the next body is no bigger than it reserves up front.
            assert!(
                scanner.spare.capacity() <= 1 << 18,
                "{}",
                scanner.spare.capacity()
            );
            assert!(found.len() >= 60_000, "{}", found.len());
            assert_eq!(found, walked(&page, context));
        }
        // Structure outside the rows past the bound is refused, to be read as text.
        let wide = format!("{{\"a\":[{}0]}}", "0,".repeat(crate::tree::MAX_TAPE_NODES));
        assert!(Scanner::default().scan_text(&wide, context).is_err());
        assert!(Tape::parse(&wide).is_err());
    }

    /// Rows nested past the parser's limit fail the parse (the caller then reads the body as
    /// text in windows) instead of overflowing the stack, however deep they go.
    #[test]
    fn rows_nested_past_the_limit_are_refused_not_a_crash() {
        for depth in [200, 100_000] {
            let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let page = body(&[("columns", COLUMNS.into()), ("rows", format!("[[{deep}]]"))]);
            assert!(Scanner::default()
                .scan_text(&page, Context::default())
                .is_err());
        }
    }

    /// A hostile body that names other columns, or another entity, after its rows: a reader
    /// keeping the last copy of each key reads the rows under those, and so does the audit.
    #[test]
    fn columns_or_an_entity_named_again_after_the_rows_are_the_ones_used() {
        let (exact, kept) = matcher();
        let quiet = r#"["id","id","id","id","id","surname"]"#;
        for (key, value) in [("columns", quiet), ("entity", r#""people""#)] {
            let page = body(&[
                ("entity", r#""other""#.into()),
                ("columns", COLUMNS.into()),
                ("rows", rows(&[vec![6, 7, 8, 9, 10, 10]])),
                (key, value.into()),
            ]);
            let context = context(&exact, &kept);
            assert_eq!(streamed(&page, context), walked(&page, context), "{page}");
        }
    }

    /// One scanner reads page after page: a page of another entity, or other columns, is read
    /// with its own hints, not the last page's.
    #[test]
    fn a_scanner_reading_many_pages_reads_each_with_its_own_columns() {
        let (exact, kept) = matcher();
        let context = context(&exact, &kept);
        let cells = rows(&[vec![6, 7, 8, 9, 10, 10, 3], vec![2, 2, 2, 2, 2, 2]]);
        let page = |entity: &str, columns: &str| {
            body(&[
                ("entity", format!("{entity:?}")),
                ("columns", columns.to_string()),
                ("rows", cells.clone()),
            ])
        };
        let mut scanner = Scanner::default();
        for page in [
            page("people", COLUMNS),
            page("people", COLUMNS),
            page("others", COLUMNS),
            page(
                "others",
                r#"["birth_date","phone","routing_number","account_number","id","surname"]"#,
            ),
            page(
                "others",
                r#"["id","birth_date","phone","routing_number","account_number"]"#,
            ),
            page("people", COLUMNS),
        ] {
            let found = scanner.scan_text(&page, context).unwrap();
            assert_eq!(found, walked(&page, context), "{page}");
            assert_eq!(found, streamed(&page, context));
        }
        // Another context (no exact matcher): kept columns are read anew.
        let plain = page("people", COLUMNS);
        assert_eq!(
            scanner.scan_text(&plain, Context::default()).unwrap(),
            walked(&plain, Context::default())
        );
    }

    proptest! {
        /// Any arrangement of a page's members, repeats included, finds the same as the walk.
        #[test]
        fn any_arrangement_finds_what_the_walk_finds(
            order in proptest::sample::subsequence(vec![0usize, 1, 2, 3, 4, 5], 0..=6).prop_shuffle(),
            cells in proptest::collection::vec(proptest::collection::vec(0usize..40, 0..8), 0..6),
        ) {
            let (exact, kept) = matcher();
            let members: Vec<(&str, String)> = order
                .iter()
                .map(|m| match m {
                    0 => ("entity", r#""people""#.to_string()),
                    1 => ("columns", COLUMNS.to_string()),
                    2 | 3 => ("rows", rows(&cells)),
                    4 => ("columns", r#"["surname"]"#.to_string()),
                    _ => ("type", r#""page""#.to_string()),
                })
                .collect();
            let page = body(&members);
            for context in [Context::default(), context(&exact, &kept)] {
                prop_assert_eq!(streamed(&page, context), walked(&page, context));
            }
        }
    }
}
