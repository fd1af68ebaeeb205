//! `topology FILE`: identifying an edge-list graph, stage by stage, the mapping checked independently.

use crate::clock::{ms, peak_rss_kb, thread_cpu_ms};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use tracelogic_analysis::topology::{identify_graph, TopologyOptions, TopologyReport};
use tracelogic_graph::edgelist;
use tracelogic_graph::families::{Family, TopologySpec};
use tracelogic_graph::Graph;

/// Topology figures of one graph; times are the minimum over the repetitions, in milliseconds.
#[derive(Serialize)]
pub(crate) struct TopologyResult {
    /// Nodes of the graph.
    ranks: u32,
    /// Edges of the graph.
    edges: usize,
    /// Label of the match, when one was proved.
    matched: Option<String>,
    /// Each elimination stage with its minimum time.
    stages: Vec<(String, f64)>,
    /// Time of the `spectrum` stage (eigenvalues or closed-walk counts).
    spectrum_ms: f64,
    /// Time of the `isomorphism` stage (the proof with a mapping).
    isomorphism_ms: f64,
    /// Wall time of the whole `identify_graph` call, minimum over the repetitions: every stage,
    /// the display spectrum, the rank places, the report's components and edge list.
    total_ms: f64,
    /// Sum of the elimination stages' own times (the rest of `total_ms` is outside them).
    stages_ms: f64,
    /// CPU time of the whole identification (this thread), minimum over the repetitions.
    total_cpu_ms: f64,
    /// Wall time of the whole `identify_graph` call, minimum over the repetitions.
    call_ms: f64,
    /// The identification's own total (`timings.total_ms`: stages, display spectrum, mapping).
    identification_ms: f64,
    /// Eigenvalues computed for display after the proof (`timings.display_spectrum_ms`).
    display_spectrum_ms: f64,
    /// Rank places of the match (`timings.mapping_ms`).
    mapping_ms: f64,
    /// Whether the mapping was checked here edge by edge against the rebuilt reference.
    mapping_verified: bool,
    /// Why the check failed, when it did.
    verification_error: Option<String>,
    /// Peak resident memory of the process, KiB.
    peak_rss_kb: u64,
}

/// Check the reported rank → node mapping against the reference graph of the matched family:
/// a bijection onto the reference nodes that carries every edge onto an edge (with equal edge
/// counts, that makes it an isomorphism).
pub(crate) fn verify_mapping(g: &Graph, report: &TopologyReport) -> Result<(), String> {
    let m = report.identification.matched.as_ref().ok_or("no match")?;
    let family = Family::from_name(&m.family).ok_or_else(|| format!("unknown family {}", m.family))?;
    let reference = TopologySpec::new(family, m.dims.clone())?.graph();
    let n = g.num_nodes() as usize;
    if reference.num_nodes() as usize != n || reference.num_edges() != g.num_edges() {
        return Err("reference size differs".into());
    }
    let mut node_of = vec![u32::MAX; n];
    let mut used = vec![false; n];
    for p in &report.identification.mapping {
        let (r, v) = (p.rank as usize, p.node as usize);
        if r >= n || v >= n || used[v] || node_of[r] != u32::MAX {
            return Err(format!("rank {r} → node {v} is not part of a bijection"));
        }
        used[v] = true;
        node_of[r] = p.node;
    }
    if let Some(r) = node_of.iter().position(|&v| v == u32::MAX) {
        return Err(format!("rank {r} has no node"));
    }
    match g
        .edges()
        .find(|&(a, b)| !reference.has_edge(node_of[a as usize], node_of[b as usize]))
    {
        Some((a, b)) => Err(format!("edge {a}-{b} maps to a non-edge")),
        None => Ok(()),
    }
}

pub(crate) fn topology(path: &PathBuf, repeat: u32) -> Result<TopologyResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let g = edgelist::parse(&text, &path.display().to_string())?;
    let opts = TopologyOptions::default();
    let mut stages: Vec<(String, f64)> = Vec::new();
    let mut last = None;
    let mut total_cpu_ms = f64::INFINITY;
    let (mut call_ms, mut identification_ms, mut display_spectrum_ms, mut mapping_ms) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        let (t, cpu) = (Instant::now(), thread_cpu_ms());
        let report = identify_graph(&g, &opts);
        total_cpu_ms = total_cpu_ms.min(thread_cpu_ms() - cpu);
        call_ms = call_ms.min(ms(t));
        let timings = &report.identification.timings;
        identification_ms = identification_ms.min(timings.total_ms);
        display_spectrum_ms = display_spectrum_ms.min(timings.display_spectrum_ms);
        mapping_ms = mapping_ms.min(timings.mapping_ms);
        for (i, s) in report.identification.stages.iter().enumerate() {
            match stages.get_mut(i) {
                Some(entry) if entry.0 == s.name => entry.1 = entry.1.min(s.milliseconds),
                _ => stages.insert(i, (s.name.clone(), s.milliseconds)),
            }
        }
        last = Some(report);
    }
    let report = last.ok_or("no repetition ran")?;
    let stage = |name: &str| stages.iter().filter(|s| s.0 == name).map(|s| s.1).sum::<f64>();
    let verification = verify_mapping(&g, &report);
    Ok(TopologyResult {
        ranks: g.num_nodes(),
        edges: g.num_edges(),
        matched: report.identification.matched.as_ref().map(|m| m.label.clone()),
        spectrum_ms: stage("spectrum"),
        isomorphism_ms: stage("isomorphism"),
        total_ms: call_ms,
        stages_ms: stages.iter().map(|s| s.1).sum(),
        total_cpu_ms,
        call_ms,
        identification_ms,
        display_spectrum_ms,
        mapping_ms,
        stages,
        mapping_verified: verification.is_ok(),
        verification_error: verification.err(),
        peak_rss_kb: peak_rss_kb(),
    })
}
