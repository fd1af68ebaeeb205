//! Shared helpers of tracelogic's fuzz targets: the *pack* format that carries a whole file set
//! in one fuzz input lives in [`tracelogic_formats::pack`] (the regression tests read the
//! crashers with it too); the `pack` binary builds seed packs from sample folders.

pub use tracelogic_formats::pack::{pack, unpack, MAX_FILES};
