//! The timeline of the whole trace held: per lane and pixel column the dominant MPI function
//! and busy share, the calls at least a column wide, messages and collectives of a window, in
//! time or in logical steps (`tracelogic timeline`, the page's timeline view; docs/timeline.md).

use crate::phases::PhaseOptions;
use crate::{Engine, Error, Result};
use tracelogic_analysis::patterns::construct::OUTSIDE;
pub use tracelogic_analysis::timeline::{
    Clock, Colour, Groups, Lane, TileCall, TileCollective, TileMessage, TimelineIndex, TimelineQuery, TimelineTile,
    NONE,
};
use tracelogic_model::Selection;

impl Engine {
    /// The tile `query` asks for, on the whole trace held (the timeline's window is its own,
    /// not a selection). The index is built on the first call (O(calls + messages)) and kept;
    /// the logical steps on the first query in logical time.
    ///
    /// With a pattern or phase colouring, each call's pattern or phase comes from the same
    /// analyses as [`Engine::patterns`] and [`Engine::phases`] of the whole trace with their
    /// default options (found once and kept; [`Engine::timeline_groups`]).
    pub fn timeline(&self, query: &TimelineQuery) -> Result<TimelineTile> {
        let needs_groups = query.colour != Colour::Function
            && !self
                .kept
                .timeline
                .borrow()
                .as_ref()
                .is_some_and(|i| i.has_groups(query.colour));
        // Found before the index is borrowed: the phases use the engine's other kept analyses.
        let groups = if needs_groups {
            Some(self.timeline_groups(query.colour)?)
        } else {
            None
        };
        let mut kept = self.kept.timeline.borrow_mut();
        let index = kept.get_or_insert_with(|| TimelineIndex::build(self.trace(), self.matching()));
        if query.clock == Clock::Logical {
            index.ensure_logical(self.trace(), self.matching());
        }
        if let Some(g) = groups {
            index.set_groups(self.trace(), query.colour, g).map_err(Error::Input)?;
        }
        tracelogic_analysis::timeline::timeline(self.trace(), self.matching(), index, query).map_err(Error::Input)
    }

    /// What each call of the whole trace belongs to for `colour`:
    /// - [`Colour::Pattern`]: the communication pattern of the occurrence whose events it
    ///   posted or lies between on its rank (from the part's first to its last event's call,
    ///   so a wait inside an occurrence belongs to it), named `Pattern #id` as the patterns view
    ///   names them; calls outside every occurrence have none.
    /// - [`Colour::Phase`]: the phase (`phases`, default options) whose start on the call's
    ///   rank (the call of its first event there, `ranks[].first_event` of `phases --json`)
    ///   is the latest at or before the call; calls before the first phase have none. Named
    ///   `phase k` as the phases view names them.
    pub fn timeline_groups(&self, colour: Colour) -> Result<Groups> {
        let trace = self.trace();
        let blank = || -> Vec<Vec<u32>> { trace.ranks.iter().map(|rt| vec![NONE; rt.calls.len()]).collect() };
        match colour {
            Colour::Function => Err(Error::Input("the function colouring needs no groups".into())),
            Colour::Pattern => {
                let scope = self.scope(&Selection::all())?;
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
                        let calls = &kept.events.ranks[part.rank as usize].calls;
                        let (Some(&c0), Some(&c1)) = (
                            calls.get(part.first_event as usize),
                            calls.get(part.last_event as usize),
                        ) else {
                            continue;
                        };
                        for c in c0..=c1 {
                            of_call[part.rank as usize][c as usize] = inst.pattern;
                            occurrence[part.rank as usize][c as usize] = occ;
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
                let report = self.phases_with(&Selection::all(), &PhaseOptions::default())?;
                let scope = self.scope(&Selection::all())?;
                let kept = self.patterns_kept(&scope);
                // Per rank: (first call, phase), then each call takes the latest start at or before it.
                let mut starts: Vec<Vec<(u32, u32)>> = vec![Vec::new(); trace.ranks.len()];
                for (k, ph) in report.analysis.phases.iter().enumerate() {
                    for span in &ph.ranks {
                        if let Some(&c) = kept.events.ranks[span.rank as usize]
                            .calls
                            .get(span.first_event as usize)
                        {
                            starts[span.rank as usize].push((c, k as u32));
                        }
                    }
                }
                let mut of_call = blank();
                for (r, st) in starts.iter_mut().enumerate() {
                    st.sort_unstable();
                    for (j, &(c, k)) in st.iter().enumerate() {
                        let end = st.get(j + 1).map_or(of_call[r].len(), |n| n.0 as usize);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;

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
        let groups = engine.timeline_groups(Colour::Phase).unwrap();
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
                    .take_while(|s| s.0 <= calls.enter[i])
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
        assert!(engine.timeline_groups(Colour::Function).is_err());
    }
}
