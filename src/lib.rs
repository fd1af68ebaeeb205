//! The `tracelogic` command-line tool as a library: one module per subcommand (arguments →
//! engine → printer), the printers (`print`) and what they share (`common`). The binary
//! (`src/main.rs`) parses the command line and calls them; `tracelogic-mpi` calls the same
//! modules, so its flags, messages and output are the CLI's.

pub mod common;
pub mod compare;
pub mod convert;
pub mod critical_path;
pub mod generate;
pub mod logical;
pub mod matrix;
pub mod overview;
pub mod pattern_match;
pub mod patterns;
pub mod phases;
pub mod print;
pub mod profile;
pub mod query;
pub mod replay;
pub mod skeleton;
pub mod summary;
pub mod timeline;
pub mod topology;
pub mod waits;
