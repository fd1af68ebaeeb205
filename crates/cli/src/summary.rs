//! `tracelogic summary` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic summary`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic summary`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`summary` is not implemented yet".into()))
}
