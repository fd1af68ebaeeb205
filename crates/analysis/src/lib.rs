//! Every analysis tracelogic offers, as pure functions over the [`tracelogic_model::Trace`].
//!
//! Results are plain serialisable structs: the CLI prints them, the web app draws them,
//! tests compare them. Nothing here knows which format a trace came from, and nothing here
//! does I/O.

pub mod compress;
pub mod critical_path;
pub mod imbalance;
pub mod logical;
pub mod matrix;
pub mod overview;
pub mod partial;
pub mod partial_waits;
pub mod patterns;
pub mod phases;
pub mod profile;
pub mod progress;
pub mod replay;
pub mod similarity;

pub mod skeleton;
pub mod stats;
pub mod summary;
pub mod timeline;
pub mod topology;
pub mod waits;
