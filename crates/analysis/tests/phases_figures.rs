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
                            b += p2p.bytes.at(k as usize);
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
            let t = (trace.ranks[r].calls.enter(call as usize) - t0) as f64 / 1e9;
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

/// Every event of `RUN` (env) to `OUT` (env) for prototypes of the stage rule: position in the
/// occurrence sequence, call entry (ns since the trace's first event), kind (0 send, 1 receive,
/// 2 collective), bytes; then `#phase` lines (start, end in ns of each phase) and `#barrier`
/// lines (rank 0's `MPI_Barrier` exits), `#sections` (their number), `#span`.
#[test]
#[ignore]
fn dump_events() {
    use tracelogic_analysis::patterns::EventRef;
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
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    let (_, idx) = tracelogic_analysis::phases::pattern_sequence(&a.communication, Outside::Own);
    let (t0, t1) = trace.span();
    let mut s = String::new();
    for (pos, &i) in idx.iter().enumerate() {
        for part in &a.communication.instances[i].parts {
            let re = &events.ranks[part.rank as usize];
            let rt = &trace.ranks[part.rank as usize];
            for e in part.first_event..=part.last_event {
                let call = re.calls[e as usize] as usize;
                let t = rt.calls.enter(call) - t0;
                let (kind, bytes) = match re.events[e as usize] {
                    EventRef::P2p(k) => (
                        (rt.p2p.dir[k as usize] != tracelogic_model::P2pDir::Send) as u8,
                        rt.p2p.bytes.at(k as usize),
                    ),
                    EventRef::Collective(k) => (2, rt.collectives.bytes_sent[k as usize]),
                };
                s.push_str(&format!("{pos}\t{t}\t{kind}\t{bytes}\t{}\n", part.rank));
            }
        }
    }
    for ph in &p.phases {
        s.push_str(&format!(
            "#phase\t{}\t{}\t{}\t{}\n",
            ph.time.0 - t0,
            ph.time.1 - t0,
            ph.start,
            ph.end
        ));
    }
    if let Some(b) = trace.functions.get("MPI_Barrier") {
        let c = &trace.ranks[0].calls;
        for k in (0..c.len()).filter(|&k| c.func[k] == b) {
            s.push_str(&format!("#barrier\t{}\n", c.exit(k) - t0));
        }
    }
    s.push_str(&format!("#sections\t{}\n", p.sections.len()));
    s.push_str(&format!("#span\t{}\n", t1 - t0));
    std::fs::write(out, s).unwrap();
}

/// Equal-event windows of the events of occurrences `idx` entered in `[from, to)`: per window
/// (duration ns, events, collectives, point-to-point events, point-to-point bytes) and its
/// start (ns).
#[allow(clippy::type_complexity)]
fn stage_windows(
    trace: &Trace,
    events: &tracelogic_analysis::patterns::Events,
    comm: &tracelogic_analysis::patterns::CommunicationAnalysis,
    idx: &[usize],
    (from, to): (u64, u64),
    bins: usize,
) -> (Vec<[f64; 5]>, Vec<u64>) {
    use tracelogic_analysis::patterns::EventRef;
    let mut ev: Vec<(u64, bool, u64)> = Vec::new();
    for &i in idx {
        for part in &comm.instances[i].parts {
            let re = &events.ranks[part.rank as usize];
            let rt = &trace.ranks[part.rank as usize];
            for e in part.first_event..=part.last_event {
                let t = rt.calls.enter(re.calls[e as usize] as usize);
                if t < from || t >= to {
                    continue;
                }
                ev.push(match re.events[e as usize] {
                    EventRef::P2p(k) => (t, false, rt.p2p.bytes.at(k as usize)),
                    EventRef::Collective(_) => (t, true, 0),
                });
            }
        }
    }
    ev.sort_unstable();
    let n = ev.len().max(1);
    let mut w = vec![[0.0; 5]; bins];
    let mut at = vec![to; bins + 1];
    for (j, &(t, coll, bytes)) in ev.iter().enumerate() {
        let b = j * bins / n;
        if w[b][1] == 0.0 {
            at[b] = t;
        }
        w[b][1] += 1.0;
        if coll {
            w[b][2] += 1.0;
        } else {
            w[b][3] += 1.0;
            w[b][4] += bytes as f64;
        }
    }
    for b in (0..bins).rev() {
        at[b] = at[b].min(at[b + 1]);
    }
    for b in 0..bins {
        w[b][0] = (at[b + 1] - at[b]) as f64;
    }
    (w, at)
}

