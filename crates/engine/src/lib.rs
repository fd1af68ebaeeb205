//! The tracelogic engine: one loaded trace, what has been derived from it (message matching,
//! the identified topology, the pattern analysis — each computed once and kept), and one typed
//! function per use case. The CLI (the root package, `src/`) and the web worker (`crates/web`) are shells
//! around it: they turn arguments or page requests into a call, and print or draw the report
//! the call returns, so both run exactly the same code (the shape of Perfetto's trace
//! processor, which its wasm UI and its shell drive through one interface).
//!
//! | use case | function | report |
//! |---|---|---|
//! | what is in the trace | [`Engine::summary`] | [`summary::Summary`] |
//! | matrix | [`Engine::matrix`] | [`matrix::MatrixReport`] |
//! | query | [`Engine::query`] | [`query::QueryReport`] |
//! | topology | [`Engine::topology`] (and [`topology::of_graph`], [`topology::of_matrix`]) | [`topology::TopologyReport`], [`topology::verdict`] |
//! | logical trace | [`Engine::logical`], [`Engine::rank_program`], [`Engine::expansion`] | [`logical::LogicalReport`], [`logical::RankProgram`], [`logical::Expansion`] |
//! | C skeleton | [`Engine::skeleton`] | [`logical::SkeletonReport`] |
//! | patterns | [`Engine::patterns`] | [`patterns::PatternsReport`] |
//! | pattern search | [`Engine::pattern_search`] | [`patterns::SearchReport`] |
//! | phases | [`Engine::phases`] | [`phases::PhasesReport`] |
//! | what-if replay | [`Engine::replay`] | [`replay::ReplayReport`] |
//! | similarity | [`Engine::run_properties`], [`compare::compare`], [`Engine::compare_with_runs`] | [`compare::SimilarityMatrix`], [`compare::RunsReport`] |
//! | convert | [`Engine::convert`] | [`convert::Converted`] |
//! | time profile | [`Engine::profile`] | [`profile::Profile`] |
//! | wait states | [`Engine::waits`] | [`waits::WaitsReport`] |
//! | critical path | [`Engine::critical_path`] | [`critical_path::CriticalPathReport`] |
//! | timeline | [`Engine::timeline`] | [`timeline::TimelineTile`] |
//!
//! What `--json` prints (and the Python and JavaScript packages return) is the report itself or,
//! where the CLI's document differs from it, the function of [`documents`] for it.
//!
//! Adding an analysis is one `impl Engine` function in its own module, one report type
//! (`Serialize + Deserialize`, carrying every text both shells show), one printer in the CLI
//! and one request variant in the worker's protocol.
//!
//! **Selections.** Every function takes a [`Selection`] whose times are relative to the trace's
//! first event (the CLI's `--from` / `--to`, the page's filters), checked against the trace
//! ([`Selection::check`]) with the words of the shell ([`FieldWords`]). The engine restricts
//! the trace to it ([`Trace::restrict`]) and keeps the restricted copy for the next call of the
//! same selection. A one-shot shell that needs one selection only can hold just the restricted
//! trace ([`Engine::narrowed`]).
//!
//! Nothing here needs threads or a file system: it builds for `wasm32-unknown-unknown`. Traces
//! come from bytes ([`Engine::load`]); reading paths stays in the CLI.

pub mod compare;
pub mod convert;
pub mod critical_path;
pub mod documents;
pub mod logical;
pub mod matrix;
pub mod overview;
pub mod patterns;
pub mod phases;
pub mod profile;
pub mod query;
pub mod rank_order;
pub mod replay;
pub mod summary;
pub mod timeline;
pub mod topology;
pub mod waits;

use serde::{Deserialize, Serialize};
use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::rc::Rc;
pub use tracelogic_analysis::progress;
use tracelogic_formats::{read_trace_with_progress, FormatError, InputFile, ProgressSink};
pub use tracelogic_model::query::FieldWords;
use tracelogic_model::{match_messages, CommId, Matching, Selection, Sourced, Time, Trace};

/// Why a use case has no report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Error {
    /// Bad input: a selection the trace cannot take, a broken pattern, an impossible option.
    Input(String),
    /// The analysis ran and found nothing to report (no topology to express a logical trace in).
    NothingFound(String),
}

