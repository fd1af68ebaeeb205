//! The timeline: every rank's MPI calls over time (or over logical steps), messages from send to
//! receive, collectives, at any zoom from the whole run down to single calls.
//!
//! [`TimelineIndex::build`] prepares a trace once in O(calls + messages): per rank, a pyramid
//! of time bins (level 0 about four calls a bin, each level above half as many bins; a bin keeps
//! its busy share, its dominant function and that function's share, and its longest call),
//! each point-to-point operation's message, the receives in order of completion and the
//! collective instances. [`timeline`] then answers a [`TimelineQuery`] (a window, the ranks in
//! the order drawn, a number of pixel columns and of lanes) with a [`TimelineTile`]: per lane
//! and pixel column the function covering most of the column and the busy share, plus the
//! calls at least one column wide, the messages sent or received in the window and the
//! collectives overlapping it.
//!
//! Level of detail: when a column is at least two level-0 bins wide, a column is aggregated
//! from the coarsest level whose bins are at most half a column wide (bins straddling a column
//! edge count in proportion to their overlap), so the query costs O(lanes × columns) whatever
//! the window holds; otherwise it is aggregated exactly from the calls in the window (at most
//! about eight calls per column per rank). [`TimelineTile::resolution`] says which was used.
//! From bins, the dominant function of a column is the function with the largest sum of its
//! bins' dominant shares (exact when one function covers more than two thirds of every bin it
//! shares); the busy share is exact up to the two edge bins.
//!
//! Logical time ([`Clock::Logical`]) places call `i` at `[step − 1, step)` where the steps
//! come from [`steps::logical_steps`] (Ravel's happens-before steps: a call follows the previous
//! call of its rank and the sends it receives; collectives align across participants).
//!
//! Layout: this file holds the query and tile types; [`index`] builds the index, [`pyramid`]
//! its bins, [`steps`] the logical clock, [`tile`] answers a query (columns, level of detail,
//! wide calls) and [`events`] lists a tile's messages and collectives.

mod events;
mod index;
mod pyramid;
pub mod steps;
mod tile;

use pyramid::{Pyramid, DUR_STEPS, MAX_BIN_FUNC, NO_BIN_FUNC, SHARE};
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use std::collections::HashMap;
use tracelogic_model::{CallKind, Matching, P2pDir, Rank, Selection, Time, Trace, NOT_COMPLETED, NO_ROOT};

use events::*;
pub use index::TimelineIndex;
use index::*;
pub use steps::{logical_steps, Steps};
pub use tile::timeline;
use tile::*;

/// Schema tag of the JSON form of [`TimelineTile`].
pub const SCHEMA: &str = "tracelogic-timeline/1";
/// "No function" in [`TimelineTile::func`] and "no peer" in [`TileCall::peer`].
pub const NONE: u32 = u32::MAX;
/// Default caps of a query.
pub const DEFAULT_MAX_CALLS: u32 = 20_000;
/// Default cap on messages in a tile.
pub const DEFAULT_MAX_MESSAGES: u32 = 5_000;
/// Default cap on collectives in a tile.
pub const DEFAULT_MAX_COLLECTIVES: u32 = 2_000;
/// Most pixel columns a query may ask for.
pub const MAX_PIXELS: u32 = 16_384;

/// Which clock the timeline runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Nanoseconds since the trace's first event.
    #[default]
    Time,
    /// Logical steps (call `i` occupies `[step − 1, step)`).
    Logical,
}

/// What the columns' colour stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    /// The MPI function ([`TimelineTile::func`] only).
    #[default]
    Function,
    /// The communication pattern whose occurrence the call belongs to ([`TimelineTile::group`]).
    Pattern,
    /// The execution phase the call belongs to ([`TimelineTile::group`]).
    Phase,
}

impl Colour {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Colour::Function => "function",
            Colour::Pattern => "pattern",
            Colour::Phase => "phase",
        }
    }
}

