//! What every subcommand shares: loading traces from paths, errors and exit codes, output.

use std::fmt;
use std::process::ExitCode;

/// A failure the user must see, with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad input or usage (exit 2).
    Input(String),
    /// The analysis ran but found nothing (exit 1).
    NothingFound(String),
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Input(_) => ExitCode::from(2),
            CliError::NothingFound(_) => ExitCode::from(1),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::NothingFound(m) => f.write_str(m),
        }
    }
}

/// Result of a subcommand: the exit code on success.
pub type CliResult = Result<ExitCode, CliError>;
