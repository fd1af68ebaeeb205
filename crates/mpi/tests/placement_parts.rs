//! The placement of a whole run by its ranks' first contacts computed by parts
//! (`tracelogic_analysis::logical::LocalContacts` per block of ranks, the results combined as
//! `tracelogic-mpi topology` exchanges them) is the serial one: the same choice with the same
//! agreements and reasons (`choose_with_grids` with the declared grids against `Placement::choose`), and the same topology
//! report (`place_by_first_contacts_from` against `place_by_first_contacts`), on every bundled
//! sample and app trace and on NPB BT renumbered (where the ranks' first contacts, not
//! identification's mapping, place the run), cut into 1 to 4 blocks.

use std::collections::HashMap;
use std::ops::Range;
use tracelogic_analysis::logical::{
    choose_with_grids, declared_grids, place_by_first_contacts, place_by_first_contacts_from, Agreement, ContactSource,
    ContentKey, LocalContacts, PlacedBy, Placement, Scoring,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{Rank, Selection, Trace};
use tracelogic_mpi::partition::by_count;

mod common;
use common::{partial, strip_timings, traces};

/// The processes of `blocks`, each with its block's [`LocalContacts`], exchanging as
/// `tracelogic-mpi` does (all-gathered keys and first contacts, the reference rank's operations
/// from its owner, agreements summed).
struct Parts<'t> {
    parts: Vec<LocalContacts<'t>>,
    blocks: Vec<Range<Rank>>,
    ranks: Rank,
}

impl ContactSource for Parts<'_> {
    fn num_ranks(&self) -> Rank {
        self.ranks
    }
    fn keys(&mut self) -> Vec<ContentKey> {
        self.parts.iter().flat_map(|p| p.keys()).collect()
    }
    fn first_contacts(&mut self, adjacency: &[Vec<Rank>], sends_only: bool) -> Option<Vec<HashMap<Rank, u32>>> {
        self.parts
            .iter()
            .flat_map(|p| p.first_contacts(adjacency, sends_only))
            .collect()
    }
    fn agreement(&mut self, placement: &Placement, keys: &[ContentKey]) -> (Agreement, u64) {
        let total = self.parts.iter().map(|p| p.total()).sum();
        let Some(scoring) = Scoring::new(placement, keys) else {
            return (Agreement::default(), total);
        };
        let r = scoring.reference();
        let owner = self.blocks.iter().position(|b| b.contains(&r)).unwrap();
        let steps = self.parts[owner].steps(&scoring, r);
        (self.parts.iter().map(|p| p.agreed(&scoring, &steps)).sum(), total)
    }
}

fn untimed(report: &TopologyReport) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap();
    strip_timings(&mut v);
    v
}

/// A permutation of `n` ranks from a fixed seed (a small LCG: the test needs no randomness,
/// only numberings other than the recorded one).
fn permutation(n: usize, seed: u64) -> Vec<Rank> {
    let mut p: Vec<Rank> = (0..n as Rank).collect();
    let mut x = seed;
    for i in (1..n).rev() {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        p.swap(i, ((x >> 33) % (i as u64 + 1)) as usize);
    }
    p
}

/// Checks `trace` at 1 to 4 blocks; returns whether the serial placement is by first contacts.
fn check(id: &str, trace: &Trace) -> bool {
    let n = trace.num_ranks() as usize;
    let matrix = CommMatrix::from_trace(trace, &Selection::all());
    let identified = identify_matrix(&matrix, &TopologyOptions::default());
    let want_choice = Placement::choose(trace, &identified);
    let mut want = identified.clone();
    place_by_first_contacts(trace, &mut want);
    for processes in 1..=4.min(n.max(1)) {
        let blocks = by_count(n, processes);
        let traces: Vec<Trace> = blocks.iter().map(|b| partial(trace, b)).collect();
        let make = || Parts {
            parts: traces
                .iter()
                .zip(&blocks)
                .map(|(t, b)| LocalContacts::new(t, b.clone()))
                .collect(),
            blocks: blocks.clone(),
            ranks: trace.num_ranks(),
        };
        let mut parts = make();
        let keys = parts.keys();
        // The grids the program declared are definitions, which every process holds.
        let grids = declared_grids(&traces[0]);
        let got_choice = choose_with_grids(&mut parts, &identified, &keys, &grids);
        assert_eq!(got_choice, want_choice, "{id}: blocks {blocks:?}");
        let mut got = identified.clone();
        place_by_first_contacts_from(&mut make(), &mut got);
        assert_eq!(untimed(&got), untimed(&want), "{id}: blocks {blocks:?}");
    }
    want.placed_by == PlacedBy::FirstContacts
}

#[test]
fn the_placement_by_parts_is_the_serial_placement() {
    let mut checked = 0;
    let mut bt = None;
    for dir in traces() {
        let id = dir.display().to_string();
        let Ok(trace) = read_trace(read_paths(std::slice::from_ref(&dir)).unwrap()) else {
            continue;
        };
        check(&id, &trace);
        checked += 1;
        if id.ends_with("npb-bt.S.9") {
            bt = Some(trace);
        }
    }
    assert!(checked >= 30, "{checked} traces");
    // BT's graph (the 3x3 6-point stencil, K3,3,3) has more automorphisms than its geometry:
    // renumbered, its ranks are placed by their first contacts.
    let bt = bt.expect("the NPB BT sample");
    let mut by_contacts = 0;
    for seed in 1..=6 {
        let renumbered = bt.renumber_ranks(&permutation(9, seed)).unwrap();
        by_contacts += check(&format!("BT renumbered (seed {seed})"), &renumbered) as u32;
    }
    assert!(
        by_contacts > 0,
        "no renumbering was placed by first contacts: the test shows nothing"
    );
}