/// Circular binary segmentation's statistic (Olshen et al. 2004) of residuals `u` with
/// standard deviation `s`: the largest `|Σ u[i..j]| / (s √(k (m − k) / m))`, `k = j − i`, and
/// where.
fn arc_statistic(u: &[f64], order: &[usize], s: f64) -> (f64, usize, usize) {
    let m = u.len();
    let mut cum = vec![0.0; m + 1];
    for (k, &o) in order.iter().enumerate() {
        cum[k + 1] = cum[k] + u[o];
    }
    let mut best = (0.0, 0, 0);
    for i in 0..m {
        for j in i + 1..=m {
            let k = (j - i) as f64;
            if j - i >= m {
                continue;
            }
            let z = (cum[j] - cum[i]).abs() / (s * (k * (m as f64 - k) / m as f64).sqrt());
            if z > best.0 {
                best = (z, i, j);
            }
        }
    }
    best
}

/// Block length for a block permutation of `u`: one more than the last lag before which the
/// autocorrelation stays inside `±2 √(log10 m / m)` for 5 lags (Politis & White 2004's rule
/// for the lag window), at least 1.
fn block_length(u: &[f64]) -> usize {
    let m = u.len();
    let mean = u.iter().sum::<f64>() / m as f64;
    let v: f64 = u.iter().map(|x| (x - mean) * (x - mean)).sum();
    if v == 0.0 {
        return 1;
    }
    let r: Vec<f64> = (1..m / 2)
        .map(|k| (0..m - k).map(|i| (u[i] - mean) * (u[i + k] - mean)).sum::<f64>() / v)
        .collect();
    let c = 2.0 * ((m.max(10) as f64).log10() / m as f64).sqrt();
    (0..r.len())
        .find(|&l| r[l..(l + 5).min(r.len())].iter().all(|x| x.abs() < c))
        .unwrap_or(r.len())
        + 1
}