impl Error {
    /// The message to show.
    pub fn message(&self) -> &str {
        match self {
            Error::Input(m) | Error::NothingFound(m) => m,
        }
    }

    /// The same error with `prefix: ` before its message.
    pub fn prefixed(self, prefix: &str) -> Error {
        match self {
            Error::Input(m) => Error::Input(format!("{prefix}: {m}")),
            Error::NothingFound(m) => Error::NothingFound(format!("{prefix}: {m}")),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(e: Error) -> String {
        match e {
            Error::Input(m) | Error::NothingFound(m) => m,
        }
    }
}

/// Result of a use case.
pub type Result<T> = std::result::Result<T, Error>;

/// A trace restricted to a selection, with its own matching.
#[derive(Debug)]
struct Restricted {
    trace: Trace,
    matching: OnceCell<Matching>,
    /// The whole trace's matching and collective numbering projected on it (see
    /// [`Scope::pairing`]).
    pairing: OnceCell<(Matching, Vec<Vec<u32>>)>,
}

/// A loaded trace and what has been derived from it.
#[derive(Debug)]
pub struct Engine {
    trace: Trace,
    /// First timestamp of the trace as loaded (also after [`Engine::narrowed`]): times of
    /// selections and of the reports count from it.
    start: Time,
    /// Run length as loaded, for the selection checks.
    length: Time,
    /// Ranks as loaded.
    ranks: u32,
    /// The selection `trace` was narrowed to (absolute times), `Selection::all()` when none.
    applied: Selection,
    /// How selection errors name the fields.
    words: FieldWords,
    matching: OnceCell<Matching>,
    /// The trace restricted to the last selection asked for (absolute times): the use cases of
    /// one selection share one copy, and at most one is held.
    restricted: RefCell<Option<(Selection, Rc<Restricted>)>>,
    /// The derived values of the use cases (identified topology, pattern analysis), each
    /// kept for the selection and options it was computed with.
    pub(crate) kept: Kept,
}

/// What the use cases keep between calls, one slot each (see [`Engine`]).
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub(crate) identified: RefCell<
        Option<(
            topology::IdentifiedKey,
            Rc<tracelogic_analysis::topology::TopologyReport>,
        )>,
    >,
    pub(crate) patterns: RefCell<Option<(patterns::PatternsKey, Rc<patterns::PatternsKept>)>>,
    pub(crate) pattern_analyses: std::cell::Cell<u64>,
    pub(crate) timeline: RefCell<Option<tracelogic_analysis::timeline::TimelineIndex>>,
}

/// The trace a use case runs on: the engine's own, or a restricted copy.
pub(crate) struct Scope<'a> {
    engine: &'a Engine,
    restricted: Option<Rc<Restricted>>,
    /// The selection applied, times absolute (what JSON reports print as `selection`).
    pub(crate) selection: Selection,
}

impl Scope<'_> {
    /// The trace to analyse.
    pub(crate) fn trace(&self) -> &Trace {
        match &self.restricted {
            Some(r) => &r.trace,
            None => &self.engine.trace,
        }
    }

    /// Its messages matched (computed once per trace).
    pub(crate) fn matching(&self) -> &Matching {
        match &self.restricted {
            Some(r) => r.matching.get_or_init(|| matched(&r.trace)),
            None => self.engine.matching(),
        }
    }

    /// Its trace with the receives from `MPI_ANY_SOURCE` the trace left unresolved naming the
    /// sender [`Scope::matching`] pairs them with (what the logical trace rewrites and verifies;
    /// the matching is asked for only when there is such a receive).
    pub(crate) fn sourced(&self) -> Sourced<'_> {
        Sourced::new(self.trace(), || self.matching())
    }

    /// The messages and collective instances as the whole trace recorded them, projected on the
    /// restricted trace ([`Trace::restrict_matching`], [`Trace::restrict_collective_sequence`]):
    /// what the wait states and the critical path of a window measure. Matching the window again
    /// ([`Scope::matching`]) pairs a receive whose send was cut off with the sender's next send.
    pub(crate) fn pairing(&self) -> (&Matching, Option<&[Vec<u32>]>) {
        match &self.restricted {
            Some(r) => {
                let (m, seq) = r.pairing.get_or_init(|| {
                    let whole = &self.engine.trace;
                    (
                        whole.restrict_matching(self.engine.matching(), &self.selection),
                        whole.restrict_collective_sequence(&self.selection),
                    )
                });
                (m, Some(seq.as_slice()))
            }
            None => (self.engine.matching(), None),
        }
    }

    /// True when it is the engine's own trace (no restriction beyond [`Engine::narrowed`]).
    pub(crate) fn is_whole(&self) -> bool {
        self.restricted.is_none()
    }
}

