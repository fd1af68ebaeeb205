//! The timeline of the whole trace held: per lane and pixel column the dominant MPI function
//! and busy share, the calls at least a column wide, messages and collectives of a window, in
//! time or in logical steps (`tracelogic timeline`, the page's timeline view; docs/timeline.md).

use crate::phases::{Outside, PhaseOptions};
use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::patterns::construct::OUTSIDE;
pub use tracelogic_analysis::timeline::{
    Clock, Colour, GroupSource, Groups, Lane, TileCall, TileCollective, TileMessage, TimelineIndex, TimelineQuery,
    TimelineTile, NONE,
};
use tracelogic_model::Trace;

/// What [`Engine::timeline_groups`] finds: the pattern or phase of every call, from the answer
/// the Patterns and Phases views give for `source`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupsRequest {
    /// Pattern or phase.
    pub colour: Colour,
    /// The selection and the phases' strength.
    #[serde(default)]
    pub source: GroupSource,
}

impl Engine {
    /// The tile `query` asks for, on the whole trace held (the timeline's window is its own,
    /// not a selection). The index is built on the first call (O(calls + messages)) and kept;
    /// the logical steps on the first query in logical time.
    ///
    /// With a pattern or phase colouring, each call's pattern or phase comes from the same
    /// answer as [`Engine::patterns`] and [`Engine::phases`] give for `query.source` (the
    /// selection, and the phases' strength): [`Engine::timeline_groups`], kept until a query
    /// asks for another source.
    pub fn timeline(&self, query: &TimelineQuery) -> Result<TimelineTile> {
        let needs_groups = query.colour != Colour::Function
            && self
                .kept
                .timeline
                .borrow()
                .as_ref()
                .and_then(|i| i.groups_source(query.colour))
                != Some(&query.source);
        // Found before the index is borrowed: the phases use the engine's other kept analyses.
        let groups = if needs_groups {
            Some(self.timeline_groups(&GroupsRequest {
                colour: query.colour,
                source: query.source.clone(),
            })?)
        } else {
            None
        };
        let mut kept = self.kept.timeline.borrow_mut();
        let index = kept.get_or_insert_with(|| TimelineIndex::build(self.trace(), self.matching()));
        if query.clock == Clock::Logical {
            index.ensure_logical(self.trace(), self.matching());
        }
        if let Some(g) = groups {
            index
                .set_groups_from(self.trace(), query.colour, &query.source, g)
                .map_err(Error::Input)?;
        }
        tracelogic_analysis::timeline::timeline(self.trace(), self.matching(), index, query).map_err(Error::Input)
    }

    /// Build the part of the timeline's index that only zooming and panning need (the receive
    /// side: [`TimelineIndex::prepare_zoom`]), when the index exists and lacks it. Returns
    /// whether anything was built. The page's worker calls it when idle after answering a
    /// tile, so the first zoom does not pay for it; the tiles are the same either way.
    pub fn timeline_prepare_zoom(&self) -> bool {
        match self.kept.timeline.borrow().as_ref() {
            Some(index) => index.prepare_zoom(self.trace(), self.matching()),
            None => false,
        }
    }

    /// Whether a timeline index exists and still lacks what zooming needs
    /// ([`Engine::timeline_prepare_zoom`] would build something).
    pub fn timeline_zoom_pending(&self) -> bool {
        self.kept.timeline.borrow().as_ref().is_some_and(|i| !i.zoom_prepared())
    }

