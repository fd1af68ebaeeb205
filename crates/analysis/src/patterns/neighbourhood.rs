//! An event graph cut down to what can be read: one rank of each kind and the ranks it talks to.
//!
//! The event graph of a pattern on 64 ranks has 64 lines and thousands of arrows; fitted to a
//! page it is a solid mass (7 px a line). Most of its lines repeat one another: in a stencil
//! every interior rank does the same sends and receives in the same order. [`neighbourhood`]
//! keeps one line per distinct event sequence (the first rank that has it, with the number of
//! ranks alike) and the lines of the ranks those representatives exchange messages with, so the
//! arrows of each kind of rank stay visible. O(events + arrows) time and space.
//!
//! A line's sequence is read relative to its rank: a send to rank 9 from rank 8 is "a send to
//! rank + 1", so the interior ranks of a stencil come out alike and those whose partners wrap
//! around (or are missing) form their own kinds.
//!
//! ```
//! use tracelogic_analysis::patterns::construct::{Arrow, EventGraph, GraphEvent};
//! use tracelogic_analysis::patterns::neighbourhood::neighbourhood;
//! // A ring of 6 ranks, each sending to the next and receiving from the previous.
//! let event = |rank: u32, event, symbol: String| GraphEvent {
//!     rank, lane: rank as usize, event, symbol, logical: event, time: 0, end: 0,
//! };
//! let mut events = Vec::new();
//! for r in 0..6u32 {
//!     events.push(event(r, 0, format!("S{}", (r + 1) % 6)));
//!     events.push(event(r, 1, format!("R{}", (r + 5) % 6)));
//! }
//! let arrows = (0..6).map(|r| Arrow { from: 2 * r, to: 2 * ((r + 1) % 6) + 1 }).collect();
//! let g = EventGraph { pattern: 0, occurrence: 0, ranks: (0..6).collect(), events, arrows, logical_width: 2 };
//! let n = neighbourhood(&g, 16).unwrap();
//! // Three kinds: rank 0 (its previous rank wraps), ranks 1-4, rank 5 (its next rank wraps);
//! // ranks 2 and 4 are drawn as partners of 1 and 5.
//! assert_eq!(n.kinds, 3);
//! assert_eq!(n.graph.ranks, vec![0, 1, 2, 4, 5]);
//! assert_eq!(n.alike, vec![1, 4, 0, 0, 1]);
//! assert_eq!(n.graph.arrows.len(), 4);
//! ```

use super::construct::{Arrow, EventGraph};
use std::collections::HashMap;

/// The reduced graph and, per kept line, how many ranks of the whole graph it stands for
/// (0 for a line kept as a representative's partner only).
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbourhood {
    /// The kept lines (in the original order), their events and the arrows between them.
    pub graph: EventGraph,
    /// Ranks alike (same event sequence) each kept line represents; 0 for a partner line.
    pub alike: Vec<usize>,
    /// Distinct event sequences among the lines of the whole graph.
    pub kinds: usize,
}

/// `g` cut down to one line per distinct event sequence and those lines' message partners, at
/// most `max_lanes` lines (representatives first, then partners in line order). `None` when that
/// keeps every line (nothing to cut).
pub fn neighbourhood(g: &EventGraph, max_lanes: usize) -> Option<Neighbourhood> {
    let lanes = g.ranks.len();
    // Each line's event sequence (symbols in order, peers relative to the line's rank; events are
    // stored by line then order).
    let mut sequence: Vec<Vec<String>> = vec![Vec::new(); lanes];
    for e in &g.events {
        if let Some(s) = sequence.get_mut(e.lane) {
            s.push(relative(&e.symbol, e.rank));
        }
    }
    let mut class_of: HashMap<&[String], usize> = HashMap::new();
    let mut alike_of_lane = vec![0usize; lanes];
    let mut representative = Vec::new();
    for (lane, s) in sequence.iter().enumerate() {
        match class_of.get(s.as_slice()) {
            Some(&rep) => alike_of_lane[rep] += 1,
            None => {
                class_of.insert(s.as_slice(), lane);
                alike_of_lane[lane] = 1;
                representative.push(lane);
            }
        }
    }
    let mut keep = vec![false; lanes];
    let mut kept = 0usize;
    for &lane in representative.iter().take(max_lanes) {
        keep[lane] = true;
        kept += 1;
    }
    let is_rep = |lane: usize| alike_of_lane[lane] > 0;
    for a in &g.arrows {
        let (Some(from), Some(to)) = (g.events.get(a.from), g.events.get(a.to)) else {
            continue;
        };
        for (mine, other) in [(from.lane, to.lane), (to.lane, from.lane)] {
            if kept < max_lanes && is_rep(mine) && keep[mine] && !keep[other] {
                keep[other] = true;
                kept += 1;
            }
        }
    }
    if kept >= lanes {
        return None;
    }
    let mut new_lane = vec![usize::MAX; lanes];
    let mut ranks = Vec::with_capacity(kept);
    let mut alike = Vec::with_capacity(kept);
    for lane in (0..lanes).filter(|&l| keep[l]) {
        new_lane[lane] = ranks.len();
        ranks.push(g.ranks[lane]);
        alike.push(alike_of_lane[lane]);
    }
    let mut new_event = vec![usize::MAX; g.events.len()];
    let mut events = Vec::new();
    for (i, e) in g.events.iter().enumerate() {
        if let Some(&l) = new_lane.get(e.lane).filter(|&&l| l != usize::MAX) {
            new_event[i] = events.len();
            let mut e = e.clone();
            e.lane = l;
            events.push(e);
        }
    }
    let arrows = g
        .arrows
        .iter()
        .filter_map(|a| {
            let (from, to) = (*new_event.get(a.from)?, *new_event.get(a.to)?);
            (from != usize::MAX && to != usize::MAX).then_some(Arrow { from, to })
        })
        .collect();
    Some(Neighbourhood {
        graph: EventGraph {
            pattern: g.pattern,
            occurrence: g.occurrence,
            ranks,
            events,
            arrows,
            logical_width: g.logical_width,
        },
        alike,
        kinds: representative.len(),
    })
}

