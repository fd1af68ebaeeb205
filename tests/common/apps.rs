//! The application corpus (`tests/data/apps`): a run's folder, the decoder's counts and log lines.

use std::path::{Path, PathBuf};

/// The folder of corpus run `name`.
pub fn app_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name)
}

/// A count from a run's decoder counts file (`expected/dumpi2ascii-counts.txt`, lines `NAME VALUE`).
pub fn decoded_count(dir: &Path, name: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join("expected/dumpi2ascii-counts.txt")).unwrap();
    text.lines()
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} is not in the counts"))
}

/// The numbers after `prefix` on the first line of `log` that starts with it, up to the first
/// comma, split at `x` (the `3 x 2 x 2` of GROMACS's "Domain decomposition grid 3 x 2 x 2,
/// separate PME ranks 0").
pub fn logged_grid(log: &Path, prefix: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in {}", log.display()));
    line.split(',')
        .next()
        .unwrap()
        .split('x')
        .map(|d| d.trim().parse().unwrap())
        .collect()
}