impl Engine {
    /// An engine holding `trace`, whose selection errors name fields as `words` says.
    pub fn new(trace: Trace, words: FieldWords) -> Engine {
        let (start, end) = trace.span();
        Engine {
            start,
            length: end.saturating_sub(start),
            ranks: trace.num_ranks(),
            trace,
            applied: Selection::all(),
            words,
            matching: OnceCell::new(),
            restricted: RefCell::new(None),
            kept: Kept::default(),
        }
    }

    /// Read `files` (any format tracelogic reads, archives unpacked) as one trace. `progress`
    /// sees the reader's stages and may cancel.
    pub fn load(
        files: Vec<InputFile>,
        progress: &mut dyn ProgressSink,
        words: FieldWords,
    ) -> std::result::Result<Engine, FormatError> {
        Ok(Engine::new(read_trace_with_progress(files, progress)?, words))
    }

    /// An engine holding only the part of `trace` that `selection` (times relative to its first
    /// event) keeps, as a one-shot shell wants it: one copy of the trace in memory. Calls with
    /// `Selection::all()` then analyse that part and report `selection` (absolute). The second
    /// value is the note to show when the selection keeps no call (the analyses still answer,
    /// on the empty trace).
    pub fn narrowed(trace: Trace, selection: &Selection, words: FieldWords) -> Result<(Engine, Option<String>)> {
        let mut engine = Engine::new(trace, words);
        let absolute = engine.absolute(selection)?;
        if absolute == Selection::all() {
            return Ok((engine, None));
        }
        let past_the_end = engine.past_the_end(selection);
        let trace = std::mem::replace(&mut engine.trace, Trace::new("", "", 0)).into_restricted(&absolute);
        let note = (trace.num_calls() == 0).then(|| {
            let why = past_the_end.map(|w| format!(" ({w})")).unwrap_or_default();
            format!("the selection keeps no MPI call of {}{why}", trace.source)
        });
        engine.trace = trace;
        engine.applied = absolute;
        Ok((engine, note))
    }

    /// [`Engine::narrowed`] for a trace of which only part was read ([`overview::load_part`]):
    /// times of `selection` count from `start`, the whole trace's first event.
    pub fn narrowed_from(
        trace: Trace,
        start: Time,
        selection: &Selection,
        words: FieldWords,
    ) -> Result<(Engine, Option<String>)> {
        let mut engine = Engine::new(trace, words);
        let end = engine.start.saturating_add(engine.length);
        engine.start = start;
        engine.length = end.saturating_sub(start);
        let absolute = engine.absolute(selection)?;
        if absolute == Selection::all() {
            return Ok((engine, None));
        }
        let trace = std::mem::replace(&mut engine.trace, Trace::new("", "", 0)).into_restricted(&absolute);
        let note = (trace.num_calls() == 0).then(|| format!("the selection keeps no MPI call of {}", trace.source));
        engine.trace = trace;
        engine.applied = absolute;
        Ok((engine, note))
    }

    /// The trace held (after [`Engine::narrowed`], the part kept).
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The trace held, given back (what was derived from it is dropped).
    pub fn into_trace(self) -> Trace {
        self.trace
    }

    /// First timestamp of the trace as loaded (ns): selections and reported times count from it.
    pub fn start(&self) -> Time {
        self.start
    }

    /// The trace's messages matched (computed on first use, then kept).
    pub fn matching(&self) -> &Matching {
        self.matching.get_or_init(|| matched(&self.trace))
    }

