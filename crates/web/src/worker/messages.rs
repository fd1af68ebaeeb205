//! What the page sends the worker: the files of a load or comparison ([`FileSource`]), the
//! worker's inputs ([`Input`]) and how a load reads its input ([`OpenOptions`], [`Plan`]).

use crate::protocol::{AnalysisRequest, MatrixRequest, Request};
use crate::session::MAX_INPUT_BYTES;
use serde::{Deserialize, Serialize};
use tracelogic_model::Selection;

/// Where the files of a load or comparison come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileSource {
    /// `File` objects the page handed over with the message under `key` ([`HandleCodec`](super::HandleCodec)),
    /// with the relative name of each, in the same order.
    Handles {
        /// Key of the handle set (the page's load generation).
        key: u64,
        /// Relative names (`npb-lu.S.8/dumpi-0000.bin`).
        names: Vec<String>,
    },
    /// Files to fetch: relative name and absolute URL (a bundled sample).
    Urls(Vec<(String, String)>),
}

impl FileSource {
    /// Number of files.
    pub fn len(&self) -> usize {
        match self {
            FileSource::Handles { names, .. } => names.len(),
            FileSource::Urls(u) => u.len(),
        }
    }

    /// True when there is no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the page sends to the worker: the shared [`Request`]s, plus loads and comparisons whose
/// files the worker reads itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Input {
    /// A request of the shared protocol.
    Request(Request),
    /// Read these files as one trace (like [`Request::Load`], but read by the worker).
    Open {
        /// What the user loaded, for display.
        label: String,
        /// The files.
        source: FileSource,
        /// The matrix to compute once the trace is read.
        matrix: MatrixRequest,
        /// Whole trace, overview or part.
        options: OpenOptions,
    },
    /// A helper of an overview pool ([`crate::overview_pool`]): the overview part of block
    /// `part` of `parts` of the ranks of the OTF2 trace `source` gives.
    OverviewPart {
        /// The trace's files (the page's handles, passed on by the page's worker).
        source: FileSource,
        /// This helper's block.
        part: u32,
        /// Number of blocks.
        parts: u32,
    },
    /// A helper of a pooled load ([`crate::load_pool`]): block `part` of `parts` of the ranks of
    /// the DUMPI or OTF2 trace `source` gives, decoded.
    LoadBlock {
        /// The trace's files (the page's handles, passed on by the page's worker).
        source: FileSource,
        /// This helper's block.
        part: u32,
        /// Number of blocks.
        parts: u32,
    },
    /// A helper of a pooled what-if ([`crate::whatif_pool`]): replay these configurations
    /// (answered [`Response::ReplayReady`]).
    ReplayShare {
        /// The helper's share of the configurations, in order.
        configs: Vec<tracelogic_analysis::replay::Configuration>,
    },
    /// A helper of a pooled what-if: execute the chunk of encoded instructions posted beside
    /// this message ([`offer_chunk`]) over `ranks` ranks.
    ReplayChunk {
        /// Ranks replayed.
        ranks: u32,
    },
    /// A helper of a pooled what-if: every chunk was sent; answer the final clocks
    /// ([`Response::ReplayState`]).
    ReplayEnd {
        /// Ranks replayed.
        ranks: u32,
    },
    /// Compare the loaded trace with these files: `request` is an [`AnalysisRequest::Compare`]
    /// whose `files` the worker fills from `source`.
    Compare {
        /// Sequence number echoed in the answer.
        seq: u64,
        /// The further trace's files.
        source: FileSource,
        /// The comparison, without its files.
        request: AnalysisRequest,
    },
}

/// How a load reads its input (`docs/large-traces.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenOptions {
    /// Most input bytes loaded whole; an OTF2 folder over it gets its overview instead, and any
    /// other input is refused as too large. [`MAX_INPUT_BYTES`] unless the page was given another
    /// (`crate::app::full_load_limit`, for tests).
    pub full_load_limit: u64,
    /// Compute the overview whatever the input's size.
    pub overview: bool,
    /// Load only this part (ranks and time window, times from the whole trace's first event):
    /// of an OTF2 folder only those ranks' event files are read
    /// (`tracelogic_engine::overview::load_part`).
    pub part: Option<Selection>,
    /// Workers that compute the overview of an OTF2 folder, one block of ranks each; 0: as
    /// many as the machine has logical cores ([`crate::overview_pool::pool_size`]).
    pub workers: u32,
    /// Workers that read a whole load of DUMPI or OTF2 plain files, one block of ranks each
    /// ([`crate::load_pool`]); 0: as many as the machine has logical cores; 1: the load's
    /// worker reads alone.
    #[serde(default)]
    pub load_workers: u32,
    /// Workers that execute the what-if's configurations, one share each
    /// ([`crate::whatif_pool`]); 0: as many as the machine has logical cores; 1 (the default):
    /// the page's worker replays alone.
    #[serde(default = "alone")]
    pub whatif_workers: u32,
}

/// One worker: the page's worker works alone.
fn alone() -> u32 {
    1
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            full_load_limit: MAX_INPUT_BYTES,
            overview: false,
            part: None,
            workers: 0,
            load_workers: 0,
            whatif_workers: 1,
        }
    }
}

/// What a load does with its input of `total` bytes, `streams` telling whether it is an OTF2
/// folder the readers take one rank at a time.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Read every file and load the trace whole.
    Whole,
    /// Compute the overview, one rank at a time.
    Overview,
    /// Load the part the selection keeps.
    Part(Selection),
    /// Refuse: the input is over the limit and cannot be streamed.
    TooLarge(String),
}

impl OpenOptions {
    /// The plan for the input `label` of `total` bytes.
    pub fn plan(&self, label: &str, total: u64, streams: bool) -> Plan {
        let limit = self.full_load_limit.min(MAX_INPUT_BYTES);
        let refuse = |what: &str| {
            let message = crate::session::too_large(label, total.max(limit + 1), limit, "").unwrap_or_default();
            Plan::TooLarge(format!("{message}{what}"))
        };
        match (&self.part, self.overview) {
            (Some(part), _) if streams => Plan::Part(part.clone()),
            (Some(_), _) if total > limit => refuse("; only an OTF2 folder's ranks can be loaded a part at a time"),
            (Some(part), _) => Plan::Part(part.clone()),
            (None, true) if streams || total <= limit => Plan::Overview,
            (None, _) if total <= limit => Plan::Whole,
            (None, _) if streams => Plan::Overview,
            (None, _) => refuse(
                ". The page shows the overview of a larger trace, and loads the ranks and time window \
                 picked from it, only for an OTF2 folder of plain files (not an archive)",
            ),
        }
    }
}
