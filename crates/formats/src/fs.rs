//! Loading input sets from disk (native builds only; the web app gets its files from the page).
//! The one implementation is [`crate::input::read_paths`], which streams archives from their
//! files; `load_paths` is its name for the callers that load samples and benchmark inputs.

#[cfg(not(target_arch = "wasm32"))]
pub use crate::input::read_paths as load_paths;
