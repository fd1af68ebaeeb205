//! CSV records (RFC 4180 quoting), split into fields without copying them.

/// Splits CSV text into records of fields (RFC 4180 quoting, spaces around fields trimmed),
/// reusing one buffer of field ranges.
pub(super) struct CsvScanner<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) line: u64,
}

/// A field: byte range in the text, and whether it holds doubled quotes to undo.
#[derive(Clone, Copy)]
pub(super) struct Field {
    start: usize,
    end: usize,
    escaped: bool,
}

impl<'a> CsvScanner<'a> {
    pub(super) fn field_text(&self, f: Field) -> std::borrow::Cow<'a, str> {
        let s = &self.text[f.start..f.end];
        if f.escaped {
            std::borrow::Cow::Owned(s.replace("\"\"", "\""))
        } else {
            std::borrow::Cow::Borrowed(s)
        }
    }

    /// Read the next record into `fields`; returns its first line number, or `None` at the end.
    pub(super) fn next_record(&mut self, fields: &mut Vec<Field>) -> Result<Option<u64>, (u64, String)> {
        let b = self.text.as_bytes();
        // Skip blank lines.
        loop {
            let start = self.pos;
            while matches!(b.get(self.pos), Some(b' ' | b'\t' | b'\r')) {
                self.pos += 1;
            }
            match b.get(self.pos) {
                None => return Ok(None),
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                }
                _ => {
                    self.pos = start;
                    break;
                }
            }
        }
        fields.clear();
        let first_line = self.line;
        loop {
            while matches!(b.get(self.pos), Some(b' ' | b'\t')) {
                self.pos += 1;
            }
            if b.get(self.pos) == Some(&b'"') {
                let start = self.pos + 1;
                let mut i = start;
                let mut escaped = false;
                loop {
                    match b.get(i) {
                        None => return Err((first_line, "a quoted field is not closed".into())),
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                            escaped = true;
                            i += 2;
                        }
                        Some(b'"') => break,
                        Some(b'\n') => {
                            self.line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
                fields.push(Field { start, end: i, escaped });
                self.pos = i + 1;
                while matches!(b.get(self.pos), Some(b' ' | b'\t' | b'\r')) {
                    self.pos += 1;
                }
                match b.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b'\n') | None => {}
                    Some(_) => {
                        return Err((
                            self.line,
                            format!("unexpected text after quoted field {}", fields.len()),
                        ))
                    }
                }
            } else {
                let start = self.pos;
                while !matches!(b.get(self.pos), Some(b',' | b'\n') | None) {
                    self.pos += 1;
                }
                let end = start + self.text[start..self.pos].trim_end().len();
                fields.push(Field {
                    start,
                    end,
                    escaped: false,
                });
                if b.get(self.pos) == Some(&b',') {
                    self.pos += 1;
                    continue;
                }
            }
            match b.get(self.pos) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    return Ok(Some(first_line));
                }
                None => return Ok(Some(first_line)),
                _ => {}
            }
        }
    }
}