    /// What each call of the whole trace belongs to for `request.colour`, from the answer
    /// [`Engine::patterns`] (default options) and [`Engine::phases`] (strength
    /// `request.source.strength`, outside communication its own symbol: the Phases view's
    /// request) give for `request.source.selection` — the Patterns and Phases views' answer on
    /// the page's selection:
    /// - [`Colour::Pattern`]: the communication pattern of the occurrence whose events it
    ///   posted or lies between on its rank (from the part's first to its last event's call,
    ///   so a wait inside an occurrence belongs to it), named `Pattern #id` as the patterns view
    ///   names them; calls outside every occurrence have none.
    /// - [`Colour::Phase`]: the phase whose start on the call's rank (the call of its first
    ///   event there, `ranks[].first_event` of `phases --json`) is the latest at or before the
    ///   call, up to the rank's last call the selection keeps; calls before the first phase
    ///   and after the selection have none. Named `phase k` as the phases view names them.
    ///
    /// Calls of ranks the selection leaves out have no group. The selected calls are found in
    /// the whole trace by their entry, exit and function, in order (a restriction keeps calls
    /// in order and unchanged).
    pub fn timeline_groups(&self, request: &GroupsRequest) -> Result<Groups> {
        let trace = self.trace();
        let blank = || -> Vec<Vec<u32>> { trace.ranks.iter().map(|rt| vec![NONE; rt.calls.len()]).collect() };
        let selection = &request.source.selection;
        match request.colour {
            Colour::Function => Err(Error::Input("the function colouring needs no groups".into())),
            Colour::Pattern => {
                let scope = self.scope(selection)?;
                let whole = whole_calls(trace, scope.trace());
                let kept = self.patterns_kept(&scope);
                let comm = &kept.communication;
                let mut of_call = blank();
                let mut occurrence = blank();
                let mut seen = vec![0u32; comm.patterns.len()];
                for inst in &comm.instances {
                    if inst.pattern == OUTSIDE {
                        continue;
                    }
                    let Some(n) = seen.get_mut(inst.pattern as usize) else {
                        continue;
                    };
                    let occ = *n;
                    *n += 1;
                    for part in &inst.parts {
                        let r = part.rank as usize;
                        let calls = &kept.events.ranks[r].calls;
                        let (Some(&c0), Some(&c1)) = (
                            calls.get(part.first_event as usize),
                            calls.get(part.last_event as usize),
                        ) else {
                            continue;
                        };
                        let (Some(&w0), Some(&w1)) = (whole[r].get(c0 as usize), whole[r].get(c1 as usize)) else {
                            continue;
                        };
                        for c in w0..=w1 {
                            of_call[r][c as usize] = inst.pattern;
                            occurrence[r][c as usize] = occ;
                        }
                    }
                }
                Ok(Groups {
                    names: comm.patterns.iter().map(|p| format!("Pattern #{}", p.id)).collect(),
                    of_call,
                    occurrence,
                })
            }
            Colour::Phase => {
                let options = PhaseOptions {
                    strength: request.source.strength,
                    outside: Outside::Own,
                    ..PhaseOptions::default()
                };
                let report = self.phases_with(selection, &options)?;
                let scope = self.scope(selection)?;
                let whole = whole_calls(trace, scope.trace());
                let kept = self.patterns_kept(&scope);
                // Per rank: (first call, phase), then each call takes the latest start at or before it.
                let mut starts: Vec<Vec<(u32, u32)>> = vec![Vec::new(); trace.ranks.len()];
                for (k, ph) in report.analysis.phases.iter().enumerate() {
                    for span in &ph.ranks {
                        let r = span.rank as usize;
                        if let Some(&c) = kept.events.ranks[r]
                            .calls
                            .get(span.first_event as usize)
                            .and_then(|&c| whole[r].get(c as usize))
                        {
                            starts[r].push((c, k as u32));
                        }
                    }
                }
                let mut of_call = blank();
                for (r, st) in starts.iter_mut().enumerate() {
                    st.sort_unstable();
                    // Up to the last call the selection keeps on this rank.
                    let last = whole[r].last().map_or(0, |&c| c as usize + 1);
                    for (j, &(c, k)) in st.iter().enumerate() {
                        let end = st.get(j + 1).map_or(last, |n| n.0 as usize).max(c as usize);
                        for g in &mut of_call[r][c as usize..end] {
                            *g = k;
                        }
                    }
                }
                Ok(Groups {
                    names: (0..report.analysis.phases.len())
                        .map(|k| format!("phase {k}"))
                        .collect(),
                    of_call,
                    occurrence: Vec::new(),
                })
            }
        }
    }
}

