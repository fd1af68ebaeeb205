//! `--on-comm`: the calls made on some communicators, on the GROMACS run with two decompositions of
//! the same 12 ranks (`tests/data/apps/gromacs-water-12`, see tests/apps_gromacs.rs). The whole
//! run's graph is the union of the domain grid's halo and PME's pencils; selecting the calls on one
//! communicator gives each decomposition's own topology. Checked against the application's own
//! account: md.log's "Domain decomposition grid 3 x 2 x 2" (GROMACS numbers the cells x-major,
//! rank = (x·ny + y)·nz + z) and "PME domain decomposition: 3 x 4 x 1", and the tracer's decoder
//! (`expected/dumpi2ascii-counts.txt`) for the per-communicator sums.

mod common;
use common::{code, json, run, stderr};

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps/gromacs-water-12")
}

fn trace() -> PathBuf {
    dir().join("dumpi.tar.zst")
}

fn logged_grid(prefix: &str) -> Vec<usize> {
    common::apps::logged_grid(&dir().join("md.log"), prefix)
}

/// A count from the decoder's counts file.
fn decoded(name: &str) -> u64 {
    common::apps::decoded_count(&dir(), name)
}

fn summary() -> Value {
    let o = run(&[&"summary", &trace(), &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    json(&o)
}

/// (id, size, p2p bytes) of every communicator `summary` lists.
fn comms(s: &Value) -> Vec<(usize, u64, u64)> {
    s["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c["size"].as_u64().unwrap(), c["p2p_bytes"].as_u64().unwrap()))
        .collect()
}

/// `topology --json` of the calls on `on` (extra flags appended).
fn topology(on: &[String], extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["topology".into(), trace().display().to_string(), "--json".into()];
    for c in on {
        args.push("--on-comm".into());
        args.push(c.clone());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&dyn AsRef<std::ffi::OsStr>> = args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>).collect();
    let o = run(&refs);
    assert_eq!(code(&o), 0, "{on:?}: {}", stderr(&o));
    json(&o)
}

fn edges(v: &Value) -> BTreeSet<(usize, usize)> {
    common::apps::topology_edges(v)
}

/// The summary's per-communicator sends add up to the decoder's counts, and each communicator's
/// sends stay among its members.
#[test]
fn summary_counts_each_communicators_point_to_point_traffic() {
    let s = summary();
    let list = s["communicators"].as_array().unwrap();
    let sends: u64 = list.iter().map(|c| c["p2p_sends"].as_u64().unwrap()).sum();
    let bytes: u64 = list.iter().map(|c| c["p2p_bytes"].as_u64().unwrap()).sum();
    assert_eq!(sends, decoded("p2p_sends"));
    assert_eq!(bytes, decoded("p2p_send_bytes"));
    // Each communicator selected alone: its sends are the summary's figure for it.
    for (id, _, b) in comms(&s).into_iter().filter(|c| c.2 > 0) {
        let o = run(&[&"query", &trace(), &"--on-comm", &id.to_string(), &"--json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let q = json(&o);
        assert_eq!(q["selection"]["on_comms"], serde_json::json!([id]));
        let out: u64 = q["fan"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["p2p_bytes_out"].as_u64().unwrap())
            .sum();
        assert_eq!(out, b, "communicator {id}");
    }
}

/// The communicator of all 12 ranks carrying the most point-to-point bytes holds the domain grid's
/// halo: the calls on it alone are md.log's 3x2x2 torus, and the proved mapping keeps each x slab
/// of the log's x-major numbering at one coordinate of the 3-long dimension.
#[test]
fn the_calls_on_the_busiest_whole_communicator_are_the_logged_domain_grid() {
    let dd = logged_grid("Domain decomposition grid");
    assert_eq!(dd.iter().product::<usize>(), 12);
    let s = summary();
    let (halo, _, _) = comms(&s).into_iter().filter(|c| c.1 == 12).max_by_key(|c| c.2).unwrap();
    let expected = common::apps::domain_grid_halo(&dd);
    let v = topology(&[halo.to_string()], &[]);
    assert_eq!(edges(&v), expected, "the halo is the log's domain grid");
    let listed: Vec<&Value> = std::iter::once(&v["match"])
        .chain(v["equivalents"].as_array().unwrap())
        .collect();
    let dims = |m: &Value| -> Vec<usize> {
        m["dims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect()
    };
    assert!(
        listed.iter().any(|m| m["family"] == "torus" && dims(m) == dd),
        "a {dd:?} torus among {listed:?}"
    );
    // The mapping is the match's: every halo edge joins coordinates one step apart (cyclically)
    // in one dimension, and the 3-long dimension's coordinate is the log's x.
    let shape = dims(&v["match"]);
    let coords: Vec<Vec<usize>> = {
        let mapping = v["mapping"].as_array().unwrap();
        assert_eq!(mapping.len(), 12);
        let mut c = vec![Vec::new(); 12];
        for m in mapping {
            c[m["rank"].as_u64().unwrap() as usize] = dims(&serde_json::json!({ "dims": m["coords"] }));
        }
        c
    };
    for &(a, b) in &expected {
        let apart: Vec<usize> = (0..shape.len()).filter(|&d| coords[a][d] != coords[b][d]).collect();
        assert_eq!(apart.len(), 1, "{a} {:?} - {b} {:?}", coords[a], coords[b]);
        let (d, n) = (apart[0], shape[apart[0]]);
        assert!(
            (coords[a][d] + 1) % n == coords[b][d] || (coords[b][d] + 1) % n == coords[a][d],
            "{a} {:?} - {b} {:?}",
            coords[a],
            coords[b]
        );
    }
    let xdim = shape
        .iter()
        .position(|&n| n == dd[0])
        .expect("a dimension as long as the log's x");
    let slab = dd[1] * dd[2];
    for r in 0..12 {
        assert_eq!(coords[r][xdim], coords[r / slab * slab][xdim], "rank {r} on its x slab");
    }
    let xs: BTreeSet<usize> = (0..dd[0]).map(|x| coords[x * slab][xdim]).collect();
    assert_eq!(xs.len(), dd[0], "the x slabs at distinct coordinates");
}

/// PME's pencils: the calls on the communicators of a PME slab (as many ranks as the log's PME
/// grid has along y) join exactly the ranks of each x slab, and those on the communicators across
/// slabs (as many as its x) join each rank with its place in the other slabs.
#[test]
fn the_calls_on_the_pme_communicators_are_the_logged_pencil_rows_and_columns() {
    let pme = logged_grid("PME domain decomposition:");
    let (nx, ny) = (pme[0], pme[1]);
    assert_eq!(nx * ny, 12);
    let s = summary();
    let of_size = |n: usize| -> Vec<String> {
        comms(&s)
            .into_iter()
            .filter(|c| c.1 == n as u64 && c.2 > 0)
            .map(|c| c.0.to_string())
            .collect()
    };
    for (size, same_group) in [
        (
            ny,
            Box::new(move |a: usize, b: usize| a / ny == b / ny) as Box<dyn Fn(usize, usize) -> bool>,
        ),
        (nx, Box::new(move |a: usize, b: usize| a % ny == b % ny)),
    ] {
        let on = of_size(size);
        assert_eq!(on.len(), 12 / size, "communicators of {size} ranks carrying messages");
        // Every pair of a group exchanges something; nothing crosses groups.
        let all = edges(&topology(&on, &["--threshold", "0"]));
        let expected: BTreeSet<(usize, usize)> = (0..12)
            .flat_map(|a| (a + 1..12).map(move |b| (a, b)))
            .filter(|&(a, b)| same_group(a, b))
            .collect();
        assert_eq!(all, expected, "size {size}");
        // The filtered graph falls into the same groups (named component by component).
        let v = topology(&on, &[]);
        let groups: BTreeSet<Vec<usize>> = v["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                c["ranks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_u64().unwrap() as usize)
                    .collect()
            })
            .collect();
        let want: BTreeSet<Vec<usize>> = (0..12)
            .map(|a| (0..12).filter(|&b| same_group(a, b)).collect())
            .collect();
        assert_eq!(groups, want, "size {size}");
    }
    // A name holding commas is one communicator; the three slabs named, then listed.
    let names: Vec<String> = of_size(ny)
        .iter()
        .map(|i| {
            s["communicators"][i.parse::<usize>().unwrap()]["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(names.iter().any(|n| n.contains(',')), "{names:?}");
    assert_eq!(
        edges(&topology(&names, &[])),
        edges(&topology(&[of_size(ny).join(",")], &[]))
    );
}

/// Unknown communicators are refused, named.
#[test]
fn an_unknown_communicator_is_a_clear_error_naming_it() {
    for bad in ["nosuch", "0,nosuch", "33"] {
        let o = run(&[&"topology", &trace(), &"--on-comm", &bad]);
        assert_eq!(code(&o), 2, "{bad}");
        let e = stderr(&o);
        let name = bad.rsplit(',').next().unwrap();
        assert!(e.contains(&format!("--on-comm: no communicator `{name}`")), "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}
