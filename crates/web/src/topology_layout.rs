//! Where the topology view and the compare view draw each rank of an identified topology: a
//! position in a `[0, 1]²` box. Geometry only (no page code), so the worker lays out the
//! compared runs' graphs with it too.

use std::collections::VecDeque;
use tracelogic_engine::topology::{Family, RankPlace, TopologyReport, TopologySpec};

/// Position of every rank in a `[0, 1]²` box: nested squares for hypercubes, from the
/// coordinates for grid-like families and NAS CG's process grid, by depth for trees, masters
/// above workers for stars and master–worker runs, on a circle otherwise.
pub fn layout(report: &TopologyReport) -> Vec<(f64, f64)> {
    let n = report.identification.ranks as usize;
    let family = report
        .identification
        .matched
        .as_ref()
        .map(|m| m.family.as_str())
        .unwrap_or("");
    let mapping = &report.identification.mapping;
    let coords_ok = mapping.len() == n && mapping.iter().all(|p| (p.rank as usize) < n);
    if coords_ok && family == "hypercube" {
        let d = report
            .identification
            .matched
            .as_ref()
            .and_then(|m| m.dims.first().copied())
            .unwrap_or(0);
        if let Some(pos) = crate::family_layout::hypercube(d, n, mapping.iter().map(|p| (p.rank, p.node))) {
            return pos;
        }
    }
    // NAS CG's coordinates are its process grid (row, column): its transpose edges bow as arcs.
    let cartesian = family.contains("grid")
        || family.contains("torus")
        || family.contains("stencil")
        || family.contains("hypercube")
        || family == "nas-cg";
    if coords_ok && cartesian {
        if let Some(pos) = grid_layout(mapping, n) {
            return pos;
        }
    }
    let hubs = report
        .identification
        .matched
        .as_ref()
        .and_then(|m| TopologySpec::new(Family::from_name(&m.family)?, m.dims.clone()).ok())
        .map_or(0, |s| s.hubs());
    if coords_ok && hubs > 0 {
        return hub_layout(mapping, n, hubs);
    }
    if coords_ok && family.contains("tree") {
        if let Some(root) = mapping.iter().find(|p| p.node == 0) {
            return tree_layout(n, &report.edges, root.rank);
        }
    }
    circle_layout(n)
}

/// Stars and master–worker runs: the masters (nodes `0..masters`) in a row at the top, the
/// workers in a row (two rows past 16) below, each row spread over the width.
fn hub_layout(mapping: &[RankPlace], n: usize, masters: u32) -> Vec<(f64, f64)> {
    let workers = n.saturating_sub(masters as usize);
    let rows = if workers > 16 { 2 } else { 1 };
    let per_row = workers.div_ceil(rows).max(1);
    let spread = |i: usize, count: usize| (i as f64 + 0.5) / count.max(1) as f64;
    let mut pos = vec![(0.5, 0.5); n];
    for p in mapping {
        pos[p.rank as usize] = if p.node < masters {
            (spread(p.node as usize, masters as usize), 0.1)
        } else {
            let w = (p.node - masters) as usize;
            let (row, col) = (w / per_row, w % per_row);
            let in_row = per_row.min(workers - row * per_row);
            (spread(col, in_row), 0.7 + 0.25 * row as f64)
        };
    }
    pos
}

fn circle_layout(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / n.max(1) as f64 - std::f64::consts::FRAC_PI_2;
            (0.5 + 0.5 * a.cos(), 0.5 + 0.5 * a.sin())
        })
        .collect()
}

/// Columns from the first coordinate, rows from the second; a third dimension places its
/// layers side by side, offset a little downwards so wrap edges stay visible.
fn grid_layout(mapping: &[RankPlace], n: usize) -> Option<Vec<(f64, f64)>> {
    let dim = |d: usize| {
        mapping
            .iter()
            .map(|p| p.coords.get(d).copied().unwrap_or(0))
            .max()
            .unwrap_or(0) as f64
    };
    if mapping.iter().any(|p| p.coords.len() > 3 || p.coords.is_empty()) {
        return None;
    }
    let (wx, wy, wz) = (dim(0) + 1.0, dim(1) + 1.0, dim(2) + 1.0);
    let width = wx * wz + (wz - 1.0) * 0.6;
    let span = width.max(wy + (wz - 1.0) * 0.3);
    let mut pos = vec![(0.0, 0.0); n];
    for p in mapping {
        let c = |d: usize| p.coords.get(d).copied().unwrap_or(0) as f64;
        let x = c(2) * (wx + 0.6) + c(0);
        let y = c(1) + c(2) * 0.3;
        pos[p.rank as usize] = ((x + 0.5) / span, (y + 0.5) / span);
    }
    Some(pos)
}

fn tree_layout(n: usize, edges: &[[u32; 2]], root: u32) -> Vec<(f64, f64)> {
    let mut adjacency = vec![Vec::new(); n];
    for &[a, b] in edges {
        if (a as usize) < n && (b as usize) < n {
            adjacency[a as usize].push(b as usize);
            adjacency[b as usize].push(a as usize);
        }
    }
    let mut depth = vec![usize::MAX; n];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    let mut queue = VecDeque::from([root as usize]);
    depth[root as usize] = 0;
    while let Some(v) = queue.pop_front() {
        if levels.len() <= depth[v] {
            levels.push(Vec::new());
        }
        levels[depth[v]].push(v);
        for &w in &adjacency[v] {
            if depth[w] == usize::MAX {
                depth[w] = depth[v] + 1;
                queue.push_back(w);
            }
        }
    }
    let rows = levels.len().max(1) as f64;
    let mut pos = circle_layout(n);
    for (d, level) in levels.iter().enumerate() {
        for (i, &v) in level.iter().enumerate() {
            pos[v] = ((i as f64 + 0.5) / level.len() as f64, (d as f64 + 0.5) / rows);
        }
    }
    pos
}
