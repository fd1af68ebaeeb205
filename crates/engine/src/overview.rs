//! Overview first, detail on demand: the use cases of a trace larger than memory
//! (`docs/large-traces.md`).
//!
//! [`overview`] folds the ranks of a trace into an [`Overview`] as the reader builds them, one at
//! a time ([`tracelogic_formats::stream::stream_ranks`], [`OverviewBuilder`]), and identifies the
//! topology of its communication matrix as [`Engine::topology`] does. [`load_part`] then loads
//! only the ranks and the time window the user picked, in full, into an [`Engine`] whose
//! selections count time from the whole trace's first event, as on the whole trace.

use crate::{Engine, FieldWords};
use serde::{Deserialize, Serialize};
pub use tracelogic_analysis::overview::{Activity, Overview, OverviewBuilder, SketchPhase, DEFAULT_BINS, MAX_BINS};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_formats::stream::{
    read_ranks, stream_ranks, stream_ranks_part, FileSource, RankSink, StreamInfo, StreamPart,
};
use tracelogic_formats::{FormatError, ProgressSink};
use tracelogic_model::{Interner, Rank, RankTrace, Selection, Time, Trace};

/// An overview and the topology identified from its matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewReport {
    /// The streamed overview.
    #[serde(flatten)]
    pub overview: Overview,
    /// The topology of its communication matrix (default options).
    pub topology: TopologyReport,
    /// Bytes of the trace's files.
    pub input_bytes: u64,
    /// True when the ranks were read one at a time (OTF2); false when the format was read whole.
    pub streamed: bool,
}

/// The overview of the trace whose files `source` gives, in `bins` time bins, without holding
/// its event model (for OTF2; other formats are read whole first). `progress` may cancel.
pub fn overview(
    source: &mut dyn FileSource,
    bins: usize,
    progress: &mut dyn ProgressSink,
) -> Result<OverviewReport, FormatError> {
    let streamed = tracelogic_formats::stream::streams(source);
    let input_bytes = source.list().iter().map(|(_, s)| s).sum();
    let mut fold = FoldBlock::new(bins);
    let info = stream_ranks(source, progress, &mut fold)?;
    let builder = fold
        .builder
        .unwrap_or_else(|| OverviewBuilder::new(info.ranks, bins, info.span_hint));
    let overview = builder.finish(&info.format, &info.source, info.warnings);
    let topology = identify_matrix(&overview.matrix, &TopologyOptions::default());
    Ok(OverviewReport {
        overview,
        topology,
        input_bytes,
        streamed,
    })
}

/// What the serial [`overview`] of the trace of `source` takes from its reader besides the
/// ranks, given `trace`, the whole read of it (or a read by parts, which holds every rank's
/// span, definitions and warnings).
#[derive(Debug, Clone)]
pub struct PartsHead {
    /// The span the bins start from: OTF2's announced span, else the trace's span.
    pub span: Option<(Time, Time)>,
    /// The reader's warnings as the streamed read reports them.
    pub warnings: Vec<String>,
    /// Bytes of the trace's files.
    pub input_bytes: u64,
    /// True when [`overview`] streams the ranks.
    pub streamed: bool,
}

/// [`PartsHead`] of the trace of `source`, `trace` its whole read or read by parts.
pub fn parts_head(source: &mut dyn FileSource, trace: &Trace) -> Result<PartsHead, FormatError> {
    let streamed = tracelogic_formats::stream::streams(source);
    let input_bytes = source.list().iter().map(|(_, s)| s).sum();
    let announced = tracelogic_formats::stream::announced(source)?;
    Ok(PartsHead {
        span: if streamed { announced.span } else { Some(trace.span()) },
        warnings: announced.stream_warnings(trace.warnings.clone()),
        input_bytes,
        streamed,
    })
}

/// The overview report of the builders of consecutive blocks of ranks, in rank order
/// ([`OverviewBuilder::of_ranks`]): the serial [`overview`]'s report of the same trace (`trace`: its
/// definitions, `head`: [`parts_head`]).
pub fn overview_of_parts(
    parts: impl IntoIterator<Item = OverviewBuilder>,
    trace: &Trace,
    head: PartsHead,
) -> Result<OverviewReport, String> {
    let mut parts = parts.into_iter();
    let mut builder = parts.next().ok_or("no part")?;
    for p in parts {
        builder.merge(p)?;
    }
    let overview = builder.finish(&trace.format, &trace.source, head.warnings);
    let topology = identify_matrix(&overview.matrix, &TopologyOptions::default());
    Ok(OverviewReport {
        overview,
        topology,
        input_bytes: head.input_bytes,
        streamed: head.streamed,
    })
}