/// Per rank: the index in `whole` of each call of `part` (a restriction of `whole`: the same
/// calls in the same order, some left out), matched in order by entry, exit and function.
fn whole_calls(whole: &Trace, part: &Trace) -> Vec<Vec<u32>> {
    whole
        .ranks
        .iter()
        .zip(&part.ranks)
        .map(|(w, p)| {
            let (w, p) = (&w.calls, &p.calls);
            if std::ptr::eq(w, p) {
                return (0..w.len() as u32).collect();
            }
            let mut out = Vec::with_capacity(p.len());
            let mut i = 0;
            for j in 0..p.len() {
                while i < w.len() && (w.enter(i), w.exit(i), w.func[i]) != (p.enter(j), p.exit(j), p.func[j]) {
                    i += 1;
                }
                if i == w.len() {
                    break;
                }
                out.push(i as u32);
                i += 1;
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;
    use tracelogic_model::Selection;

    /// The worker's idle step: nothing to do before the first tile, the receive side after the
    /// whole-run tile (which does not build it), nothing once built; a window after it gives
    /// the tile a fresh engine builds lazily.
    #[test]
    fn the_zoom_is_prepared_once_after_the_first_tile() {
        let engine = sample_engine("npb-lu.S.8");
        assert!(!engine.timeline_zoom_pending());
        assert!(!engine.timeline_prepare_zoom(), "no index yet");
        engine.timeline(&TimelineQuery::whole(Clock::Time, 100)).unwrap();
        assert!(
            engine.timeline_zoom_pending(),
            "the whole-run tile built the receive side"
        );
        assert!(engine.timeline_prepare_zoom());
        assert!(!engine.timeline_zoom_pending());
        assert!(!engine.timeline_prepare_zoom(), "prepared twice");
        let whole = engine.timeline(&TimelineQuery::whole(Clock::Time, 100)).unwrap();
        let window = TimelineQuery {
            from: whole.to / 3,
            to: Some(whole.to / 2),
            ..TimelineQuery::whole(Clock::Time, 100)
        };
        let lazy = sample_engine("npb-lu.S.8");
        assert_eq!(engine.timeline(&window).unwrap(), lazy.timeline(&window).unwrap());
        assert!(!lazy.timeline_zoom_pending());
    }

    fn request(colour: Colour) -> GroupsRequest {
        GroupsRequest {
            colour,
            source: GroupSource::default(),
        }
    }

    #[test]
    fn the_lu_sample_has_a_lane_per_rank_and_its_collectives() {
        let engine = sample_engine("npb-lu.S.8");
        let tile = engine.timeline(&TimelineQuery::whole(Clock::Time, 200)).unwrap();
        assert_eq!(tile.lanes.len(), 8);
        assert_eq!(tile.to - tile.from, {
            let (a, b) = engine.trace().span();
            b - a
        });
        let logical = engine.timeline(&TimelineQuery::whole(Clock::Logical, 200)).unwrap();
        assert_eq!(logical.lanes.len(), 8);
        // The index was built once and kept: a bad query is refused without rebuilding.
        let bad = TimelineQuery {
            pixels: 0,
            ..TimelineQuery::whole(Clock::Time, 1)
        };
        assert!(matches!(engine.timeline(&bad), Err(Error::Input(_))));
    }

    /// Phase colouring against the phases report: on each rank, a call takes the phase whose
    /// first call on that rank is the latest at or before it; the phase boundaries per rank are
    /// where the colour changes.
    #[test]
    fn phase_colouring_changes_at_each_ranks_phase_starts() {
        let engine = sample_engine("npb-lu.S.8");
        let phases = engine.phases_with(&Selection::all(), &PhaseOptions::default()).unwrap();
        assert!(phases.analysis.phases.len() >= 2, "LU has several phases");
        let groups = engine.timeline_groups(&request(Colour::Phase)).unwrap();
        for r in 0..engine.trace().ranks.len() {
            let calls = &engine.trace().ranks[r].calls;
            // (entry time of the phase's first call on r, phase), from the report.
            let mut starts: Vec<(u64, u32)> = phases
                .analysis
                .phases
                .iter()
                .enumerate()
                .filter_map(|(k, ph)| {
                    ph.ranks
                        .iter()
                        .find(|s| s.rank as usize == r)
                        .map(|s| (s.start, k as u32))
                })
                .collect();
            starts.sort_unstable();
            for i in 0..calls.len() {
                let want = starts
                    .iter()
                    .take_while(|s| s.0 <= calls.enter(i))
                    .last()
                    .map_or(NONE, |s| s.1);
                assert_eq!(groups.of_call[r][i], want, "rank {r} call {i}");
            }
        }
        // The tile: a call listed on its own carries its phase; wide enough columns inside one
        // phase of a rank show that phase.
        let q = TimelineQuery {
            colour: Colour::Phase,
            ..TimelineQuery::whole(Clock::Time, 400)
        };
        let tile = engine.timeline(&q).unwrap();
        assert_eq!(tile.groups.len(), phases.analysis.phases.len());
        assert_eq!(tile.groups[1], "phase 1");
        for c in &tile.calls {
            assert_eq!(c.group, groups.of_call[c.rank as usize][c.index as usize]);
        }
        let changes = (0..tile.lanes.len())
            .map(|l| {
                let row = &tile.group[l * 400..(l + 1) * 400];
                row.windows(2)
                    .filter(|w| w[0] != w[1] && w[0] != NONE && w[1] != NONE)
                    .count()
            })
            .sum::<usize>();
        assert!(changes >= tile.lanes.len(), "every lane changes phase at least once");
        // Patterns: names as the patterns view gives them, and the occurrence of each call.
        let p = engine
            .timeline(&TimelineQuery {
                colour: Colour::Pattern,
                ..TimelineQuery::whole(Clock::Time, 400)
            })
            .unwrap();
        assert!(p.groups.iter().enumerate().all(|(k, n)| *n == format!("Pattern #{k}")));
        assert!(p.group.iter().any(|&g| g != NONE));
        assert!(engine.timeline_groups(&request(Colour::Function)).is_err());
    }

    /// The phase colouring of a selection at another strength is the phases report of that
    /// selection and strength: on each selected rank a call entered inside the window takes the
    /// phase whose start there (by time) is the latest at or before its entry; calls of other
    /// ranks and after the window have none; the tile follows a change of source.
    #[test]
    fn phase_colouring_follows_the_selection_and_the_strength() {
        let engine = sample_engine("npb-lu.S.8");
        let (a, b) = engine.trace().span();
        let whole = engine.phases_with(&Selection::all(), &PhaseOptions::default()).unwrap();
        let at = |selection: &Selection, s0: f64| {
            let options = PhaseOptions {
                strength: s0,
                ..PhaseOptions::default()
            };
            engine.phases_with(selection, &options).unwrap()
        };
        // Ranks 0-3 at a strength that changes their phases; ranks 0-3 up to 3/4 of the run.
        let ranks = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let s0 = [1.0, 2.0, 3.0, 5.0, 8.0, 10.0]
            .into_iter()
            .find(|&s| {
                let n = at(&ranks, s).analysis.phases.len();
                n >= 2 && n != at(&ranks, 0.0).analysis.phases.len()
            })
            .expect("a strength that changes the phases");
        let relative_to = (b - a) * 3 / 4;
        let window = Selection {
            to: Some(relative_to),
            ..ranks.clone()
        };
        let mut last = None;
        for (selection, s0, end) in [(ranks, s0, u64::MAX), (window, 0.0, a + relative_to)] {
            let report = at(&selection, s0);
            assert!(report.analysis.phases.len() >= 2);
            let source = GroupSource {
                selection,
                strength: s0,
            };
            let g = engine
                .timeline_groups(&GroupsRequest {
                    colour: Colour::Phase,
                    source: source.clone(),
                })
                .unwrap();
            assert_eq!(g.names.len(), report.analysis.phases.len());
            let mut coloured = 0;
            for r in 0..engine.trace().ranks.len() {
                let calls = &engine.trace().ranks[r].calls;
                let mut starts: Vec<(u64, u32)> = report
                    .analysis
                    .phases
                    .iter()
                    .enumerate()
                    .filter_map(|(k, ph)| {
                        ph.ranks
                            .iter()
                            .find(|s| s.rank as usize == r)
                            .map(|s| (s.start, k as u32))
                    })
                    .collect();
                starts.sort_unstable();
                assert_eq!(starts.is_empty(), r >= 4, "rank {r} has phases only when selected");
                for i in 0..calls.len() {
                    let want = if calls.enter(i) >= end {
                        NONE
                    } else {
                        starts
                            .iter()
                            .take_while(|s| s.0 <= calls.enter(i))
                            .last()
                            .map_or(NONE, |s| s.1)
                    };
                    assert_eq!(g.of_call[r][i], want, "rank {r} call {i}");
                    coloured += (want != NONE) as usize;
                }
            }
            assert!(coloured > 0);
            last = Some((source, report));
        }
        let (source, report) = last.unwrap();
        // Through the tile: the default source, then this one, then the default again.
        let q = |source: GroupSource| TimelineQuery {
            colour: Colour::Phase,
            source,
            ..TimelineQuery::whole(Clock::Time, 300)
        };
        let t0 = engine.timeline(&q(GroupSource::default())).unwrap();
        assert_eq!(t0.groups.len(), whole.analysis.phases.len());
        let t1 = engine.timeline(&q(source)).unwrap();
        assert_eq!(t1.groups.len(), report.analysis.phases.len());
        // Ranks 4 to 7 are in no phase: their lanes have no group.
        assert!(t1.group[4 * 300..].iter().all(|&x| x == NONE));
        assert!(t1.group[..4 * 300].iter().any(|&x| x != NONE));
        let t2 = engine.timeline(&q(GroupSource::default())).unwrap();
        assert_eq!(t2.group, t0.group);
    }

    /// The pattern colouring of a rank selection: only the selected ranks' calls are in
    /// occurrences, and they are those of the patterns report of that selection.
    #[test]
    fn pattern_colouring_follows_the_selection() {
        let engine = sample_engine("npb-lu.S.8");
        let selection = Selection {
            ranks: Some(vec![2, 3, 4, 5]),
            ..Selection::default()
        };
        let report = engine
            .patterns(&selection, &crate::patterns::PatternOptions::default())
            .unwrap();
        let g = engine
            .timeline_groups(&GroupsRequest {
                colour: Colour::Pattern,
                source: GroupSource {
                    selection,
                    strength: 0.0,
                },
            })
            .unwrap();
        assert_eq!(g.names.len(), report.patterns.len());
        for r in 0..engine.trace().ranks.len() {
            let any = g.of_call[r].iter().any(|&x| x != NONE);
            assert_eq!(any, (2..6).contains(&r), "rank {r}");
        }
    }
}
