//! `tracelogic matrix` output shapes around the dense limit (8,192 ranks): the sparse `entries`
//! list always, the dense `bytes` / `messages` / `binary` rows only up to the limit, and the
//! sparse CSV above it or with `--sparse`. The traces are written by `tracelogic generate`.

mod common;
use common::{code, json, matrix_rows as rows, run, sample, stderr};

use serde_json::Value;
use std::path::Path;

fn generate(topology: &str, out: &Path) {
    let o = run(&[
        &"generate",
        &"--topology",
        &topology,
        &"--iterations",
        &"1",
        &"--format",
        &"text",
        &"--out",
        &out,
    ]);
    assert_eq!(code(&o), 0, "generate {topology}: {}", stderr(&o));
}

/// `[from, to, bytes, messages, kept]` rows of the JSON's `entries`.
fn entries(v: &Value) -> Vec<[u64; 5]> {
    v["entries"]
        .as_array()
        .expect("`entries` is always present")
        .iter()
        .map(|e| {
            let e = e.as_array().unwrap();
            assert_eq!(e.len(), 5, "{e:?}");
            std::array::from_fn(|i| e[i].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn below_the_limit_the_json_has_dense_rows_and_the_same_entries() {
    let v = json(&run(&[&"matrix", &sample("npb-lu.S.8"), &"--json"]));
    let n = v["ranks"].as_u64().unwrap() as usize;
    let (bytes, messages, binary) = (rows(&v, "bytes"), rows(&v, "messages"), rows(&v, "binary"));
    let list = entries(&v);
    assert!(!list.is_empty());
    assert!(
        list.windows(2).all(|w| (w[0][0], w[0][1]) < (w[1][0], w[1][1])),
        "sorted"
    );
    let mut from_entries = vec![vec![[0u64; 3]; n]; n];
    for &[from, to, b, m, k] in &list {
        assert!(m > 0, "only pairs with traffic are listed");
        from_entries[from as usize][to as usize] = [b, m, k];
    }
    for r in 0..n {
        for c in 0..n {
            assert_eq!(
                from_entries[r][c],
                [bytes[r][c], messages[r][c], binary[r][c]],
                "{r} → {c}"
            );
        }
    }
    assert_eq!(v["nonzero_entries"].as_u64().unwrap(), list.len() as u64);
    let kept = list.iter().filter(|e| e[4] == 1).count() as u64;
    assert_eq!(v["kept_entries"].as_u64().unwrap(), kept);
    assert_eq!(
        v["total_bytes"].as_u64().unwrap(),
        list.iter().map(|e| e[2]).sum::<u64>()
    );
}

/// A 96 × 96 torus (9,216 ranks): above the limit the dense rows are left out, not refused.
#[test]
fn above_the_limit_the_json_and_csv_are_sparse() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("torus.txt");
    generate("torus:96x96", &path);
    let o = run(&[&"matrix", &path, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["ranks"], 9216);
    for dense in ["bytes", "messages", "binary"] {
        assert!(v.get(dense).is_none(), "`{dense}` is omitted above 8,192 ranks");
    }
    let list = entries(&v);
    assert_eq!(list.len(), 4 * 9216);
    let torus_neighbour = |a: u64, b: u64| {
        let (ax, ay, bx, by) = (a % 96, a / 96, b % 96, b / 96);
        let d = |p: u64, q: u64| (p + 96 - q) % 96;
        (ay == by && (d(ax, bx) == 1 || d(bx, ax) == 1)) || (ax == bx && (d(ay, by) == 1 || d(by, ay) == 1))
    };
    assert!(list
        .iter()
        .all(|&[a, b, bytes, m, k]| torus_neighbour(a, b) && bytes == 4096 && m == 1 && k == 1));
    assert_eq!(v["kept_entries"].as_u64().unwrap(), 4 * 9216);

    let csv = run(&[&"matrix", &path, &"--csv"]);
    assert_eq!(code(&csv), 0, "{}", stderr(&csv));
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("from,to,bytes,messages,kept"));
    let body: Vec<&str> = lines.collect();
    assert_eq!(body.len(), 4 * 9216);
    let expected: Vec<String> = list.iter().map(|e| e.map(|x| x.to_string()).join(",")).collect();
    assert_eq!(body, expected);

    // `topology --matrix` reads the sparse list back and identifies the torus.
    let saved = tmp.path().join("matrix.csv");
    std::fs::write(&saved, &text).unwrap();
    let o = run(&[&"topology", &"--matrix", &saved, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let t = json(&o);
    assert_eq!(t["ranks"], 9216);
    assert_eq!(t["match"]["label"], "96x96 torus", "{}", t["match"]);
}

#[test]
fn sparse_csv_on_request_below_the_limit() {
    let o = run(&[
        &"matrix",
        &sample("npb-mg.S.8"),
        &"--csv",
        &"--sparse",
        &"--metric",
        &"messages",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let v = json(&run(&[
        &"matrix",
        &sample("npb-mg.S.8"),
        &"--json",
        &"--metric",
        &"messages",
    ]));
    let expected: Vec<String> = std::iter::once("from,to,bytes,messages,kept".to_string())
        .chain(entries(&v).iter().map(|e| e.map(|x| x.to_string()).join(",")))
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    let o = run(&[&"matrix", &sample("npb-mg.S.8"), &"--sparse"]);
    assert_eq!(code(&o), 2, "--sparse needs --csv: {}", stderr(&o));
}

/// 29 bytes declaring 65,536 ranks: the dense matrix (64 GiB) was refused with exit 2; the
/// sparse one is built, holds nothing, and every command says there is no point-to-point traffic.
#[test]
fn many_ranks_without_traffic_are_answered_not_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let huge = tmp.path().join("huge.txt");
    std::fs::write(&huge, "#tracelogic-text 1\nranks 65536\n").unwrap();
    for sub in ["topology", "logical", "matrix"] {
        let o = run(&[&sub, &huge]);
        assert_eq!(code(&o), 1, "{sub}: {}", stderr(&o));
    }
    let o = run(&[&"matrix", &huge, &"--json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no point-to-point traffic"), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["ranks"].as_u64(), v["nonzero_entries"].as_u64()),
        (Some(65536), Some(0))
    );
    assert!(entries(&v).is_empty() && v.get("bytes").is_none());
}
