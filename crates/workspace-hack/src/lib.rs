//! No code: this crate only names dependency features (see its Cargo.toml), so that building
//! one package of the workspace reuses what `cargo test --workspace` built.