/// The overview of one block of ranks of an OTF2 trace, streamed one rank at a time, so that
/// processes or workers that each stream a block hold one rank's events at a time
/// ([`overview_part`], merged by [`overview_of_stream_parts`]).
#[derive(Debug)]
#[cfg_attr(feature = "distributed", derive(Serialize, Deserialize))]
pub struct OverviewPart {
    /// The block's builder (bins from OTF2's announced span).
    pub builder: OverviewBuilder,
    /// What the stream noticed besides the ranks (warnings, counters, the program line).
    pub stream: StreamPart,
    /// Format, source and header facts of the trace (the same in every part).
    pub format: String,
    /// Where the trace came from.
    pub source: String,
    /// Bytes of the trace's files.
    pub input_bytes: u64,
    /// True when the trace announced its span (OTF2's clock properties): only then do the
    /// parts' bins merge exactly ([`OverviewBuilder::merge`]).
    pub announced: bool,
}

/// The sink that folds the ranks it is given (one block's, or every rank for the serial
/// [`overview`]) into a builder.
struct FoldBlock {
    bins: usize,
    builder: Option<OverviewBuilder>,
    announced: bool,
}

impl FoldBlock {
    fn new(bins: usize) -> FoldBlock {
        FoldBlock {
            bins,
            builder: None,
            announced: false,
        }
    }
}

impl RankSink for FoldBlock {
    fn begin(&mut self, info: &StreamInfo) {
        self.announced = info.span_hint.is_some();
        self.builder = Some(OverviewBuilder::new(info.ranks, self.bins, info.span_hint));
    }
    fn rank(&mut self, rank: &RankTrace, functions: &Interner) {
        if let Some(b) = &mut self.builder {
            b.add_rank(rank, |f| functions.name(f));
        }
    }
}

/// The [`OverviewPart`] of the ranks `owned(ranks)` of the OTF2 trace of `source` (`ranks`: the
/// trace's rank count, known once its definitions are read), streamed one rank at a time:
/// memory is that of one rank's events and the builder's tables. An input that does not
/// stream ([`tracelogic_formats::stream::streams`]) is an error.
pub fn overview_part(
    source: &mut dyn FileSource,
    bins: usize,
    owned: &dyn Fn(u32) -> std::ops::Range<Rank>,
    progress: &mut dyn ProgressSink,
) -> Result<OverviewPart, FormatError> {
    let input_bytes = source.list().iter().map(|(_, s)| s).sum();
    let mut fold = FoldBlock::new(bins);
    let wanted = |ranks: u32, r: Rank| owned(ranks).contains(&r);
    let (info, stream) = stream_ranks_part(source, &wanted, progress, &mut fold)?;
    let builder = fold
        .builder
        .unwrap_or_else(|| OverviewBuilder::new(info.ranks, bins, info.span_hint));
    Ok(OverviewPart {
        builder,
        stream,
        format: info.format,
        source: info.source,
        input_bytes,
        announced: fold.announced,
    })
}

/// The overview report of the [`OverviewPart`]s of consecutive blocks of ranks, in rank order:
/// the serial [`overview`]'s report of the same trace when the trace announced its span (an
/// error otherwise, or when the parts are not of one trace).
pub fn overview_of_stream_parts(parts: impl IntoIterator<Item = OverviewPart>) -> Result<OverviewReport, String> {
    let mut parts = parts.into_iter();
    let first = parts.next().ok_or("no part")?;
    if !first.announced {
        return Err("the trace does not announce its span: its parts' time bins cannot be merged".into());
    }
    let (mut builder, mut stream) = (first.builder, first.stream);
    for p in parts {
        builder.merge(p.builder)?;
        stream.merge(p.stream);
    }
    let mut info = StreamInfo::default();
    stream.finish(&mut info);
    let overview = builder.finish(&first.format, &first.source, info.warnings);
    let topology = identify_matrix(&overview.matrix, &TopologyOptions::default());
    Ok(OverviewReport {
        overview,
        topology,
        input_bytes: first.input_bytes,
        streamed: true,
    })
}