/// What each call belongs to for a [`Colour`] other than the function: given by the caller
/// (the engine finds patterns and phases), kept in the index with its pyramids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    /// Name of each group id (`Pattern #0`, `phase 2`).
    pub names: Vec<String>,
    /// Per rank, per call: the group id, or [`NONE`].
    pub of_call: Vec<Vec<u32>>,
    /// Per rank, per call: the occurrence of the group the call is in (a pattern's n-th
    /// occurrence), or [`NONE`]; empty when groups have no occurrences.
    pub occurrence: Vec<Vec<u32>>,
}

/// A [`Groups`] with its pyramids (bins keep the dominant group instead of the function).
#[derive(Debug, Clone)]
struct GroupIndex {
    groups: Groups,
    /// What they were found on.
    source: GroupSource,
    time: Vec<Pyramid>,
    logical: Option<Vec<Pyramid>>,
}

/// What a pattern or phase colouring is found on: the same answer the Patterns and Phases
/// views show (`tracelogic patterns` / `tracelogic phases` with these flags). The timeline
/// itself ignores it; the engine finds the groups from it (`Engine::timeline_groups`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSource {
    /// The part of the trace analysed (the page's selection; times since the trace's first
    /// event). Calls outside it belong to no group.
    #[serde(default)]
    pub selection: Selection,
    /// The phases' segmentation strength `s0` (the Phases view's slider, `phases --strength`).
    #[serde(default)]
    pub strength: f64,
}

/// What to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineQuery {
    /// Clock of `from` / `to` and of every time in the answer.
    #[serde(default)]
    pub clock: Clock,
    /// What the colour of a column stands for (the function is always in the tile; a pattern
    /// or phase colouring adds [`TimelineTile::group`]).
    #[serde(default)]
    pub colour: Colour,
    /// With a pattern or phase colouring: the selection and strength they are found with.
    #[serde(default)]
    pub source: GroupSource,
    /// Window start (ns since the trace's first event, or steps).
    #[serde(default)]
    pub from: u64,
    /// Window end, exclusive; `None` (or not after `from`) is the end of the run.
    #[serde(default)]
    pub to: Option<u64>,
    /// Ranks in drawing order (empty: all, by number).
    #[serde(default)]
    pub ranks: Vec<Rank>,
    /// Pixel columns.
    pub pixels: u32,
    /// Most lanes: with more ranks than this, consecutive ranks share a lane (0: one lane per rank).
    #[serde(default)]
    pub rows: u32,
    /// Most calls listed one by one.
    #[serde(default = "default_calls")]
    pub max_calls: u32,
    /// Most messages listed.
    #[serde(default = "default_messages")]
    pub max_messages: u32,
    /// Most collectives listed.
    #[serde(default = "default_collectives")]
    pub max_collectives: u32,
}

fn default_calls() -> u32 {
    DEFAULT_MAX_CALLS
}
fn default_messages() -> u32 {
    DEFAULT_MAX_MESSAGES
}
fn default_collectives() -> u32 {
    DEFAULT_MAX_COLLECTIVES
}

impl TimelineQuery {
    /// The whole run on `pixels` columns, every rank its own lane, default caps.
    pub fn whole(clock: Clock, pixels: u32) -> TimelineQuery {
        TimelineQuery {
            clock,
            colour: Colour::Function,
            source: GroupSource::default(),
            from: 0,
            to: None,
            ranks: Vec::new(),
            pixels,
            rows: 0,
            max_calls: DEFAULT_MAX_CALLS,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_collectives: DEFAULT_MAX_COLLECTIVES,
        }
    }
}

/// One call drawn on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileCall {
    /// World rank.
    pub rank: Rank,
    /// Index of the call in its rank.
    pub index: u32,
    /// Function id (index into [`TimelineTile::functions`]).
    pub func: u32,
    /// Begin (clock of the query).
    pub begin: u64,
    /// End.
    pub end: u64,
    /// Begin and end in ns since the trace's first event (equal to `begin`/`end` in time mode).
    pub time: (u64, u64),
    /// Bytes of the point-to-point operations the call posts, or of its collective (sent + received).
    pub bytes: u64,
    /// Partner of the first point-to-point operation posted ([`NONE`] when none), or the root
    /// of a rooted collective.
    pub peer: u32,
    /// With a pattern or phase colouring: the pattern or phase of the call ([`NONE`] when none
    /// or with the function colouring).
    #[serde(default = "none")]
    pub group: u32,
    /// With the pattern colouring: which occurrence of its pattern the call is in (0-based, in
    /// order of start as `patterns --json` lists `spans`), else [`NONE`].
    #[serde(default = "none")]
    pub occurrence: u32,
}

