//! `tracelogic topology` (to be implemented).

use crate::common::{CliError, CliResult};

/// Arguments of `tracelogic topology`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `tracelogic topology`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::Input("`topology` is not implemented yet".into()))
}