/// `symbol` with its peer relative to `rank`: `S9` on rank 8 is `S+1`; a symbol that names no
/// peer (`MPI_Bcast`) stays as it is.
fn relative(symbol: &str, rank: u32) -> String {
    let mut chars = symbol.chars();
    match (chars.next(), chars.as_str().parse::<i64>()) {
        (Some(kind @ ('S' | 'R')), Ok(peer)) => format!("{kind}{:+}", peer - i64::from(rank)),
        _ => symbol.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::construct::GraphEvent;

    fn ev(rank: u32, lane: usize, event: u32, symbol: &str) -> GraphEvent {
        GraphEvent {
            rank,
            lane,
            event,
            symbol: symbol.into(),
            logical: event,
            time: 0,
            end: 0,
        }
    }

    /// A 1-D chain of `n` ranks exchanging with both neighbours: the two ends differ from the
    /// interior, so three kinds; checked against the lines counted by hand.
    fn chain(n: u32) -> EventGraph {
        let mut events = Vec::new();
        let mut index = HashMap::new();
        for r in 0..n {
            let mut k = 0;
            for (dir, peer) in [("L", r.checked_sub(1)), ("R", (r + 1 < n).then_some(r + 1))] {
                if peer.is_some() {
                    index.insert((r, "S", dir), events.len());
                    events.push(ev(r, r as usize, k, &format!("S{dir}")));
                    k += 1;
                }
            }
            for (dir, peer) in [("L", r.checked_sub(1)), ("R", (r + 1 < n).then_some(r + 1))] {
                if peer.is_some() {
                    index.insert((r, "R", dir), events.len());
                    events.push(ev(r, r as usize, k, &format!("R{dir}")));
                    k += 1;
                }
            }
        }
        let mut arrows = Vec::new();
        for r in 0..n - 1 {
            arrows.push(Arrow {
                from: index[&(r, "S", "R")],
                to: index[&(r + 1, "R", "L")],
            });
            arrows.push(Arrow {
                from: index[&(r + 1, "S", "L")],
                to: index[&(r, "R", "R")],
            });
        }
        EventGraph {
            pattern: 3,
            occurrence: 0,
            ranks: (0..n).collect(),
            events,
            arrows,
            logical_width: 4,
        }
    }

    #[test]
    fn a_chain_keeps_its_three_kinds_of_rank_and_their_partners() {
        let g = chain(10);
        let n = neighbourhood(&g, 16).expect("10 lines cut down");
        assert_eq!(n.kinds, 3, "left end, interior, right end");
        // Representatives 0 (left end), 1 (interior), 9 (right end); partners 2 (of 1) and 8 (of 9).
        assert_eq!(n.graph.ranks, vec![0, 1, 2, 8, 9]);
        assert_eq!(n.alike, vec![1, 8, 0, 0, 1]);
        // Every arrow between kept lines is kept, none other: 0<->1, 1<->2, 8<->9.
        assert_eq!(n.graph.arrows.len(), 6);
        for a in &n.graph.arrows {
            let (f, t) = (&n.graph.events[a.from], &n.graph.events[a.to]);
            assert!(f.symbol.starts_with('S') && t.symbol.starts_with('R'));
            assert_eq!(n.graph.ranks[f.lane], f.rank);
            assert_eq!(n.graph.ranks[t.lane], t.rank);
            assert_eq!(f.rank.abs_diff(t.rank), 1);
        }
    }

    #[test]
    fn peers_are_read_relative_to_the_rank() {
        assert_eq!(relative("S9", 8), "S+1");
        assert_eq!(relative("R0", 7), "R-7");
        assert_eq!(relative("MPI_Bcast", 3), "MPI_Bcast");
        assert_eq!(relative("SL", 3), "SL");
    }

    #[test]
    fn nothing_to_cut_and_the_lane_cap() {
        assert_eq!(neighbourhood(&chain(3), 16), None, "three kinds in three lines");
        let n = neighbourhood(&chain(40), 4).unwrap();
        assert_eq!(n.graph.ranks.len(), 4);
        assert_eq!(&n.graph.ranks[..3], &[0, 1, 2], "representatives first, then partners");
    }
}
