//! The printers of the subcommands, apart from the work: each turns the report an engine
//! function returned into the text, JSON or CSV the subcommand prints (docs/cli.md).

pub mod compare;
pub mod convert;
pub mod critical_path;
pub mod logical;
pub mod matrix;
pub mod overview;
pub mod pattern_match;
pub mod patterns;
pub mod phases;
pub mod profile;
pub mod query;
pub mod replay;
pub mod summary;
pub mod timeline;
pub mod topology;
pub mod waits;