/// An engine holding only the ranks `selection` names (all when it names none) of the trace
/// whose files `source` gives, narrowed to the rest of `selection` ([`Engine::narrowed`]); its
/// times count from the whole trace's first event. For OTF2 only those ranks' event files are
/// read in full. The second value is the note of an empty selection.
pub fn load_part(
    source: &mut dyn FileSource,
    selection: &Selection,
    words: FieldWords,
    progress: &mut dyn ProgressSink,
) -> Result<(Engine, Option<String>), crate::Error> {
    let ranks = selection.ranks.as_deref().unwrap_or(&[]);
    let (trace, start) = read_ranks(source, ranks, selection.ranks.is_none(), progress)
        .map_err(|e| crate::Error::Input(e.to_string()))?;
    Engine::narrowed_from(trace, start, selection, words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_files;
    use tracelogic_analysis::matrix::CommMatrix;
    use tracelogic_analysis::profile::ProfileOptions;
    use tracelogic_formats::stream::MemoryFiles;
    use tracelogic_formats::NoProgress;

    /// The samples the checks run on: OTF2 (streamed) and DUMPI (read whole).
    /// Every bundled sample and application trace, read as the CLI reads a folder.
    fn bundled() -> Vec<(String, Vec<tracelogic_formats::InputFile>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
        let mut out = Vec::new();
        for group in ["samples", "apps"] {
            let mut dirs: Vec<_> = std::fs::read_dir(root.join(group))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            dirs.sort();
            for dir in dirs {
                let files = tracelogic_formats::input::read_paths(std::slice::from_ref(&dir)).unwrap();
                if tracelogic_formats::read_trace(files.clone()).is_ok() {
                    out.push((dir.display().to_string(), files));
                }
            }
        }
        out
    }

    #[test]
    fn the_overview_gives_the_full_engines_counts_matrix_and_profile() {
        let all = bundled();
        assert!(all.len() >= 10, "{}", all.len());
        let mut streamed = 0;
        for (id, files) in all {
            let mut source = MemoryFiles::new(files.clone());
            let report = overview(&mut source, 64, &mut NoProgress).unwrap();
            let o = &report.overview;
            let engine = Engine::load(files, &mut NoProgress, FieldWords::Labels).unwrap();
            let s = engine.summary();
            assert_eq!(
                (o.ranks, o.calls, &o.calls_per_rank),
                (s.ranks, s.calls, &s.calls_per_rank),
                "{id}"
            );
            assert_eq!(o.calls_by_kind, s.calls_by_kind, "{id}");
            assert_eq!(
                (
                    o.p2p_bytes,
                    o.p2p_messages,
                    o.p2p_receives,
                    o.collective_ops,
                    o.collective_bytes
                ),
                (
                    s.p2p_bytes,
                    s.p2p_messages,
                    s.p2p_receives,
                    s.collective_ops,
                    s.collective_bytes
                ),
                "{id}"
            );
            assert_eq!((o.start_ns, o.end_ns), (s.start_ns, s.end_ns), "{id}");
            assert_eq!(
                o.matrix,
                CommMatrix::from_trace(engine.trace(), &Selection::all()),
                "{id}"
            );
            let p = engine.profile(&Selection::all(), &ProfileOptions::default()).unwrap();
            assert_eq!(o.functions, p.report.functions, "{id}");
            streamed += report.streamed as u32;
        }
        assert!(streamed >= 3, "{streamed}");
    }

    #[test]
    fn a_part_loads_the_ranks_and_window_the_whole_trace_selects() {
        let _ = sample_files;
        for (id, files) in bundled() {
            let engine = Engine::load(files.clone(), &mut NoProgress, FieldWords::Labels).unwrap();
            let (start, end) = engine.trace().span();
            let n = engine.trace().num_ranks();
            let selection = Selection {
                ranks: Some(vec![n - 1, 0]),
                from: Some((end - start) / 4),
                to: Some((end - start) / 2),
                ..Selection::default()
            };
            let mut source = MemoryFiles::new(files);
            let (part, _) = load_part(&mut source, &selection, FieldWords::Labels, &mut NoProgress).unwrap();
            assert_eq!(part.start(), engine.start(), "{id}");
            assert_eq!(
                part.trace().num_calls(),
                engine.selected_calls(&selection).unwrap(),
                "{id}"
            );
            let whole = engine.trace().restrict(&engine.absolute(&selection).unwrap());
            for r in 0..n as usize {
                assert_eq!(
                    part.trace().ranks[r].calls.enter,
                    whole.ranks[r].calls.enter,
                    "{id} rank {r}"
                );
                assert_eq!(part.trace().ranks[r].p2p.peer, whole.ranks[r].p2p.peer, "{id} rank {r}");
            }
        }
    }
}
