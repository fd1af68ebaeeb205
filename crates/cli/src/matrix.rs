//! `tracelogic matrix` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic matrix`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic matrix`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`matrix` is not implemented yet".into()))
}
