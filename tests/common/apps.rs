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

/// The undirected edges (smaller rank first) of a `topology --json` answer.
pub fn topology_edges(v: &serde_json::Value) -> std::collections::BTreeSet<(usize, usize)> {
    v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let (a, b) = (e[0].as_u64().unwrap() as usize, e[1].as_u64().unwrap() as usize);
            (a.min(b), a.max(b))
        })
        .collect()
}

/// The halo pairs of GROMACS's domain grid `dd` (x, y, z cells): it numbers the cells x-major,
/// rank = (x·ny + y)·nz + z, and each cell exchanges with its neighbours ±1 in every dimension,
/// periodic (a dimension of 2 gives one neighbour, of 1 none).
pub fn domain_grid_halo(dd: &[usize]) -> std::collections::BTreeSet<(usize, usize)> {
    let rank = |x: usize, y: usize, z: usize| (x * dd[1] + y) * dd[2] + z;
    let mut pairs = std::collections::BTreeSet::new();
    for x in 0..dd[0] {
        for y in 0..dd[1] {
            for z in 0..dd[2] {
                let r = rank(x, y, z);
                for n in [
                    rank((x + 1) % dd[0], y, z),
                    rank(x, (y + 1) % dd[1], z),
                    rank(x, y, (z + 1) % dd[2]),
                ] {
                    if n != r {
                        pairs.insert((r.min(n), r.max(n)));
                    }
                }
            }
        }
    }
    pairs
}

/// Each world rank's 0-based (I, J, K) in a LAMMPS run's processor grid, from its `procs.map`
/// (written by LAMMPS itself, `processors ... file procs.map`: world, universe and original
/// rank, then the 1-based I J K; the trace's ranks are the original ones). `n` ranks.
pub fn lammps_procs_map(dir: &Path, n: usize) -> Vec<Vec<usize>> {
    let map = std::fs::read_to_string(dir.join("procs.map")).unwrap();
    let mut coords = vec![None; n];
    for l in map.lines() {
        let parts: Vec<&str> = l.split(':').collect();
        if parts.len() < 2 {
            continue;
        }
        let ids: Vec<usize> = parts[0].split_whitespace().filter_map(|w| w.parse().ok()).collect();
        let ijk: Vec<usize> = parts[1].split_whitespace().filter_map(|w| w.parse().ok()).collect();
        if ids.len() == 3 && ijk.len() == 3 {
            coords[ids[2]] = Some(ijk.iter().map(|&x| x - 1).collect::<Vec<_>>());
        }
    }
    coords
        .into_iter()
        .enumerate()
        .map(|(r, c)| c.unwrap_or_else(|| panic!("procs.map has no line for rank {r}")))
        .collect()
}
