//! Rows in the text format of `COPY ... FROM STDIN`: tab between columns, `\N` for NULL, and
//! backslash escapes for the few bytes that would otherwise end a field or a row.

/// Appends one row to `buf`. `None` is SQL NULL.
pub fn push_row(buf: &mut Vec<u8>, fields: &[Option<&str>]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            buf.push(b'\t');
        }
        match field {
            None => buf.extend_from_slice(b"\\N"),
            Some(text) => push_escaped(buf, text),
        }
    }
    buf.push(b'\n');
}

fn push_escaped(buf: &mut Vec<u8>, text: &str) {
    for &b in text.as_bytes() {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_separators_and_marks_null() {
        let mut buf = Vec::new();
        push_row(&mut buf, &[Some("a\tb"), None, Some("c\\d\ne")]);
        assert_eq!(buf, b"a\\tb\t\\N\tc\\\\d\\ne\n");
    }
}
