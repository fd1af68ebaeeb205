//! `tracelogic query` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic query`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic query`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`query` is not implemented yet".into()))
}