/// The stage prototype of docs/phases.md ("Stages of one LAMMPS input"): on every run of
/// tests/data/apps and tests/data/samples (or `RUNS=DIR[:DIR…]`), the longest phase in 100
/// windows of equal numbers of events; for each per-window feature (time per event,
/// collectives per event, bytes per point-to-point event) the arc of circular binary
/// segmentation, its p-value with blocks of windows permuted (999 orders, block length from
/// the residuals' autocorrelation) and its effect (ratio of the feature inside and outside the
/// arc); recursively inside the pieces of every arc with p < 0.01 / 3 and effect ≥ 2.
#[test]
#[ignore]
fn stage_change_points() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let dirs: Vec<PathBuf> = match std::env::var("RUNS") {
        Ok(r) => r.split(':').map(PathBuf::from).collect(),
        Err(_) => {
            let mut v: Vec<PathBuf> = ["apps", "samples"]
                .iter()
                .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect();
            v.sort();
            v
        }
    };
    let names = ["time/event", "coll/event", "bytes/p2p"];
    for dir in dirs {
        let Ok(trace) = load_paths(std::slice::from_ref(&dir)).and_then(read_trace) else {
            continue;
        };
        let matching = match_messages(&trace);
        let events = rank_events(&trace, false);
        let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
        let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
        let (_, idx) = tracelogic_analysis::phases::pattern_sequence(&a.communication, Outside::Own);
        let Some(lp) = p.phases.iter().max_by_key(|ph| ph.time.1 - ph.time.0) else {
            continue;
        };
        let (t0, _) = trace.span();
        let s = |t: u64| (t - t0) as f64 / 1e9;
        let (w, at) = stage_windows(&trace, &events, &a.communication, &idx[lp.start..lp.end], lp.time, 100);
        println!(
            "{}: {} phases, loop {:.3}-{:.3} s",
            dir.file_name().unwrap().to_string_lossy(),
            p.phases.len(),
            s(lp.time.0),
            s(lp.time.1)
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut todo = vec![(0usize, w.len(), 1usize)];
        while let Some((x, y, depth)) = todo.pop() {
            let m = y - x;
            if m < 3 {
                continue;
            }
            let mut cut: Option<(f64, usize, usize)> = None;
            for (f, name) in names.iter().enumerate() {
                let (num, den): (Vec<f64>, Vec<f64>) = w[x..y]
                    .iter()
                    .map(|r| match f {
                        0 => (r[0], r[1]),
                        1 => (r[2], r[1]),
                        _ => (r[4], r[3]),
                    })
                    .unzip();
                let (sx, sy): (f64, f64) = (num.iter().sum(), den.iter().sum());
                if sx <= 0.0 || sy <= 0.0 {
                    continue;
                }
                let u: Vec<f64> = num.iter().zip(&den).map(|(a, b)| a - sx / sy * b).collect();
                let sd = (u.iter().map(|v| v * v).sum::<f64>() / m as f64).sqrt();
                if sd == 0.0 {
                    continue;
                }
                let order: Vec<usize> = (0..m).collect();
                let (z, i, j) = arc_statistic(&u, &order, sd);
                let ratio = |r: &mut dyn Iterator<Item = usize>| {
                    let (a, b) = r.fold((0.0, 0.0), |s, k| (s.0 + num[k], s.1 + den[k]));
                    a / b.max(1e-9)
                };
                let (rin, rout) = (ratio(&mut (i..j)), ratio(&mut (0..i).chain(j..m)));
                let effect = rin.max(rout) / rin.min(rout).max(1e-12);
                let res: Vec<f64> = (0..m)
                    .map(|k| num[k] - if (i..j).contains(&k) { rin } else { rout } * den[k])
                    .collect();
                let l = block_length(&res);
                let blocks: Vec<Vec<usize>> = (0..m).step_by(l).map(|b| (b..(b + l).min(m)).collect()).collect();
                let mut at_least = 0;
                for _ in 0..999 {
                    let mut bl: Vec<&Vec<usize>> = blocks.iter().collect();
                    bl.shuffle(&mut rng);
                    let o: Vec<usize> = bl.into_iter().flatten().copied().collect();
                    if arc_statistic(&u, &o, sd).0 >= z - 1e-9 {
                        at_least += 1;
                    }
                }
                let pv = (at_least + 1) as f64 / 1000.0;
                println!(
                    "{}{name}: arc {:.3}-{:.3} s, z {z:.2}, block {l}, p {pv:.3}, effect {effect:.2}",
                    "  ".repeat(depth),
                    s(at[x + i]),
                    s(at[x + j])
                );
                if pv < 0.01 / 3.0 && effect >= 2.0 && cut.is_none_or(|c| pv < c.0) {
                    cut = Some((pv, x + i, x + j));
                }
            }
            if let Some((_, i, j)) = cut {
                println!("{}cut at {:.3} and {:.3} s", "  ".repeat(depth), s(at[i]), s(at[j]));
                let mut pts = vec![x];
                pts.extend([i, j].into_iter().filter(|&c| c > x && c < y));
                pts.push(y);
                for q in pts.windows(2) {
                    todo.push((q[0], q[1], depth + 1));
                }
            }
        }
    }
}