    /// The matching, if something asked for it already.
    pub(crate) fn matching_if_done(&self) -> Option<&Matching> {
        self.matching.get()
    }

    /// The communicator named `text`: its index as `summary` lists it, or its name.
    pub fn resolve_comm(&self, text: &str) -> Result<CommId> {
        resolve_comm(&self.trace, text)
    }

    /// `selection` (times relative to the first event) checked against the trace and made
    /// absolute.
    pub fn absolute(&self, selection: &Selection) -> Result<Selection> {
        if *selection == Selection::all() {
            return Ok(self.applied.clone());
        }
        selection
            .check_against(Some(self.ranks), Some(self.length), self.words)
            .map_err(Error::Input)?;
        if let Some(c) = selection.comm {
            if c as usize >= self.trace.comms.len() {
                return Err(Error::Input(format!(
                    "communicator {c} is not in the trace (it has {})",
                    self.trace.comms.len()
                )));
            }
        }
        if let Some(bad) = selection
            .on_comms
            .iter()
            .flatten()
            .find(|&&c| c as usize >= self.trace.comms.len())
        {
            return Err(Error::Input(format!(
                "communicator {bad} is not in the trace (it has {})",
                self.trace.comms.len()
            )));
        }
        Ok(Selection {
            from: selection.from.map(|t| self.start.saturating_add(t)),
            to: selection.to.map(|t| self.start.saturating_add(t)),
            ..selection.clone()
        })
    }

    /// Why `selection` keeps no call when its start lies after the end of the run; `None`
    /// otherwise (also for a selection the trace cannot take).
    pub fn past_the_end(&self, selection: &Selection) -> Option<String> {
        let from = Selection {
            from: selection.from,
            ..Selection::default()
        };
        from.check_against(Some(self.ranks), Some(self.length), self.words)
            .ok()
            .flatten()
    }

    /// MPI calls `selection` keeps (the shells refuse or note an empty selection).
    pub fn selected_calls(&self, selection: &Selection) -> Result<u64> {
        Ok(self.scope(selection)?.trace().num_calls())
    }

    /// The trace a use case of `selection` runs on.
    pub(crate) fn scope(&self, selection: &Selection) -> Result<Scope<'_>> {
        let absolute = self.absolute(selection)?;
        if *selection == Selection::all() {
            return Ok(Scope {
                engine: self,
                restricted: None,
                selection: absolute,
            });
        }
        let mut cache = self.restricted.borrow_mut();
        let restricted = match cache.take() {
            Some((s, r)) if s == absolute => r,
            other => {
                // The previous copy is dropped before a new one is built: at most one is held.
                drop(other);
                Rc::new(Restricted {
                    trace: self.trace.restrict(&absolute),
                    matching: OnceCell::new(),
                    pairing: OnceCell::new(),
                })
            }
        };
        *cache = Some((absolute.clone(), restricted.clone()));
        Ok(Scope {
            engine: self,
            restricted: Some(restricted),
            selection: absolute,
        })
    }

    /// How many times this engine found communication patterns (the phases of a selection
    /// reuse the pattern analysis of the same selection).
    pub fn pattern_analyses(&self) -> u64 {
        self.kept.pattern_analyses.get()
    }
}

/// The messages of `trace` matched, as the progress stage "matching the messages".
fn matched(trace: &Trace) -> Matching {
    progress::step("matching the messages", 0, 0);
    match_messages(trace)
}

/// The communicator of `trace` named `text`: its index as `summary` lists it, or its name.
pub fn resolve_comm(trace: &Trace, text: &str) -> Result<CommId> {
    resolve_comm_for(trace, text, "--comm")
}

