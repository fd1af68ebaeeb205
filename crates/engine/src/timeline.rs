//! The timeline of the whole trace held: per lane and pixel column the dominant MPI function
//! and busy share, the calls at least a column wide, messages and collectives of a window, in
//! time or in logical steps (`tracelogic timeline`, the page's timeline view; docs/timeline.md).

use crate::{Engine, Error, Result};
pub use tracelogic_analysis::timeline::{
    Clock, Lane, TileCall, TileCollective, TileMessage, TimelineIndex, TimelineQuery, TimelineTile, NONE,
};

impl Engine {
    /// The tile `query` asks for, on the whole trace held (the timeline's window is its own,
    /// not a selection). The index is built on the first call (O(calls + messages)) and kept;
    /// the logical steps on the first query in logical time.
    pub fn timeline(&self, query: &TimelineQuery) -> Result<TimelineTile> {
        let mut kept = self.kept.timeline.borrow_mut();
        let index = kept.get_or_insert_with(|| TimelineIndex::build(self.trace(), self.matching()));
        if query.clock == Clock::Logical {
            index.ensure_logical(self.trace(), self.matching());
        }
        tracelogic_analysis::timeline::timeline(self.trace(), self.matching(), index, query).map_err(Error::Input)
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
}
