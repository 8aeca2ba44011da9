//! Escaping for the text maskbus generates around names it did not choose: a table or column
//! name of production may hold newlines, `#`, `[`, `|` or `=`, and must never become a line of a
//! policy file or a row of a Markdown table. Pure.

/// `text` for a TOML comment (or any one-line log or report text): every control character,
/// newlines and carriage returns first, written as `\u{..}`, so the comment stays one line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` for one cell of a Markdown table: one line (as [`one_line`]), with the characters
/// that end a cell, open code, start HTML or make a link or an image backslash-escaped.
/// (Emphasis characters are left: they can style a cell, not break the table or add to it.)
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if matches!(c, '\\' | '|' | '`' | '<' | '>' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    // No link and no image: `](` and `![` are what make them.
    out.replace("](", "]\\(").replace("![", "\\![")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_hostile_survives_as_markup_or_a_second_line() {
        let hostile = "staff\n[hr.employees]\r\nid=\"keep\" | x | <b>#";
        let line = one_line(hostile);
        assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
        let cell = markdown_cell(hostile);
        assert!(!cell.contains('\n'), "{cell}");
        assert!(!cell.replace("\\|", "").contains('|'), "{cell}");
        assert!(cell.contains("\\<b\\>"), "{cell}");
        let link = markdown_cell("![x](https://example.invalid/p)");
        assert_eq!(link, "\\![x]\\(https://example.invalid/p)");
    }
}
