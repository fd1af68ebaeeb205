//! The topology the program declared (`MPI_Cart_create`: extents, periodicity, each rank's
//! coordinates), against the one observed (the filtered graph of the report).
//!
//! The declared grid's neighbour pairs are the members one step apart along one dimension
//! (with wrap-around where the dimension is periodic; an extent of 2 gives one pair, an extent
//! of 1 none), in world ranks through the communicator's members. The declared topology
//! *agrees* when its members communicate with exactly those pairs; otherwise the report says
//! how they differ: declared pairs without traffic, communicating pairs that are not declared
//! neighbours, and per dimension the telling cases (periodic but no wrap-around traffic,
//! wrap-around traffic on a non-periodic dimension, an extent of 1, no traffic along it).
//! When a declared topology agrees and its members are every rank that communicates, the run is
//! named by the declared extents ([`TopologyReport::name_as_declared`]): "2x2x3 torus", where
//! identification's simplest name for the same graph is "4x3 torus".
//! A grid's rows and columns may talk by collectives on communicators of their own instead of
//! point-to-point messages (a process grid of ScaLAPACK or HPL): [`super::grid_lines`] finds
//! them and the comparison reports their traffic per dimension ([`DeclaredTopology::lines`]).

use super::grid_lines::{self, CommTraffic, LineTraffic};
use super::report::{PairTraffic, TopologyReport};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use tracelogic_graph::iso::{isomorphism, IsoOptions};
use tracelogic_graph::{Graph, TopologySpec};
use tracelogic_model::{CartTopology, Trace};

/// Pairs listed at most (the counts are complete).
const LISTED: usize = 64;

/// One declared Cartesian topology compared with the observed graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredTopology {
    /// The communicator it created.
    pub comm: u32,
    /// Its name in the trace.
    pub comm_name: String,
    /// Number of ranks in the grid.
    pub ranks: u32,
    /// Extents as declared (dimension 0 first).
    pub dims: Vec<u32>,
    /// Periodicity of each dimension.
    pub periods: Vec<bool>,
    /// `2x2x3 torus`, `4x3 grid`, `4x3 grid (periodic in dimension 0)`, `12-node ring`.
    pub label: String,
    /// True when the trace recorded each rank's coordinates; false when they follow MPI's
    /// row-major rule.
    pub coords_recorded: bool,
    /// The members communicate with exactly the declared neighbour pairs.
    pub agrees: bool,
    /// Declared neighbour pairs.
    pub declared_pairs: usize,
    /// Declared neighbour pairs that communicate.
    pub used_pairs: usize,
    /// Declared neighbour pairs without traffic (world ranks, at most 64 listed).
    pub unused: Vec<[u32; 2]>,
    /// How many declared pairs have no traffic.
    pub unused_count: usize,
    /// Communicating pairs of members that are not declared neighbours (at most 64 listed).
    pub undeclared: Vec<[u32; 2]>,
    /// How many communicating pairs of members are not declared neighbours.
    pub undeclared_count: usize,
    /// Communicating pairs with one rank outside the communicator.
    pub outside_pairs: usize,
    /// Whether the declared grid is the same graph as the identified match (`None` without a
    /// match over the same ranks).
    pub same_graph_as_match: Option<bool>,
    /// Per-dimension findings, one sentence each.
    pub notes: Vec<String>,
    /// One sentence for people (the CLI prints it, the page shows it under the match).
    pub summary: String,
    /// How many further communicators declare the same grid on the same world ranks (same
    /// extents, periods and coordinates): they compare identically, so they are counted here
    /// instead of repeated. CP2K creates a new 2-D grid communicator for every distributed
    /// matrix: 954 identical declarations in a 4-rank MD run of 5 steps.
    #[serde(default)]
    pub repeats: usize,
    /// Those communicators (at most 64 listed; `repeats` is complete).
    #[serde(default)]
    pub repeated_in: Vec<u32>,
    /// Per dimension, the communicators over exactly one line of the grid (row and column
    /// communicators) and their traffic; empty for a grid with fewer than two dimensions of
    /// extent 2 or more.
    #[serde(default)]
    pub lines: Vec<LineTraffic>,
}

