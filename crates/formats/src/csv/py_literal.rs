//! Python literals, as far as Pipit's `Attributes` column needs (dicts, lists, tuples, strings,
//! numbers, `None`, booleans and numpy scalars such as `np.int64(3)`).

/// A Python literal, as far as Pipit's attribute column needs.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// `'text'` or `"text"`.
    Str(String),
    /// An integer (Python ints are unbounded; OTF2 values fit in 128 bits).
    Int(i128),
    /// A float, including `nan` / `inf` spelled as Pipit writes them.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `[...]` or `(...)`.
    List(Vec<PyValue>),
    /// `{key: value, ...}` in written order.
    Dict(Vec<(PyValue, PyValue)>),
}

impl PyValue {
    /// The value under string key `key` of a dict.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
    /// The value as an integer (floats with no fraction count).
    pub fn as_int(&self) -> Option<i128> {
        match self {
            PyValue::Int(i) => Some(*i),
            PyValue::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i128),
            PyValue::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    /// The value as text, for strings only.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Nesting limit of literals: deeper input is hostile, not a trace.
const MAX_DEPTH: u32 = 64;

/// Parse one Python literal (the whole of `text`, surrounding spaces allowed).
pub fn parse_py_literal(text: &str) -> Result<PyValue, String> {
    let mut p = PyParser {
        s: text.as_bytes(),
        text,
        pos: 0,
    };
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(format!(
            "unexpected `{}` after the value at character {}",
            p.rest(),
            p.pos + 1
        ));
    }
    Ok(v)
}

struct PyParser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl PyParser<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }
    fn rest(&self) -> &str {
        let end = (self.pos + 20).min(self.text.len());
        self.text.get(self.pos..end).unwrap_or("…")
    }
    fn value(&mut self, depth: u32) -> Result<PyValue, String> {
        if depth > MAX_DEPTH {
            return Err(format!("literal nested more than {MAX_DEPTH} levels"));
        }
        self.skip_ws();
        match self.s.get(self.pos) {
            None => Err("the value ends too early".into()),
            Some(b'\'' | b'"') => self.string().map(PyValue::Str),
            Some(b'{') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    if self.s.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        return Ok(PyValue::Dict(items));
                    }
                    let k = self.value(depth + 1)?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b':') {
                        return Err(format!("expected `:` in a dict at character {}", self.pos + 1));
                    }
                    self.pos += 1;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(format!("expected `,` or `}}` in a dict at character {}", self.pos + 1)),
                    }
                }
            }
            Some(&open @ (b'[' | b'(')) => {
                let close = if open == b'[' { b']' } else { b')' };
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    if self.s.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        return Ok(PyValue::List(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(&c) if c == close => {}
                        _ => {
                            return Err(format!(
                                "expected `,` or `{}` at character {}",
                                close as char,
                                self.pos + 1
                            ))
                        }
                    }
                }
            }
            Some(_) => {
                let start = self.pos;
                while self
                    .s
                    .get(self.pos)
                    .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_'))
                {
                    self.pos += 1;
                }
                let word = &self.text[start..self.pos];
                if self.s.get(self.pos) == Some(&b'(') && word.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    // A one-argument constructor such as numpy 2's `np.int64(5)`: its value.
                    self.pos += 1;
                    let inner = self.value(depth + 1)?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b')') {
                        return Err(format!("expected `)` after the argument of `{word}(`"));
                    }
                    self.pos += 1;
                    return Ok(inner);
                }
                match word {
                    "" => Err(format!("unexpected `{}`", self.rest())),
                    "True" => Ok(PyValue::Bool(true)),
                    "False" => Ok(PyValue::Bool(false)),
                    "None" => Ok(PyValue::None),
                    "nan" | "inf" | "-inf" => Ok(PyValue::Float(word.parse().expect("valid float words"))),
                    _ => {
                        let digits = word.replace('_', "");
                        if let Ok(i) = digits.parse::<i128>() {
                            Ok(PyValue::Int(i))
                        } else if let Ok(f) = digits.parse::<f64>() {
                            Ok(PyValue::Float(f))
                        } else {
                            Err(format!("`{word}` is not a Python literal"))
                        }
                    }
                }
            }
        }
    }
    fn string(&mut self) -> Result<String, String> {
        let quote = self.s[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("a string is not closed".into());
            };
            if c == quote {
                self.pos += 1;
                return Ok(out);
            }
            if c == b'\\' {
                let e = self.s.get(self.pos + 1).copied().ok_or("a string ends with `\\`")?;
                self.pos += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'x' => {
                        let hex = self.text.get(self.pos..self.pos + 2).ok_or("bad \\x escape")?;
                        let v = u8::from_str_radix(hex, 16).map_err(|_| "bad \\x escape")?;
                        out.push(v as char);
                        self.pos += 2;
                    }
                    other => out.push(other as char),
                }
                continue;
            }
            let len = match c {
                0xf0..=0xff => 4,
                0xe0..=0xef => 3,
                0xc0..=0xdf => 2,
                _ => 1,
            };
            out.push_str(
                self.text
                    .get(self.pos..self.pos + len)
                    .ok_or("broken UTF-8 in a string")?,
            );
            self.pos += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        let v = parse_py_literal(
            "{'attributes': {'Attribute 2': 26602}, 'program_name': \"/a/b\", 'args': [], 'x': (1.5, -2, None, True), 'e': -9223372036854775808}",
        )
        .unwrap();
        assert_eq!(
            v.get("attributes").unwrap().get("Attribute 2"),
            Some(&PyValue::Int(26602))
        );
        assert_eq!(v.get("program_name").and_then(PyValue::as_str), Some("/a/b"));
        assert_eq!(v.get("args"), Some(&PyValue::List(vec![])));
        assert_eq!(
            v.get("x"),
            Some(&PyValue::List(vec![
                PyValue::Float(1.5),
                PyValue::Int(-2),
                PyValue::None,
                PyValue::Bool(true)
            ]))
        );
        assert_eq!(v.get("e").and_then(PyValue::as_int), Some(-9223372036854775808));
        assert_eq!(parse_py_literal("'it\\'s'").unwrap(), PyValue::Str("it's".into()));
        assert_eq!(
            parse_py_literal("{'receiver': np.int64(3), 'x': np.float64(2.5)}")
                .unwrap()
                .get("receiver"),
            Some(&PyValue::Int(3))
        );
        assert!(parse_py_literal("np.int64(3, 4)").is_err());
        assert!(parse_py_literal("{'a': 1").is_err());
        assert!(parse_py_literal("{'a' 1}").is_err());
        assert!(parse_py_literal("[1, 2] x").is_err());
        assert!(parse_py_literal(&"[".repeat(10_000)).is_err());
    }
}
