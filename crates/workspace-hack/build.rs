//! Empty: Cargo resolves a package's build-dependencies (here, the host-side crates whose
//! features this crate unifies) only when it has a build script.
fn main() {}