/// [`resolve_comm`] for the option `flag` (`--comm`, `--on-comm`), which its errors name.
pub fn resolve_comm_for(trace: &Trace, text: &str, flag: &str) -> Result<CommId> {
    if let Ok(i) = text.parse::<CommId>() {
        if (i as usize) < trace.comms.len() {
            return Ok(i);
        }
    }
    let named: Vec<usize> = (0..trace.comms.len())
        .filter(|&i| trace.comms[i].name == text)
        .collect();
    match named.as_slice() {
        [i] => Ok(*i as CommId),
        [] => Err(Error::Input(format!(
            "{flag}: no communicator `{text}` (the trace has {}: give an index 0-{} or a name)",
            trace.comms.len(),
            trace.comms.len().saturating_sub(1)
        ))),
        _ => Err(Error::Input(format!(
            "{flag}: {} communicators are named `{text}`; give its index",
            named.len()
        ))),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! The real samples the engine's tests run on.
    use std::path::Path;
    use tracelogic_formats::{read_trace, InputFile};
    use tracelogic_model::Trace;

    /// Every file of the bundled web sample `id` (`npb-lu.S.8`), named as the page names them.
    pub fn sample_files(id: &str) -> Vec<InputFile> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/samples").join(id);
        let mut names: Vec<String> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| InputFile::new(format!("{id}/{n}"), std::fs::read(root.join(&n)).unwrap()))
            .collect()
    }

    /// The bundled sample `id`, read.
    pub fn sample_trace(id: &str) -> Trace {
        read_trace(sample_files(id)).unwrap()
    }

    /// An engine on the sample `id`, with the page's words.
    pub fn sample_engine(id: &str) -> super::Engine {
        super::Engine::new(sample_trace(id), super::FieldWords::Labels)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn selections_are_relative_checked_and_restricted_once() {
        let engine = sample_engine("npb-lu.S.8");
        let (start, end) = engine.trace().span();
        let half = Selection {
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        let absolute = engine.absolute(&half).unwrap();
        assert_eq!(absolute.to, Some(start + (end - start) / 2));
        let calls = engine.selected_calls(&half).unwrap();
        assert!(calls > 0 && calls < engine.trace().num_calls());
        let again = engine.scope(&half).unwrap();
        assert!(!again.is_whole());
        assert_eq!(
            again.trace().num_calls(),
            engine.trace().restrict(&absolute).num_calls()
        );
        let bad = Selection {
            ranks: Some(vec![8]),
            ..Selection::default()
        };
        assert!(engine.absolute(&bad).unwrap_err().message().contains("rank 8"));
        let late = Selection {
            from: Some(3_600_000_000_000),
            ..Selection::default()
        };
        assert!(engine.past_the_end(&late).unwrap().contains("after the end of the run"));
        assert_eq!(engine.selected_calls(&late).unwrap(), 0);
    }

    #[test]
    fn a_narrowed_engine_holds_the_part_and_reports_the_selection() {
        let trace = sample_trace("npb-lu.S.8");
        let whole = trace.num_calls();
        let ranks = Selection {
            ranks: Some(vec![0, 1]),
            ..Selection::default()
        };
        let (engine, note) = Engine::narrowed(trace, &ranks, FieldWords::Flags).unwrap();
        assert_eq!(note, None);
        assert!(engine.trace().num_calls() < whole);
        assert_eq!(engine.absolute(&Selection::all()).unwrap(), ranks);
        let late = Selection {
            from: Some(3_600_000_000_000),
            ..Selection::default()
        };
        let (_, note) = Engine::narrowed(sample_trace("npb-lu.S.8"), &late, FieldWords::Flags).unwrap();
        let note = note.unwrap();
        assert!(note.starts_with("the selection keeps no MPI call of "), "{note}");
        assert!(note.contains("--from 3600.000000 s is after the end"), "{note}");
    }
}

/// The name a loaded trace goes by in the page, its report, its downloads and a comparison: what the user
/// loaded (`label`: a file or folder name, a sample's title), unless that only counts what
/// was picked (`9 files`, `3 items`, several files without a common folder); then the trace's
/// own name as its reader gives it (`source`, e.g. DUMPI's `dumpi-2026.11.22.08.59.38`),
/// without any directories.
pub fn trace_name(label: &str, source: &str) -> String {
    let counted = label
        .split_once(' ')
        .is_some_and(|(n, what)| n.chars().all(|c| c.is_ascii_digit()) && matches!(what, "files" | "items"));
    let own = source
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .trim();
    if (counted || label.trim().is_empty()) && !own.is_empty() {
        own.to_owned()
    } else {
        label.to_owned()
    }
}
