//! The figures of docs/phases.md's tables: `cargo test -p tracelogic-analysis --test
//! phases_figures -- --ignored --nocapture` prints, per run, the pattern occurrences, the
//! thesis' leaves, the phases and the sections with their times. Not a check (the checks are in
//! phases_apps, phases_nas, phases_samples, phases_suite).

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, Trace};
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};

fn show(name: &str, trace: &Trace) {
    let matching = match_messages(trace);
    let events = rank_events(trace, false);
    let a = analyse_events(trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(trace, &events, &a.communication, 0.0, Outside::Own);
    let (t0, t1) = trace.span();
    let s = |t: u64| (t - t0) as f64 / 1e9;
    println!(
        "{name}: {} patterns of {} kinds, {} occurrences, {} leaves, {} phases, {} sections (run {:.4} s)",
        a.communication.patterns.len(),
        tracelogic_analysis::phases::kinds::pattern_kinds(&a.communication).1,
        p.sequence_length,
        p.leaves,
        p.phases.len(),
        p.sections.len(),
        s(t1)
    );
    println!(
        "  phase boundaries (s): {}",
        p.phases[1..]
            .iter()
            .map(|ph| format!("{:.4}", s(ph.time.0)))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for sec in &p.sections {
        let (a, b) = sec.phases;
        println!(
            "  section {:.4}–{:.4} s, phases {a}..{b}: {}",
            s(sec.time.0),
            s(sec.time.1),
            p.phases[a..b]
                .iter()
                .map(|ph| ph.summary())
                .collect::<Vec<_>>()
                .join(" / ")
        );
    }
}

#[test]
#[ignore]
fn figures() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    for s in ["npb-bt.S.9", "npb-lu.S.8", "npb-mg.S.8"] {
        show(
            s,
            &read_trace(load_paths(&[root.join("samples").join(s)]).unwrap()).unwrap(),
        );
    }
    for ranks in [32, 64] {
        let (t, _) = generate_nas(&NasSpec::new(NasBenchmark::Mg, NasClass::S, ranks)).unwrap();
        show(&format!("nas-mg-{ranks}"), &t);
    }
    let only = std::env::var("RUN").ok();
    let mut apps: Vec<_> = std::fs::read_dir(root.join("apps"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    apps.sort();
    for app in apps.iter().filter(|a| only.as_deref().is_none_or(|o| o == a.as_str())) {
        show(
            app,
            &read_trace(load_paths(&[root.join("apps").join(app)]).unwrap()).unwrap(),
        );
    }
}

/// Bytes sent per occurrence of each run's pattern sending most bytes, by tenth of the run
/// (min..max): whether a volume class could tell LAMMPS's stages 2 and 3 apart.
#[test]
#[ignore]
fn volumes() {
    use tracelogic_analysis::patterns::EventRef;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps");
    for app in [
        "lammps-melt-phases-8",
        "lammps-melt-8",
        "lammps-melt-12",
        "lammps-melt-27",
    ] {
        let trace = read_trace(load_paths(&[root.join(app)]).unwrap()).unwrap();
        let matching = match_messages(&trace);
        let events = rank_events(&trace, false);
        let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
        let c = &a.communication;
        let (t0, t1) = trace.span();
        let mut by: std::collections::BTreeMap<usize, Vec<(u64, u64)>> = Default::default();
        for inst in c.instances.iter().filter(|i| i.pattern != u32::MAX) {
            let mut b = 0;
            for part in &inst.parts {
                let re = &events.ranks[part.rank as usize];
                let p2p = &trace.ranks[part.rank as usize].p2p;
                for ev in part.first_event..=part.last_event {
                    if let EventRef::P2p(k) = re.events[ev as usize] {
                        if p2p.dir[k as usize] == tracelogic_model::P2pDir::Send {
                            b += p2p.bytes[k as usize];
                        }
                    }
                }
            }
            by.entry(inst.pattern as usize).or_default().push((inst.start - t0, b));
        }
        if app == "lammps-melt-phases-8" {
            // Stages 2 (0.434-0.501 s) and 3 (0.534-0.687 s) of expected/stages.tsv.
            for (p, v) in &by {
                let inn = |a: f64, b: f64| -> Vec<u64> {
                    v.iter()
                        .filter(|o| o.0 as f64 / 1e9 >= a && (o.0 as f64 / 1e9) < b)
                        .map(|o| o.1)
                        .collect()
                };
                let (s2, s3) = (inn(0.4337, 0.5006), inn(0.5340, 0.6869));
                if s2.len() + s3.len() >= 3 {
                    let r = |x: &[u64]| {
                        format!(
                            "{}x {}..{}",
                            x.len(),
                            x.iter().min().unwrap_or(&0),
                            x.iter().max().unwrap_or(&0)
                        )
                    };
                    println!("  P{p}: stage 2 {} | stage 3 {}", r(&s2), r(&s3));
                }
            }
        }
        let (pat, occ) = by
            .iter()
            .max_by_key(|(_, v)| v.iter().map(|o| o.1).sum::<u64>())
            .unwrap();
        println!("{app}: pattern {pat}, {} occurrences", occ.len());
        let span = (t1 - t0) as f64;
        for d in 0..20 {
            let v: Vec<u64> = occ
                .iter()
                .filter(|o| ((o.0 as f64 / span) * 20.0) as usize == d)
                .map(|o| o.1)
                .collect();
            if !v.is_empty() {
                println!(
                    "  {:.3}-{:.3} s: {} occ, bytes {}..{}",
                    d as f64 * span / 20e9,
                    (d + 1) as f64 * span / 20e9,
                    v.len(),
                    v.iter().min().unwrap(),
                    v.iter().max().unwrap()
                );
            }
        }
    }
}

/// Per time bin of `RUN` (env, a folder of tests/data/apps or a path) between `FROM` and `TO`
/// seconds: events and the most frequent event symbols. A look at what a run communicates when.
#[test]
#[ignore]
fn timeline() {
    let Ok(run) = std::env::var("RUN") else { return };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps");
    let dir = if run.starts_with('/') {
        PathBuf::from(&run)
    } else {
        root.join(&run)
    };
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let events = rank_events(&trace, false);
    let (t0, t1) = trace.span();
    let env = |k: &str, d: f64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (from, to, bins) = (
        env("FROM", 0.0),
        env("TO", (t1 - t0) as f64 / 1e9),
        env("BINS", 50.0) as usize,
    );
    let mut counts = vec![std::collections::HashMap::<String, u64>::new(); bins];
    for (r, re) in events.ranks.iter().enumerate() {
        for (e, &call) in re.calls.iter().enumerate() {
            let t = (trace.ranks[r].calls.enter[call as usize] - t0) as f64 / 1e9;
            if t < from || t >= to {
                continue;
            }
            let b = (((t - from) / (to - from)) * bins as f64) as usize;
            let f = trace.functions.name(trace.ranks[r].calls.func[call as usize]);
            let name = format!("{f}:{}", events.names[re.symbols[e] as usize]);
            *counts[b.min(bins - 1)].entry(name).or_default() += 1;
        }
    }
    for (b, c) in counts.iter().enumerate() {
        let mut v: Vec<_> = c.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        let n: u64 = c.values().sum();
        let top: Vec<String> = v.iter().take(6).map(|(k, n)| format!("{k}×{n}")).collect();
        println!(
            "{:.4} {:>6} {:>3}  {}",
            from + (to - from) * b as f64 / bins as f64,
            n,
            c.len(),
            top.join(" ")
        );
    }
}

/// The pattern occurrences of `RUN` (env) starting before `TO` seconds: start, end, ranks,
/// events, pattern.
#[test]
#[ignore]
fn occurrences() {
    let Ok(run) = std::env::var("RUN") else { return };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps");
    let dir = if run.starts_with('/') {
        PathBuf::from(&run)
    } else {
        root.join(&run)
    };
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let (t0, _) = trace.span();
    let to: f64 = std::env::var("TO").ok().and_then(|v| v.parse().ok()).unwrap_or(1e9);
    let (_, idx) = tracelogic_analysis::phases::pattern_sequence(&a.communication, Outside::Own);
    for (pos, &i) in idx.iter().enumerate() {
        let inst = &a.communication.instances[i];
        let s = (inst.start - t0) as f64 / 1e9;
        if s > to {
            break;
        }
        let ev: u32 = inst.parts.iter().map(|p| p.last_event + 1 - p.first_event).sum();
        println!(
            "{pos:>5} {s:.6} {:.6} ranks {:>3} events {:>6} pattern {}",
            (inst.end - t0) as f64 / 1e9,
            inst.parts.len(),
            ev,
            inst.pattern
        );
    }
}

/// Every event of `RUN` (env) the phases are computed from, to `OUT` (env): position in the
/// occurrence sequence, occurrence start (ns since the first occurrence), call entry (ns),
/// signature id; for prototypes of the segmentation outside the code.
#[test]
#[ignore]
fn dump_signatures() {
    let (Ok(run), Ok(out)) = (std::env::var("RUN"), std::env::var("OUT")) else {
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps");
    let dir = if run.starts_with('/') {
        PathBuf::from(&run)
    } else {
        root.join(&run)
    };
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let (_, idx) = tracelogic_analysis::phases::pattern_sequence(&a.communication, Outside::Own);
    let (sigs, names) =
        tracelogic_analysis::phases::content::Bags::event_signatures(&trace, &events, &a.communication, &idx);
    let t0 = a.communication.instances[idx[0]].start;
    let mut s = String::new();
    for (pos, t, sig) in sigs {
        let st = a.communication.instances[idx[pos]].start;
        s.push_str(&format!("{pos}\t{}\t{}\t{sig}\n", st - t0, t.saturating_sub(t0)));
    }
    let end = idx.iter().map(|&i| a.communication.instances[i].end).max().unwrap() - t0;
    s.push_str(&format!("#end\t{end}\n"));
    for (i, (kind, func, offset)) in names.iter().enumerate() {
        let f = trace.functions.name(*func);
        s.push_str(&format!("#sig\t{i}\t{kind}\t{f}\t{offset}\n"));
    }
    std::fs::write(out, s).unwrap();
}
