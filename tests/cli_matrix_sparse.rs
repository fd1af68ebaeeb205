//! `tracelogic matrix` output shapes around the dense limit (8,192 ranks): the sparse `entries`
//! list always, the dense `bytes` / `messages` / `binary` rows only up to the limit, and the
//! sparse CSV above it or with `--sparse`, whose `ranks` column brings the rank count back to
//! `topology --matrix`. The traces are written by `tracelogic generate`.

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

/// The sparse CSV line of an `entries` row in a run of `ranks` ranks.
fn csv_line(entry: &[u64; 5], ranks: u64) -> String {
    format!("{},{ranks}", entry.map(|x| x.to_string()).join(","))
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
    assert_eq!(lines.next(), Some("from,to,bytes,messages,kept,ranks"));
    let body: Vec<&str> = lines.collect();
    assert_eq!(body.len(), 4 * 9216);
    let expected: Vec<String> = list.iter().map(|e| csv_line(e, 9216)).collect();
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
    assert_eq!(v["ranks"], 8);
    let expected: Vec<String> = std::iter::once("from,to,bytes,messages,kept,ranks".to_string())
        .chain(entries(&v).iter().map(|e| csv_line(e, 8)))
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

/// A 4 × 3 torus run on 14 ranks: ranks 12 and 13 only start and stop. The sparse CSV carries
/// the 14 through its `ranks` column, so `topology --matrix` answers as on the trace itself (14
/// ranks, 12 and 13 isolated, the torus as the one component) instead of seeing a 12-rank run.
#[test]
fn idle_trailing_ranks_round_trip_through_the_sparse_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let torus = tmp.path().join("torus.txt");
    generate("torus:4x3", &torus);
    let text = std::fs::read_to_string(&torus).unwrap();
    assert!(text.contains("\nranks 12\n"), "the generated header names 12 ranks");
    let wider = tmp.path().join("torus14.txt");
    std::fs::write(&wider, text.replace("\nranks 12\n", "\nranks 14\n")).unwrap();

    let o = run(&[&"matrix", &wider, &"--csv", &"--sparse"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let csv = String::from_utf8(o.stdout).unwrap();
    let v = json(&run(&[&"matrix", &wider, &"--json"]));
    assert_eq!(v["ranks"], 14);
    let list = entries(&v);
    assert!(
        list.iter().all(|e| e[0] < 12 && e[1] < 12),
        "ranks 12 and 13 send nothing"
    );
    let expected: Vec<String> = std::iter::once("from,to,bytes,messages,kept,ranks".to_string())
        .chain(list.iter().map(|e| csv_line(e, 14)))
        .collect();
    assert_eq!(csv.lines().collect::<Vec<_>>(), expected);

    let saved = tmp.path().join("matrix.csv");
    std::fs::write(&saved, &csv).unwrap();
    let from_csv = run(&[&"topology", &"--matrix", &saved, &"--json"]);
    let from_trace = run(&[&"topology", &wider, &"--json"]);
    assert_eq!(code(&from_csv), code(&from_trace), "{}", stderr(&from_csv));
    let (a, b) = (json(&from_csv), json(&from_trace));
    assert_eq!(a["ranks"], 14);
    assert_eq!(a["isolated_ranks"], serde_json::json!([12, 13]));
    for field in ["ranks", "isolated_ranks", "edges", "match"] {
        assert_eq!(a[field], b[field], "{field}");
    }
    let labels = |t: &Value| -> Vec<Value> {
        t["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["identification"]["match"]["label"].clone())
            .collect()
    };
    assert_eq!(labels(&a), vec![Value::from("4x3 torus")]);
    assert_eq!(labels(&a), labels(&b));

    // The same list without the column (as written before it existed) still reads, as the
    // 12 ranks up to the last one with traffic.
    let old: String = csv
        .lines()
        .map(|l| format!("{}\n", &l[..l.rfind(',').unwrap()]))
        .collect();
    assert!(old.starts_with("from,to,bytes,messages,kept\n"));
    let saved_old = tmp.path().join("old.csv");
    std::fs::write(&saved_old, old).unwrap();
    let o = run(&[&"topology", &"--matrix", &saved_old, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let t = json(&o);
    assert_eq!(t["ranks"], 12);
    assert_eq!(t["match"]["label"], "4x3 torus", "{}", t["match"]);
}

/// Rank counts that are too large, negative, or disagree with the lines are refused with exit
/// 2 and a message naming the file and the line.
#[test]
fn hostile_rank_counts_in_the_sparse_csv_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "huge.csv",
            "0,1,64,1,1,4194305\n",
            "line 2",
            "rank count 4194305 is beyond",
        ),
        (
            "negative.csv",
            "0,1,64,1,1,-3\n",
            "line 2",
            "rank count `-3` is not a non-negative integer",
        ),
        (
            "changing.csv",
            "0,1,64,1,1,4\n1,0,64,1,1,3\n",
            "line 3",
            "rank count 3 differs from the 4 of line 2",
        ),
        (
            "short.csv",
            "0,1,64,1,1,4\n1,5,64,1,1,4\n",
            "line 3",
            "rank 5 is outside the 4 ranks",
        ),
    ];
    for (name, body, line, what) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, format!("from,to,bytes,messages,kept,ranks\n{body}")).unwrap();
        let o = run(&[&"topology", &"--matrix", &path]);
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{name}: {e}");
        assert!(
            e.contains(&format!("{}: {line}", path.display())) && e.contains(what),
            "{name}: {e}"
        );
    }
}

/// A reader that stops early (`tracelogic matrix ... | head`) ends the streamed output quietly:
/// exit 0, nothing on stderr. The outputs are larger than a pipe's buffer (a 1,024-rank grid).
#[test]
fn a_closed_pipe_ends_the_streamed_output_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("torus.txt");
    generate("torus:32x32", &path);
    for mode in [&["--json"][..], &["--csv"], &["--csv", "--binary"]] {
        let mut child = Command::new(common::tracelogic())
            .arg("matrix")
            .arg(&path)
            .args(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 64];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{mode:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{mode:?}");
    }
}