/// The label of a declared grid in its own extents.
pub fn declared_label(dims: &[u32], periods: &[bool]) -> String {
    let extents = dims.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
    let periodic: Vec<usize> = (0..dims.len()).filter(|&k| periods.get(k) == Some(&true)).collect();
    if dims.len() == 1 {
        return format!("{extents}-node {}", if periodic.is_empty() { "line" } else { "ring" });
    }
    if periodic.len() == dims.len() {
        format!("{extents} torus")
    } else if periodic.is_empty() {
        format!("{extents} grid")
    } else {
        let list = periodic.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
        let s = if periodic.len() > 1 { "s" } else { "" };
        format!("{extents} grid (periodic in dimension{s} {list})")
    }
}

/// The declared neighbour pairs `(a, b)`, `a < b`, in communicator ranks, each with the
/// dimension it runs along and whether it is a wrap-around pair (coordinates 0 and d − 1 of a
/// dimension of extent at least 3).
fn declared_pairs(t: &CartTopology) -> Vec<(u32, u32, usize, bool)> {
    let recorded: HashMap<&[u32], u32> = if t.coords_recorded {
        t.coords
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_slice(), i as u32))
            .collect()
    } else {
        HashMap::new()
    };
    let position = |coords: &[u32]| -> Option<u32> {
        if t.coords_recorded {
            recorded.get(coords).copied()
        } else {
            t.rank_at(coords).map(|r| r as u32)
        }
    };
    let mut out = BTreeSet::new();
    for (a, c) in t.coords.iter().enumerate() {
        for (k, &d) in t.dims.iter().enumerate() {
            if d < 2 {
                continue;
            }
            let mut next = c.clone();
            let wrap = c[k] + 1 == d;
            if wrap && !t.periods[k] {
                continue;
            }
            next[k] = (c[k] + 1) % d;
            let Some(b) = position(&next) else { continue };
            let (x, y) = (a as u32, b);
            if x != y {
                out.insert((x.min(y), x.max(y), k, wrap && d >= 3));
            }
        }
    }
    out.into_iter().collect()
}

