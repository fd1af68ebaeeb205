//! The direct path for the hot event records against the general decoder: the same archives
//! read both ways must give the same trace, and the same error for every truncation.

use super::{read_with, write_with_chunk_size};
use crate::{InputFile, NoProgress};
use std::path::Path;
use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

fn both_ways(files: &[InputFile]) -> Result<(String, String), (String, String)> {
    let fast = read_with(files, &mut NoProgress, false);
    let general = read_with(files, &mut NoProgress, true);
    match (fast, general) {
        (Ok(a), Ok(b)) => Ok((
            serde_json::to_string(&a).expect("serialises"),
            serde_json::to_string(&b).expect("serialises"),
        )),
        (a, b) => Err((
            a.map(|t| t.num_calls().to_string()).unwrap_or_else(|e| e.to_string()),
            b.map(|t| t.num_calls().to_string()).unwrap_or_else(|e| e.to_string()),
        )),
    }
}

fn generated(topology: &str, style: Style) -> tracelogic_model::Trace {
    let spec = Spec {
        topology: TopologySpec::parse(topology).expect("topology"),
        iterations: 5,
        style,
        collectives: [
            (tracelogic_model::CollectiveOp::Allreduce, 2, 64),
            (tracelogic_model::CollectiveOp::Barrier, 3, 0),
            (tracelogic_model::CollectiveOp::Bcast, 2, 256),
        ]
        .into_iter()
        .map(|(op, every, bytes)| CollectiveSpec { op, every, bytes })
        .collect(),
        ..Spec::default()
    };
    generate(&spec).expect("generates")
}

#[test]
fn hot_records_match_the_general_decoder_on_generated_traces() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("grid:3x4", Style::Sendrecv),
        ("grid:4x3", Style::Blocking),
        ("grid:4x4", Style::Wavefront),
    ] {
        let trace = generated(topology, style);
        // Small chunks too, so that records cross chunk ends on the hot path.
        for chunk in [1 << 20, 4096] {
            let files = write_with_chunk_size(&trace, "traces", chunk);
            let (fast, general) = both_ways(&files).expect("both read");
            assert_eq!(
                fast, general,
                "{topology} {style:?} chunk {chunk}: hot and general reads differ"
            );
        }
        let read = super::read(&super::write(&trace, "traces"), &mut NoProgress).expect("reads");
        assert_eq!(read.num_calls(), trace.num_calls(), "{topology} {style:?}");
        assert!(read.ranks.iter().any(|r| !r.p2p.is_empty()), "{topology} {style:?}");
    }
}

/// The files of a sample archive, named relative to its folder (`traces.otf2`, `traces/0.evt`).
fn load_dir(root: &Path, dir: &Path, out: &mut Vec<InputFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let path = e.path();
        if path.is_dir() {
            if e.file_name() != "expected" {
                load_dir(root, &path, out);
            }
        } else if let Ok(bytes) = std::fs::read(&path) {
            let name = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .into_owned();
            out.push(InputFile::new(name, bytes));
        }
    }
}

#[test]
fn hot_records_match_the_general_decoder_on_the_real_samples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/samples");
    let mut seen = 0;
    for dir in [
        "pipit-ping-pong-otf2",
        "pipit-ping-pong-otf2-papi",
        "pyotf2-generated-4rank",
        "pyotf2-generated-multichunk",
    ] {
        let mut files = Vec::new();
        load_dir(&root.join(dir), &root.join(dir), &mut files);
        if files.is_empty() {
            continue;
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let (fast, general) = both_ways(&files).unwrap_or_else(|e| panic!("{dir}: {e:?}"));
        assert_eq!(fast, general, "{dir}: hot and general reads differ");
        seen += 1;
    }
    assert!(seen > 0, "no OTF2 sample found under {}", root.display());
}

#[test]
fn hot_records_give_the_general_decoder_s_error_at_every_truncation() {
    let trace = generated("ring:3", Style::Isend);
    let files = write_with_chunk_size(&trace, "traces", 1 << 20);
    let evt = files
        .iter()
        .position(|f| f.name.ends_with("0.evt"))
        .expect("an event file");
    let whole = files[evt].bytes.clone();
    assert!(whole.len() > 200, "event file of {} bytes", whole.len());
    for cut in 0..whole.len() {
        let mut cut_files = files.clone();
        cut_files[evt] = InputFile::new(files[evt].name.clone(), whole[..cut].to_vec());
        match both_ways(&cut_files) {
            Ok((a, b)) => assert_eq!(a, b, "cut at {cut}"),
            Err((a, b)) => assert_eq!(a, b, "cut at {cut}"),
        }
    }
    // Corrupted bytes (every byte of the file flipped in turn) fail or succeed alike too.
    for at in 0..whole.len() {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x5a;
        let mut bad = files.clone();
        bad[evt] = InputFile::new(files[evt].name.clone(), bytes);
        match both_ways(&bad) {
            Ok((a, b)) => assert_eq!(a, b, "byte {at} flipped"),
            Err((a, b)) => assert_eq!(a, b, "byte {at} flipped"),
        }
    }
}
