//! End-to-end tests of the `tracelogic` binary on the real sample traces: `summary`, `matrix`
//! and `query` output contracts, exit codes, and error messages for broken input.

mod common;
use common::{code, json, matrix_rows, run, sample, stderr};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tracelogic_model::{CollectiveOp, Trace, NO_CALLPATH, NO_ROOT};

/// MPI function → calls, counted from the `dumpi2ascii` reference dumps of the real tool.
fn calls_in_dumpi2ascii(dir: &Path) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for entry in std::fs::read_dir(dir.join("expected")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            if let Some((func, _)) = line.split_once(" entering at walltime") {
                *counts.entry(func.to_string()).or_insert(0) += 1;
            }
        }
    }
    counts
}

#[test]
fn summary_json_of_dumpi_sample_agrees_with_dumpi2ascii() {
    let dir = sample("sstmacro-dumpi-testtrace");
    let o = run(&[&"summary", &dir, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["format"], "dumpi");
    assert_eq!(v["ranks"], 4);
    let reference = calls_in_dumpi2ascii(&dir);
    let by_kind: BTreeMap<String, u64> = serde_json::from_value(v["calls_by_kind"].clone()).unwrap();
    assert_eq!(by_kind, reference);
    assert_eq!(v["calls"].as_u64().unwrap(), reference.values().sum::<u64>());
    // Each rank sends one message round a ring and receives one: everything matches.
    assert_eq!(v["unmatched_sends"], 0);
    assert_eq!(v["unmatched_recvs"], 0);
    assert_eq!(v["matched_messages"].as_u64(), reference.get("MPI_Isend").copied());
}

#[test]
fn summary_json_of_otf2_sample_agrees_with_the_otf2_reader_dump() {
    let dir = sample("pyotf2-generated-4rank");
    let o = run(&[&"summary", &dir, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["format"], "otf2");
    assert_eq!(v["ranks"], 4);
    let dump = std::fs::read_to_string(dir.join("expected/otf2-3.2-reader-dump.txt")).unwrap();
    let mut reference = BTreeMap::new();
    for line in dump.lines().filter(|l| l.contains(" Enter region=")) {
        let name = line.rsplit_once('(').unwrap().1.trim_end_matches(')');
        if name.starts_with("MPI_") {
            *reference.entry(name.to_string()).or_insert(0u64) += 1;
        }
    }
    let by_kind: BTreeMap<String, u64> = serde_json::from_value(v["calls_by_kind"].clone()).unwrap();
    assert_eq!(by_kind, reference);
    for field in ["calls", "unmatched_sends", "unmatched_recvs"] {
        assert!(v[field].is_u64(), "`{field}` missing or not an integer");
    }
}

/// NPB LU runs on a 4×2 process grid with rank = row + 4·column and exchanges with its grid
/// neighbours only; the filtered binary matrix must be exactly that grid's adjacency.
#[test]
fn matrix_of_npb_lu_is_its_4x2_process_grid() {
    let o = run(&[&"matrix", &sample("npb-lu.S.8"), &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["ranks"], 8);
    assert_eq!(v["threshold"].as_f64(), Some(5.0));
    let (rows, cols) = (4u64, 2u64);
    let mut grid = vec![vec![0u64; 8]; 8];
    for r in 0..8u64 {
        let (row, col) = (r % rows, r / rows);
        let mut link = |row2: u64, col2: u64| grid[r as usize][(row2 + rows * col2) as usize] = 1;
        if row > 0 {
            link(row - 1, col);
        }
        if row + 1 < rows {
            link(row + 1, col);
        }
        if col > 0 {
            link(row, col - 1);
        }
        if col + 1 < cols {
            link(row, col + 1);
        }
    }
    assert_eq!(matrix_rows(&v, "binary"), grid);
    let bytes = matrix_rows(&v, "bytes");
    let messages = matrix_rows(&v, "messages");
    for s in 0..8 {
        for r in 0..8 {
            assert_eq!(bytes[s][r] > 0, grid[s][r] == 1, "bytes {s}->{r}");
            assert_eq!(messages[s][r] > 0, grid[s][r] == 1, "messages {s}->{r}");
        }
    }
    assert_eq!(v["removed_entries"], 0);

    // The matrix, the summary and the query's fan-out all count the same sends.
    let summary = json(&run(&[&"summary", &sample("npb-lu.S.8"), &"--json"]));
    assert_eq!(v["total_messages"], summary["p2p_messages"]);
    assert_eq!(v["total_bytes"], summary["p2p_bytes"]);
    let q = json(&run(&[&"query", &sample("npb-lu.S.8"), &"--kind", &"p2p", &"--json"]));
    let fan_out: u64 = q["fan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["p2p_bytes_out"].as_u64().unwrap())
        .sum();
    assert_eq!(Some(fan_out), v["total_bytes"].as_u64());
    for (s, f) in q["fan"].as_array().unwrap().iter().enumerate() {
        assert_eq!(f["rank"], s as u64);
        assert_eq!(f["p2p_bytes_out"].as_u64().unwrap(), bytes[s].iter().sum::<u64>());
        assert_eq!(f["peers_out"].as_u64().unwrap(), grid[s].iter().sum::<u64>());
    }
}

/// Logicalization, Table 3: the binary matrix of 8-process NAS MG links every rank to the three
/// ranks whose number differs from it in exactly one bit (a cube). Our recorded class S run
/// must give the same binary matrix.
#[test]
fn matrix_of_npb_mg_8_is_the_papers_table_3_cube() {
    let o = run(&[&"matrix", &sample("npb-mg.S.8"), &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    let cube: Vec<Vec<u64>> = (0..8u32)
        .map(|i| (0..8u32).map(|j| u64::from((i ^ j).count_ones() == 1)).collect())
        .collect();
    assert_eq!(matrix_rows(&v, "binary"), cube);
}

#[test]
fn matrix_csv_has_a_header_and_one_line_per_sender() {
    let o = run(&[&"matrix", &sample("npb-lu.S.8"), &"--csv", &"--metric", &"messages"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9);
    assert_eq!(lines[0], "sender,0,1,2,3,4,5,6,7");
    let binary = run(&[&"matrix", &sample("npb-lu.S.8"), &"--csv", &"--binary"]);
    let text = String::from_utf8(binary.stdout).unwrap();
    assert!(text
        .lines()
        .skip(1)
        .all(|l| l.split(',').skip(1).all(|c| c == "0" || c == "1")));
}

#[test]
fn query_selects_by_rank_kind_and_time() {
    let lu = sample("npb-lu.S.8");
    let o = run(&[
        &"query", &lu, &"--ranks", &"0", &"--kind", &"send", &"--from", &"100ms", &"--to", &"200ms", &"--limit", &"5",
        &"--json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    let calls = v["calls"].as_array().unwrap();
    assert!(v["calls_selected"].as_u64().unwrap() >= calls.len() as u64);
    assert!(calls.len() <= 5 && !calls.is_empty());
    for c in calls {
        assert_eq!(c["rank"], 0);
        assert_eq!(c["function"], "MPI_Send");
        let t = c["enter_ns"].as_u64().unwrap();
        assert!((100_000_000..200_000_000).contains(&t), "{t}");
    }
    for m in v["messages"].as_array().unwrap() {
        assert_eq!(m["sender"], 0);
    }
    let everything = json(&run(&[&"query", &lu, &"--json", &"--limit", &"0"]));
    let summary = json(&run(&[&"summary", &lu, &"--json"]));
    assert_eq!(everything["calls_selected"], summary["calls"]);
    assert_eq!(everything["messages_selected"], summary["matched_messages"]);
    assert!(everything["calls"].as_array().unwrap().is_empty());
}

#[test]
fn truncated_file_gives_exit_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = sample("npb-lu.S.8");
    let mut victim = None;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        if name.ends_with("-0003.bin") {
            bytes.truncate(bytes.len() / 2);
            victim = Some(name.clone());
        }
        std::fs::write(tmp.path().join(&name), bytes).unwrap();
    }
    let victim = victim.expect("rank 3 file");
    for sub in ["summary", "matrix", "query"] {
        let o = run(&[&sub, &tmp.path()]);
        assert_eq!(code(&o), 2, "{sub}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(&victim), "{sub}: stderr does not name {victim}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn bad_paths_and_flags_give_exit_2() {
    let o = run(&[&"summary", &"/no/such/trace"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("/no/such/trace"), "{}", stderr(&o));

    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("notes.txt");
    std::fs::write(&junk, "hello, not a trace\n").unwrap();
    let o = run(&[&"summary", &junk]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));

    let lu = sample("npb-lu.S.8");
    let o = run(&[&"query", &lu, &"--ranks", &"12"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("rank 12"), "{}", stderr(&o));
    for bad in [
        vec!["matrix", "--threshold", "150"],
        vec!["query", "--from", "15"],
        vec!["query", "--kind", "sends"],
        vec!["matrix", "--json", "--csv"],
        vec!["summary", "--no-such-flag"],
    ] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&bad[0], &lu];
        args.extend(bad[1..].iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>));
        let o = run(&args);
        assert_eq!(code(&o), 2, "{bad:?}: {}", stderr(&o));
    }
}

/// A trace with collectives only, written in the native text format.
fn collectives_only(dir: &Path) -> PathBuf {
    let mut t = Trace::new("text", "collectives", 3);
    for r in 0..3 {
        let c = t.push_call(r, "MPI_Allreduce", 100 + r as u64, 200, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        let c = t.push_call(r, "MPI_Barrier", 300, 400, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
    }
    let path = dir.join("collectives.txt");
    std::fs::write(&path, tracelogic_formats::text::write(&t)).unwrap();
    path
}

#[test]
fn matrix_without_point_to_point_traffic_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let path = collectives_only(tmp.path());
    let summary = run(&[&"summary", &path, &"--json"]);
    assert_eq!(code(&summary), 0, "{}", stderr(&summary));
    assert_eq!(json(&summary)["calls"], 6);
    let o = run(&[&"matrix", &path, &"--json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no point-to-point traffic"), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(matrix_rows(&v, "bytes"), vec![vec![0; 3]; 3]);
    // A selection that matches nothing is "nothing found" too.
    let o = run(&[&"query", &path, &"--kind", &"send"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}