/// Compare every Cartesian topology `trace` declares with `report`'s graph (identified from
/// the same trace's matrix).
pub fn compare(trace: &Trace, report: &TopologyReport) -> Vec<DeclaredTopology> {
    let n = trace.num_ranks();
    let observed: BTreeSet<(u32, u32)> = report.edges.iter().map(|&[a, b]| (a.min(b), a.max(b))).collect();
    let mut out: Vec<DeclaredTopology> = Vec::new();
    // A declaration already compared, by world members, extents, periods and coordinates.
    type Key<'a> = (&'a [u32], &'a [u32], &'a [bool], &'a [Vec<u32>]);
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let traffic = if trace.cartesian.is_empty() {
        CommTraffic::default()
    } else {
        CommTraffic::of(trace)
    };
    for t in &trace.cartesian {
        let Some(comm) = trace.comms.get(t.comm as usize) else {
            continue;
        };
        let members = &comm.members;
        if members.len() != t.coords.len() || members.iter().any(|&m| m >= n) {
            continue;
        }
        let key: Key = (members, &t.dims, &t.periods, &t.coords);
        if let Some(&i) = seen.get(&key) {
            let first = &mut out[i];
            first.repeats += 1;
            if first.repeated_in.len() < LISTED {
                first.repeated_in.push(t.comm);
            }
            continue;
        }
        seen.insert(key, out.len());
        let mut local = vec![u32::MAX; n as usize];
        for (i, &m) in members.iter().enumerate() {
            local[m as usize] = i as u32;
        }
        let world = |i: u32| members[i as usize];
        let pairs = declared_pairs(t);
        let declared: BTreeSet<(u32, u32)> = pairs.iter().map(|&(a, b, _, _)| (a, b)).collect();
        let mut observed_local = BTreeSet::new();
        let mut outside_pairs = 0;
        for &(a, b) in &observed {
            match (local[a as usize], local[b as usize]) {
                (u32::MAX, u32::MAX) => {}
                (u32::MAX, _) | (_, u32::MAX) => outside_pairs += 1,
                (x, y) => {
                    observed_local.insert((x.min(y), x.max(y)));
                }
            }
        }
        let as_world = |&(a, b): &(u32, u32)| {
            let (x, y) = (world(a), world(b));
            [x.min(y), x.max(y)]
        };
        let unused: Vec<(u32, u32)> = declared.difference(&observed_local).copied().collect();
        // Declared pairs whose traffic the filter removed as noise (communicating, too little
        // to be edges).
        let faint: BTreeSet<(u32, u32)> = report
            .filter
            .removed
            .iter()
            .filter_map(|r| {
                let (x, y) = (*local.get(r.a as usize)?, *local.get(r.b as usize)?);
                (x != u32::MAX && y != u32::MAX).then_some((x.min(y), x.max(y)))
            })
            .filter(|p| declared.contains(p))
            .collect();
        let undeclared: Vec<(u32, u32)> = observed_local.difference(&declared).copied().collect();
        let used_pairs = declared.len() - unused.len();

        let lines = grid_lines::line_traffic(trace, members, &t.coords, &t.dims, &traffic);
        let line_talks = |k: usize| {
            lines
                .iter()
                .any(|l| l.dim == k && (l.collective_calls > 0 || l.p2p_messages > 0))
        };
        let mut notes = Vec::new();
        for (k, &d) in t.dims.iter().enumerate() {
            let along: Vec<&(u32, u32, usize, bool)> = pairs.iter().filter(|p| p.2 == k).collect();
            let used = |p: &&&(u32, u32, usize, bool)| observed_local.contains(&(p.0, p.1));
            if d == 1 {
                notes.push(format!("dimension {k} has extent 1: no neighbours along it"));
                continue;
            }
            if !along.is_empty() && !along.iter().any(|p| used(&p)) {
                if line_talks(k) {
                    notes.push(format!(
                        "no point-to-point traffic between neighbours along dimension {k} (extent {d})"
                    ));
                } else {
                    notes.push(format!("no traffic along dimension {k} (extent {d})"));
                }
                continue;
            }
            if t.periods[k] && d >= 3 {
                let wraps: Vec<_> = along.iter().filter(|p| p.3).collect();
                let seen = wraps.iter().filter(|p| used(p)).count();
                // Wrap-around pairs whose traffic the filter removed as noise: they communicate,
                // just too little to be edges (LAMMPS's atom-count exchange across a
                // non-periodic boundary of a grid it declares periodic).
                let filtered: Vec<&PairTraffic> = report
                    .filter
                    .removed
                    .iter()
                    .filter(|r| {
                        let (x, y) = (local[r.a as usize], local[r.b as usize]);
                        faint.contains(&(x.min(y), x.max(y)))
                            && wraps.iter().any(|p| (p.0, p.1) == (x.min(y), x.max(y)))
                    })
                    .collect();
                if seen == 0 && !filtered.is_empty() {
                    let share: f64 = filtered.iter().map(|r| r.share).sum();
                    notes.push(format!(
                        "declared periodic in dimension {k} (extent {d}): {} of its {} wrap-around pairs \
                         communicate, too little to be edges ({:.3} % of the traffic, filtered as noise)",
                        filtered.len(),
                        wraps.len(),
                        100.0 * share
                    ));
                } else if seen == 0 {
                    notes.push(format!(
                        "declared periodic in dimension {k} (extent {d}) but none of its {} wrap-around pairs \
                         communicates",
                        wraps.len()
                    ));
                } else if seen < wraps.len() {
                    notes.push(format!(
                        "declared periodic in dimension {k} (extent {d}): {seen} of its {} wrap-around pairs \
                         communicate",
                        wraps.len()
                    ));
                }
            } else if !t.periods[k] && d >= 3 {
                // Pairs at coordinates 0 and d − 1 of dimension k, equal elsewhere.
                let wraps = undeclared
                    .iter()
                    .filter(|&&(a, b)| {
                        let (ca, cb) = (&t.coords[a as usize], &t.coords[b as usize]);
                        (0..t.dims.len()).all(|j| {
                            if j == k {
                                ca[j].abs_diff(cb[j]) == d - 1
                            } else {
                                ca[j] == cb[j]
                            }
                        })
                    })
                    .count();
                if wraps > 0 {
                    notes.push(format!(
                        "dimension {k} (extent {d}) is declared non-periodic, but {wraps} wrap-around pairs \
                         communicate"
                    ));
                }
            }
        }

        notes.extend(lines.iter().filter_map(grid_lines::describe));

        let same_graph_as_match = report.identification.matched.as_ref().and_then(|m| {
            if members.len() != n as usize || report.identification.ranks != n {
                return None;
            }
            let family = tracelogic_graph::Family::from_name(&m.family)?;
            let spec = TopologySpec::new(family, m.dims.clone()).ok()?;
            let g = Graph::from_edges(n, pairs.iter().map(|&(a, b, _, _)| (a, b)));
            let h = spec.graph();
            Some(isomorphism(&g, &h, IsoOptions::for_nodes(n)).mapping().is_some())
        });

        let label = declared_label(&t.dims, &t.periods);
        let agrees = unused.is_empty() && undeclared.is_empty();
        let coords = if t.coords_recorded {
            "coordinates recorded in the trace"
        } else {
            "coordinates by MPI's row-major rule"
        };
        let head = format!("{} declares a {label} ({} ranks, {coords})", comm.name, members.len());
        let mut summary = if agrees {
            format!(
                "{head}; its members communicate with exactly its {} neighbour pairs",
                declared.len()
            )
        } else {
            let carry = if faint.is_empty() {
                "carry no traffic".to_string()
            } else if faint.len() == unused.len() {
                "carry only traffic filtered as noise".to_string()
            } else {
                format!(
                    "carry no traffic ({} of them only traffic filtered as noise)",
                    faint.len()
                )
            };
            format!(
                "{head}; the observed graph differs: {} of its {} neighbour pairs {carry}, {} communicating pairs \
                 are not declared neighbours",
                unused.len(),
                declared.len(),
                undeclared.len()
            )
        };
        if let (Some(same), Some(m)) = (same_graph_as_match, &report.identification.matched) {
            if same && m.label != label {
                summary.push_str(&format!(" (the same graph as the identified {})", m.label));
            } else if !same {
                summary.push_str(&format!(" (identified: {})", m.label));
            }
        }
        if outside_pairs > 0 {
            summary.push_str(&format!(
                "; {outside_pairs} communicating pairs involve ranks outside it"
            ));
        }
        for note in &notes {
            summary.push_str("; ");
            summary.push_str(note);
        }
        summary.push('.');
        out.push(DeclaredTopology {
            comm: t.comm,
            comm_name: comm.name.clone(),
            ranks: members.len() as u32,
            dims: t.dims.clone(),
            periods: t.periods.clone(),
            label,
            coords_recorded: t.coords_recorded,
            agrees,
            declared_pairs: declared.len(),
            used_pairs,
            unused: unused.iter().take(LISTED).map(as_world).collect(),
            unused_count: unused.len(),
            undeclared: undeclared.iter().take(LISTED).map(as_world).collect(),
            undeclared_count: undeclared.len(),
            outside_pairs,
            same_graph_as_match,
            notes,
            summary,
            repeats: 0,
            repeated_in: Vec::new(),
            lines,
        });
    }
    for d in &mut out {
        if d.repeats > 0 {
            let s = if d.repeats > 1 { "s" } else { "" };
            d.summary = d.summary.replacen(
                &format!("{} declares", d.comm_name),
                &format!(
                    "{} (and {} more communicator{s} declaring the same grid on the same ranks) declares",
                    d.comm_name, d.repeats
                ),
                1,
            );
        }
    }
    out
}