fn none() -> u32 {
    NONE
}

/// One message: from the begin of the call posting the send to the end of the call completing
/// the receive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileMessage {
    /// Sending rank.
    pub sender: Rank,
    /// Receiving rank.
    pub receiver: Rank,
    /// Send time (clock of the query).
    pub send: u64,
    /// Receive time.
    pub recv: u64,
    /// Bytes sent.
    pub bytes: u64,
    /// Tag.
    pub tag: i32,
    /// Begin of the call posting the send and end of the call completing the receive, in ns
    /// since the trace's first event (equal to `send`/`recv` in time mode).
    #[serde(default)]
    pub time: (u64, u64),
    /// Late-sender wait of the receive's completing call for this message (ns, 0 when none;
    /// docs/waits.md).
    #[serde(default)]
    pub late_sender: u64,
    /// Late-receiver wait of the send's blocking call for this message (ns, 0 when none).
    #[serde(default)]
    pub late_receiver: u64,
}

/// One collective instance (the n-th collective call of a communicator on each member).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileCollective {
    /// Function id of the first participant's call.
    pub func: u32,
    /// Communicator id.
    pub comm: u32,
    /// Earliest begin over the participants.
    pub begin: u64,
    /// Latest end.
    pub end: u64,
    /// Number of participating ranks.
    pub participants: u32,
    /// Root, or [`NONE`].
    pub root: u32,
}

/// One lane: a rank, or consecutive ranks of the drawing order when there are more ranks than rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// The ranks, in drawing order.
    pub ranks: Vec<Rank>,
}

/// The answer to a [`TimelineQuery`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineTile {
    /// [`SCHEMA`].
    pub schema: String,
    /// Clock of every time below.
    pub clock: Clock,
    /// Window start.
    pub from: u64,
    /// Window end (exclusive).
    pub to: u64,
    /// Length of the run in this clock (ns, or the largest step).
    pub extent: u64,
    /// Pixel columns; column `k` covers `[from + ⌊k·(to−from)/pixels⌋, from + ⌊(k+1)·(to−from)/pixels⌋)`.
    pub pixels: u32,
    /// Lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// Function names by id.
    pub functions: Vec<String>,
    /// Per lane then column (`lane · pixels + column`): the function covering most of the
    /// column, summed over the lane's ranks ([`NONE`] for an idle column).
    pub func: Vec<u32>,
    /// Per lane then column: share of the column covered by calls, averaged over the lane's ranks.
    pub busy: Vec<f32>,
    /// What [`TimelineTile::group`] stands for ([`Colour::Function`]: it is empty).
    #[serde(default)]
    pub colour: Colour,
    /// Per lane then column, with a pattern or phase colouring: the pattern or phase covering
    /// most of the column ([`NONE`]: idle, or calls in none), aggregated as `func` is.
    #[serde(default)]
    pub group: Vec<u32>,
    /// Names of the group ids (`Pattern #3`, `phase 1`), as the patterns and phases views name them.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Width of the bins the columns were aggregated from (clock units; 0: exactly from the calls).
    pub resolution: u64,
    /// Calls at least one column wide in the window, by rank then begin.
    pub calls: Vec<TileCall>,
    /// Such calls beyond `max_calls`.
    pub calls_left_out: u64,
    /// Messages between drawn ranks sent or received in the window (evenly sampled beyond the cap).
    pub messages: Vec<TileMessage>,
    /// Such messages not listed.
    pub messages_left_out: u64,
    /// Collective instances overlapping the window with a drawn participant.
    pub collectives: Vec<TileCollective>,
    /// Such instances not listed.
    pub collectives_left_out: u64,
}
