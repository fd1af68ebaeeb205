//! Tokens of a line (quoted names, `key=value` pairs) and the parsers of their values.

use super::*;

/// One token of a line: a word, or `key=value`.
pub(super) struct Token<'a> {
    pub(super) key: Cow<'a, str>,
    pub(super) value: Option<Cow<'a, str>>,
}

/// Splits one line into tokens; `#` at the start of a token starts a comment.
pub(super) struct Lexer<'a> {
    pub(super) line: &'a str,
    pub(super) pos: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(line: &'a str) -> Lexer<'a> {
        Lexer { line, pos: 0 }
    }

    pub(super) fn quoted(&mut self) -> Result<Cow<'a, str>, String> {
        let bytes = self.line.as_bytes();
        let start = self.pos + 1;
        let mut i = start;
        let mut owned: Option<String> = None;
        loop {
            let Some(&c) = bytes.get(i) else {
                return Err("a quoted string is not closed before the end of the line".into());
            };
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(match owned {
                        Some(s) => Cow::Owned(s),
                        None => Cow::Borrowed(&self.line[start..i]),
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(|| self.line[start..i].to_owned());
                    let esc = match bytes.get(i + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        _ => return Err("unknown escape in a quoted string (use \\\" \\\\ \\n \\t \\r)".into()),
                    };
                    s.push(esc);
                    i += 2;
                }
                _ => {
                    let ch_len = utf8_len(c);
                    if let Some(s) = owned.as_mut() {
                        s.push_str(&self.line[i..i + ch_len]);
                    }
                    i += ch_len;
                }
            }
        }
    }

    pub(super) fn bare(&mut self, stop_at_equals: bool) -> Result<&'a str, String> {
        let bytes = self.line.as_bytes();
        let start = self.pos;
        while let Some(&c) = bytes.get(self.pos) {
            if c == b' ' || c == b'\t' || (stop_at_equals && c == b'=') {
                break;
            }
            if c == b'"' {
                return Err(format!("unexpected `\"` inside `{}`", &self.line[start..self.pos]));
            }
            self.pos += 1;
        }
        Ok(&self.line[start..self.pos])
    }

    pub(super) fn next_token(&mut self) -> Result<Option<Token<'a>>, String> {
        let bytes = self.line.as_bytes();
        while matches!(bytes.get(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        match bytes.get(self.pos) {
            None | Some(b'#') => return Ok(None),
            Some(b'"') => {
                let word = self.quoted()?;
                return Ok(Some(Token { key: word, value: None }));
            }
            _ => {}
        }
        let key = self.bare(true)?;
        if bytes.get(self.pos) != Some(&b'=') {
            return Ok(Some(Token {
                key: Cow::Borrowed(key),
                value: None,
            }));
        }
        self.pos += 1;
        let value = if bytes.get(self.pos) == Some(&b'"') {
            self.quoted()?
        } else {
            Cow::Borrowed(self.bare(false)?)
        };
        Ok(Some(Token {
            key: Cow::Borrowed(key),
            value: Some(value),
        }))
    }

    /// The next plain word (not `key=value`), or an error naming what was expected.
    pub(super) fn word(&mut self, what: &str) -> Result<Cow<'a, str>, String> {
        match self.next_token()? {
            Some(Token { key, value: None }) => Ok(key),
            Some(Token { key, value: Some(_) }) => Err(format!("expected {what}, found `{key}=...`")),
            None => Err(format!("expected {what} before the end of the line")),
        }
    }

    pub(super) fn end(&mut self) -> Result<(), String> {
        match self.next_token()? {
            None => Ok(()),
            Some(t) => Err(format!("unexpected `{}` at the end of the line", t.key)),
        }
    }
}

pub(super) fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

pub(super) fn parse_u64(s: &str, what: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{what} must be a non-negative integer, found `{s}`"))
}

pub(super) fn parse_u32(s: &str, what: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("{what} must be an integer from 0 to {}, found `{s}`", u32::MAX))
}

/// A time in ns: `1500`, `1500ns`, `1.5us`, `2ms`, `0.25s`, rounded to the nearest ns.
pub(super) fn parse_time(s: &str) -> Result<Time, String> {
    // Plain nanoseconds (what the writer emits): at most 19 digits cannot overflow a u64.
    if !s.is_empty() && s.len() <= 19 && s.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(s.bytes().fold(0u64, |v, c| v * 10 + (c - b'0') as u64));
    }
    let digits_end = s
        .bytes()
        .position(|c| !(c.is_ascii_digit() || c == b'.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    let scale: u128 = match unit {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(format!("time `{s}` has an unknown unit (use ns, us, ms or s)")),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 18 {
        return Err(format!("`{s}` is not a time"));
    }
    let int_v: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| format!("`{s}` is not a time"))?
    };
    let mut ns = int_v
        .checked_mul(scale)
        .ok_or_else(|| format!("time `{s}` is too large"))?;
    if !frac.is_empty() {
        let f: u128 = frac.parse().map_err(|_| format!("`{s}` is not a time"))?;
        let denom = 10u128.pow(frac.len() as u32);
        ns += (f * scale + denom / 2) / denom;
    }
    Time::try_from(ns).map_err(|_| format!("time `{s}` is too large"))
}

/// Members written as `0-3,8`; `-` for none.
pub(super) fn parse_members(s: &str, num_ranks: u32) -> Result<Vec<Rank>, String> {
    let mut out = Vec::new();
    if s == "-" {
        return Ok(out);
    }
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (parse_u32(a, "a member rank")?, parse_u32(b, "a member rank")?),
            None => {
                let a = parse_u32(part, "a member rank")?;
                (a, a)
            }
        };
        if a > b || b >= num_ranks {
            return Err(format!("member range `{part}` is not within ranks 0..{num_ranks}"));
        }
        if out.len() as u64 + u64::from(b - a) + 1 > u64::from(num_ranks) {
            return Err(format!("communicator lists more members than the {num_ranks} ranks"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}