/// The one process grid `trace`'s row and column communicators declare over every rank whose
/// rows and columns hold every one of `pairs` (a pair in neither lies off it; both rows and
/// columns carry traffic, [`super::comm_grid::CommunicatorGrid::agrees`]): its label, or `None`
/// when there is no such grid, or more than one. The hint [`super::identify_matrix_declared`]
/// asks for when no cut of the filter names the graph.
pub fn grid_holding(trace: &Trace, pairs: &[[u32; 2]]) -> Option<String> {
    let (grids, _) = super::comm_grid::search(trace, pairs, super::comm_grid::MAX_STEPS);
    let mut holding = grids.iter().filter(|g| g.agrees && g.pairs_off_grid == 0);
    match (holding.next(), holding.next()) {
        (Some(g), None) => Some(g.label.clone()),
        _ => None,
    }
}

/// Fill `report.declared` from `trace` (the trace `report` was identified from) and, when a
/// declared topology agrees and its members include every rank with an edge, name the run by
/// it (`report.name_as_declared`); else by the one process grid that row and column
/// communicators declare and the traffic agrees with ([`super::comm_grid`]); else, when no
/// shape of the library matches, by the only such grid when both its rows and its columns
/// carry traffic and it carries most of the bytes (pairs off it are listed in its summary). The CLI and the page call this next to
/// `logical::place_by_first_contacts`.
pub fn attach(trace: &Trace, report: &mut TopologyReport) {
    report.declared = compare(trace, report);
    let talking: BTreeSet<u32> = report.edges.iter().flatten().copied().collect();
    report.name_as_declared = report
        .declared
        .iter()
        .find(|d| {
            d.agrees
                && d.outside_pairs == 0
                && !talking.is_empty()
                && trace.comms.get(d.comm as usize).is_some_and(|c| {
                    let members: BTreeSet<u32> = c.members.iter().copied().collect();
                    talking.is_subset(&members)
                })
        })
        .map(|d| d.label.clone());
    let (whole, whole_done) = super::comm_grid::search(trace, &report.edges, super::comm_grid::MAX_STEPS);
    report.communicator_grids = whole;
    let (part, part_done) = super::sub_grid::search(trace, &report.edges, &report.communicator_grids);
    report.sub_grids = part;
    report.grid_search_incomplete = !(whole_done && part_done);
    if report.name_as_declared.is_none() {
        let mut agreeing = report.communicator_grids.iter().filter(|g| g.agrees);
        if let (Some(g), None) = (agreeing.next(), agreeing.next()) {
            report.name_as_declared = Some(g.label.clone());
        }
    }
    // No shape of the library matches, and the program declared one grid (only one) whose rows and
    // columns both carry traffic and hold most of the bytes (ScaLAPACK's Cholesky adds the
    // transposes of its panels between ranks on neither): the declaration is the best name
    // the run has; the grid's summary says what lies off it.
    let identified = report.identification.matched.is_some()
        || (!report.components.is_empty() && report.components.iter().all(|c| c.identification.matched.is_some()));
    if report.name_as_declared.is_none() && !identified && report.communicator_grids.len() == 1 {
        let mut mostly = report.communicator_grids.iter().filter(|g| {
            (g.pairs_in_rows > 0 || g.row_collective_calls > 0)
                && (g.pairs_in_cols > 0 || g.col_collective_calls > 0)
                && g.off_grid_share < 0.5
        });
        if let (Some(g), None) = (mostly.next(), mostly.next()) {
            report.name_as_declared = Some(g.label.clone());
        }
    }
}
