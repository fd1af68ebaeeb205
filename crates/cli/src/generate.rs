//! `tracelogic generate` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic generate`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic generate`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`generate` is not implemented yet".into()))
}
