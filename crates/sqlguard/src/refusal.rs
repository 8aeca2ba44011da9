//! Why a served text was not rebuilt, in a person's words.

/// A served text the consumer will not put in DDL, and why: "calls function
/// pg_catalog.query_to_xml, which is not on the consumer's allow-list of side-effect-free
/// built-ins", "holds a subquery", "names column x, which is not a column of this table".
///
/// The text names objects (functions, columns, schemas, operators) but never a literal value:
/// constants can be personal data.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refusal {
    reason: String,
}

impl Refusal {
    /// The reason, as `Display` prints it.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    pub(crate) fn too_long(bytes: usize) -> Self {
        Self::new(format!(
            "is {bytes} bytes long; the consumer reads at most {} bytes of served text",
            crate::MAX_TEXT_BYTES
        ))
    }

    /// Nested deeper than the protobuf decoder reads (about 45 levels of expression), than
    /// the parser's own stack and memory guards allow, or than [`crate::MAX_DEPTH`].
    pub(crate) fn too_deep() -> Self {
        Self::new("nests deeper than the consumer reads (about 45 levels of nested expression)")
    }

    /// PostgreSQL's parser rejected the text. Its message is not repeated: it can quote the
    /// text near the error, and the text can hold a constant.
    pub(crate) fn not_sql(place: &str) -> Self {
        Self::new(format!(
            "is not valid SQL for {place} (PostgreSQL's parser rejects it)"
        ))
    }

    /// The tree is not the one statement, clause or expression its place allows.
    pub(crate) fn shape(place: &str, detail: &str) -> Self {
        Self::new(format!("is not exactly {place}: {detail}"))
    }

    pub(crate) fn leftover(what: &str) -> Self {
        Self::new(format!("holds {what} that the consumer does not rebuild"))
    }
}

/// A name as a refusal shows it: bare when it is a plain lower-case identifier, otherwise
/// double-quoted with control characters replaced, and cut at 64 characters.
pub(crate) fn shown(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    let cut: String = name.chars().take(64).collect();
    if plain {
        cut
    } else {
        let safe: String = cut
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        maskbus_model::quote_ident(&safe)
    }
}

/// A possibly qualified name as a refusal shows it: `pg_catalog.lower`, `"My Schema".f`.
pub(crate) fn shown_qualified(parts: &[String]) -> String {
    parts
        .iter()
        .take(4)
        .map(|p| shown(p))
        .collect::<Vec<_>>()
        .join(".")
}
