use std::fmt;

/// A reader error: which file, where in it, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub struct FormatError {
    /// The file (path inside the input set or archive).
    pub file: String,
    /// Byte offset of the problem, for binary formats.
    pub offset: Option<u64>,
    /// 1-based line number of the problem, for text formats.
    pub line: Option<u64>,
    /// What was expected and what was found.
    pub message: String,
    /// True when the read was cancelled by the caller rather than failing.
    pub cancelled: bool,
}

impl FormatError {
    /// An error about `file` as a whole.
    pub fn new(file: &str, message: impl Into<String>) -> FormatError {
        FormatError {
            file: file.to_owned(),
            offset: None,
            line: None,
            message: message.into(),
            cancelled: false,
        }
    }
    /// An error at byte `offset` of `file`.
    pub fn at_offset(file: &str, offset: u64, message: impl Into<String>) -> FormatError {
        FormatError {
            offset: Some(offset),
            ..FormatError::new(file, message)
        }
    }
    /// An error at 1-based `line` of `file`.
    pub fn at_line(file: &str, line: u64, message: impl Into<String>) -> FormatError {
        FormatError {
            line: Some(line),
            ..FormatError::new(file, message)
        }
    }
    /// The error a reader returns when its progress sink asked it to stop.
    pub fn cancelled(file: &str) -> FormatError {
        FormatError {
            cancelled: true,
            ..FormatError::new(file, "cancelled")
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        if let Some(l) = self.line {
            write!(f, " line {l}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FormatError {}
