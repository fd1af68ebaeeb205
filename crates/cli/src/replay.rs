//! `tracelogic replay` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic replay`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic replay`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`replay` is not implemented yet".into()))
}
