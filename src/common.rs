//! What every subcommand shares: loading traces from paths, errors and exit codes, the guard
//! that turns a panic into a message, selection flags, and output as tables, JSON or CSV.

use std::cell::RefCell;
use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tracelogic_engine::{progress, Engine, FieldWords};
use tracelogic_formats::input::{read_paths, read_paths_with_progress};
use tracelogic_formats::stream::{read_whole, streams, DiskFiles};
use tracelogic_formats::{read_trace_with_progress, NoProgress, Progress};
use tracelogic_model::query::{parse_bytes, parse_kinds, parse_ranks, parse_time};
use tracelogic_model::{CallKind, Rank, Selection, Time, Trace};

/// A failure the user must see, with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad input or usage (exit 2).
    Input(String),
    /// The analysis ran but found nothing (exit 1).
    NothingFound(String),
    /// A bug: an analysis panicked (exit 3). The message says what was being done.
    Internal(String),
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Input(_) => ExitCode::from(2),
            CliError::NothingFound(_) => ExitCode::from(1),
            CliError::Internal(_) => ExitCode::from(3),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::NothingFound(m) | CliError::Internal(m) => f.write_str(m),
        }
    }
}

impl From<tracelogic_engine::Error> for CliError {
    fn from(e: tracelogic_engine::Error) -> CliError {
        match e {
            tracelogic_engine::Error::Input(m) => CliError::Input(m),
            tracelogic_engine::Error::NothingFound(m) => CliError::NothingFound(m),
        }
    }
}

/// Result of a subcommand: the exit code on success.
pub type CliResult = Result<ExitCode, CliError>;

thread_local! {
    /// What this thread is doing right now (`reading npb-lu.S.8`, `matching messages`...),
    /// named in the message shown when something panics. Per thread, because the guard
    /// catches panics of the thread that runs the subcommand.
    static STAGE: RefCell<String> = const { RefCell::new(String::new()) };
    /// Message and location of this thread's last panic, recorded by [`record_panic`].
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Record what the tool is doing now, for the message of an internal error.
pub fn set_stage(stage: impl Into<String>) {
    STAGE.with(|s| *s.borrow_mut() = stage.into());
}

fn stage() -> String {
    STAGE.with(|s| s.borrow().clone())
}

/// How long a stage runs before [`working`] shows it on a terminal.
const SHOW_AFTER: Duration = Duration::from_secs(2);

/// Run `work` as the stage `name` ([`set_stage`]). When stderr is a terminal and the stage
/// lasts more than two seconds, one rewritten stderr line says so, where the analysis is, and
/// how long it has run (`building … the logical trace: verifying by expansion, 41 %… 12 s`), so
/// that a long analysis is not silent; the line is cleared before `working` returns, so the
/// answer printed after starts on a clean line.
/// `TRACELOGIC_PROGRESS_AFTER_MS` sets the two seconds (tests set 0; docs/cli.md).
pub fn working<T>(name: impl Into<String>, work: impl FnOnce() -> T) -> T {
    let name = name.into();
    set_stage(name.clone());
    if !io::stderr().is_terminal() {
        return work();
    }
    let after = std::env::var("TRACELOGIC_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(SHOW_AFTER, Duration::from_millis);
    let start = Instant::now();
    let show = move |name: &str| {
        let mut err = io::stderr().lock();
        let line = working_line(name, progress::latest().as_ref(), start.elapsed());
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    };
    // Shown at once when `after` is zero (before the work starts, whatever the scheduling).
    let shown_at_start = after.is_zero();
    if shown_at_start {
        show(&name);
    }
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut shown = shown_at_start;
            // First shown `after` the start, then four times a second; ends when `done` is
            // dropped: after `work`, or while a panic unwinds past it.
            let tick = Duration::from_millis(250);
            let mut wait_for = if shown_at_start { tick } else { after };
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(wait_for) {
                show(&name);
                shown = true;
                wait_for = tick;
            }
            if shown {
                let _ = write!(io::stderr(), "\r\x1b[2K");
            }
        });
        let out = progress::watch(|_: &progress::Step| {}, work);
        drop(done);
        out
    })
}

/// The line [`working`] shows: the stage, where the analysis is within it when it reports
/// that ([`progress`]), and the whole seconds so far.
fn working_line(name: &str, step: Option<&progress::Step>, elapsed: Duration) -> String {
    match step {
        Some(step) => format!("{name}: {}… {} s", step.text(), elapsed.as_secs()),
        None => format!("{name}… {} s", elapsed.as_secs()),
    }
}

/// Panic hook: remember the message and where it happened instead of printing a backtrace.
/// Installed by `main` unless `TRACELOGIC_BACKTRACE` is set (then Rust's own report is kept).
pub fn record_panic(info: &panic::PanicHookInfo<'_>) {
    let what = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{what}{at}")));
}

/// Run a subcommand, turning a panic into [`CliError::Internal`] that names the stage it
/// happened in, so the user sees one line rather than a Rust backtrace.
pub fn guarded(run: impl FnOnce() -> CliResult) -> CliResult {
    match panic::catch_unwind(AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(payload) => {
            let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
            let what = recorded.unwrap_or_else(|| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into())
            });
            Err(CliError::Internal(format!(
                "internal error while {}: {what} (this is a bug in tracelogic; please report it with the input)",
                stage()
            )))
        }
    }
}

thread_local! {
    /// A trace read by other means, which the next [`load_trace`] returns instead of reading
    /// its paths ([`preload`]).
    static PRELOADED: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

/// Make the next [`load_trace`] on this thread return `trace` (its warnings printed as for a
/// trace read from the paths). `tracelogic-mpi` reads the trace with several processes and then
/// runs the subcommand's own code on it.
pub fn preload(trace: Trace) {
    PRELOADED.with(|p| *p.borrow_mut() = Some(trace));
}

/// Load one trace from the paths given on the command line (files, folders or archives; all
/// together form one trace). Progress goes to stderr only when stderr is a terminal; reader
/// warnings are printed to stderr. Errors name the file and where in it things went wrong.
pub fn load_trace(paths: &[PathBuf]) -> Result<Trace, CliError> {
    if paths.is_empty() {
        return Err(CliError::Input("no trace given: name its files or folder".into()));
    }
    if let Some(trace) = PRELOADED.with(|p| p.borrow_mut().take()) {
        for w in &trace.warnings {
            eprintln!("tracelogic: warning: {w}");
        }
        return Ok(trace);
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    set_stage(format!("reading {}", shown.join(" ")));
    // Archives and compressed files are unpacked as they stream from disk: only their members
    // are held in memory.
    // An OTF2 folder on disk is read rank by rank, each rank's event files dropped once the
    // rank is built (`tracelogic_formats::stream::read_whole`); the same trace, less memory.
    let disk = DiskFiles::open(paths).ok().flatten().filter(|d| streams(d));
    let result = if let Some(mut disk) = disk {
        if io::stderr().is_terminal() {
            let mut reporter = TerminalProgress::default();
            let r = read_whole(&mut disk, &mut |p: &Progress| reporter.report(p));
            reporter.finish();
            r
        } else {
            read_whole(&mut disk, &mut NoProgress)
        }
    } else if io::stderr().is_terminal() {
        let mut reporter = TerminalProgress::default();
        let mut report = |p: &Progress| reporter.report(p);
        let r = read_paths_with_progress(paths, &mut report)
            .map_err(|e| CliError::Input(format!("cannot read {e}")))
            .map(|files| read_trace_with_progress(files, &mut report));
        reporter.finish();
        r?
    } else {
        let files = read_paths(paths).map_err(|e| CliError::Input(format!("cannot read {e}")))?;
        read_trace_with_progress(files, &mut NoProgress)
    };
    let trace = result.map_err(|e| CliError::Input(format!("cannot read trace: {e}")))?;
    for w in &trace.warnings {
        eprintln!("tracelogic: warning: {w}");
    }
    Ok(trace)
}

/// Progress on one rewritten stderr line, at most ten updates a second.
#[derive(Default)]
struct TerminalProgress {
    last: Option<Instant>,
    shown: bool,
}

impl TerminalProgress {
    fn report(&mut self, p: &Progress) -> bool {
        if self.last.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) {
            return true;
        }
        self.last = Some(Instant::now());
        let pct = if p.bytes_total == 0 {
            100.0
        } else {
            100.0 * p.bytes_done as f64 / p.bytes_total as f64
        };
        let mut err = io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}: {pct:5.1} %", p.stage);
        let _ = err.flush();
        self.shown = true;
        true
    }

    fn finish(&self) {
        if self.shown {
            let _ = write!(io::stderr(), "\r\x1b[2K");
        }
    }
}

/// How a subcommand prints its result.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Print JSON (pretty, stable field names; schema in docs/cli.md).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
}

/// Write to stdout; a closed pipe (`tracelogic ... | head`) ends quietly.
pub fn emit(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::Input(format!("cannot write output: {e}"))),
        _ => Ok(()),
    }
}

/// Print `value` as pretty JSON followed by a newline. The serialiser writes into a buffer of
/// its own concrete type: through `emit`'s `dyn Write` every number of a large report would
/// cost several dynamic calls (the value and each level of indentation).
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<(), CliError> {
    emit(|out| pretty_json(io::BufWriter::with_capacity(1 << 16, &mut *out), value))
}

/// Write `value` as pretty JSON and a newline to the file `output` as it is serialised, or print
/// it ([`print_json`]) when there is none.
pub fn write_json<T: serde::Serialize>(value: &T, output: Option<&std::path::Path>) -> Result<(), CliError> {
    let Some(path) = output else {
        return print_json(value);
    };
    let cannot = |e: io::Error| CliError::Input(format!("cannot write {}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(cannot)?;
    pretty_json(io::BufWriter::with_capacity(1 << 16, file), value).map_err(cannot)
}

fn pretty_json<T: serde::Serialize>(mut w: impl Write, value: &T) -> io::Result<()> {
    // `io::Error::from` keeps an I/O error's kind, so a closed pipe still ends quietly.
    serde_json::to_writer_pretty(&mut w, value).map_err(io::Error::from)?;
    writeln!(w)?;
    w.flush()
}

/// Print CSV written record by record by `write` (quoting as RFC 4180 requires), so a large
/// table goes to the buffered output as it is produced instead of being built first.
pub fn print_csv(write: impl FnOnce(&mut csv::Writer<&mut dyn Write>) -> csv::Result<()>) -> Result<(), CliError> {
    emit(|out| {
        let mut w = csv::Writer::from_writer(out);
        write(&mut w).map_err(csv_io_error)?;
        w.flush()
    })
}

/// A CSV error as an I/O error of the same kind (csv's own conversion makes every error `Other`,
/// which would report a closed pipe as a failure).
fn csv_io_error(e: csv::Error) -> io::Error {
    if !e.is_io_error() {
        return io::Error::other(e);
    }
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        kind => io::Error::other(format!("{kind:?}")),
    }
}

/// A human-readable table with aligned columns; columns listed in `right` are right-aligned
/// (numbers).
pub fn table(header: &[&str], rows: Vec<Vec<String>>, right: &[usize]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(header.to_vec());
    for r in rows {
        t.add_row(r);
    }
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    t.to_string().lines().map(|l| format!("{}\n", l.trim_end())).collect()
}

/// Seconds with microsecond precision, for tables.
pub fn seconds(ns: u64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
}

fn time_arg(text: &str) -> Result<Time, String> {
    parse_time(text).map_err(|e| {
        if text.contains(',') && text.chars().all(|c| c.is_ascii_digit() || c == ',') {
            format!("{e}; `--from` is the start of the time window (`logical --from-ranks` takes a list of ranks)")
        } else {
            e
        }
    })
}

fn bytes_arg(text: &str) -> Result<u64, String> {
    parse_bytes(text)
}

/// A parsed `--ranks` list (a newtype so clap takes it as one value, not many).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankList(pub Vec<Rank>);

/// A parsed `--kind` list (a newtype so clap takes it as one value, not many).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindList(pub Vec<CallKind>);

fn ranks_arg(text: &str) -> Result<RankList, String> {
    parse_ranks(text).map(RankList)
}

fn kinds_arg(text: &str) -> Result<KindList, String> {
    parse_kinds(text).map(KindList)
}

/// Flags that select part of a trace, shared by every analysis: `matrix`, `query` and
/// `topology` apply them directly; `logical`, `patterns`, `phases`, `replay`, `compare` and
/// `match` analyse the trace restricted to them ([`select`]).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectionArgs {
    /// Only these world ranks: `3`, `0-3,7`.
    #[arg(long, value_parser = ranks_arg)]
    pub ranks: Option<RankList>,
    /// Only ranks in this communicator (its index as `summary` lists it, or its name).
    #[arg(long)]
    pub comm: Option<String>,
    /// Only calls entered at or after this time since the trace's first event (`1.5s`, `200ms`).
    #[arg(long, value_parser = time_arg)]
    pub from: Option<Time>,
    /// Only calls entered before this time since the trace's first event.
    #[arg(long, value_parser = time_arg)]
    pub to: Option<Time>,
    /// Only operations of at least this many bytes (`4096`, `64Ki`, `1M`).
    #[arg(long, value_parser = bytes_arg)]
    pub min_bytes: Option<u64>,
    /// Only operations of at most this many bytes.
    #[arg(long, value_parser = bytes_arg)]
    pub max_bytes: Option<u64>,
    /// Only calls of these kinds: send, isend, recv, irecv, sendrecv, p2p, completion, probe,
    /// collective, communicator, lifecycle, other.
    #[arg(long = "kind", value_parser = kinds_arg)]
    pub kinds: Option<KindList>,
    /// Only calls made on these communicators (indices or names as `summary` lists them;
    /// repeat the flag or separate with commas): their point-to-point operations and
    /// collectives, and the completions of those; not what the same ranks do on others.
    #[arg(long = "on-comm")]
    pub on_comm: Vec<String>,
}

impl SelectionArgs {
    /// The selection as typed: times relative to the trace's first event, the communicator
    /// looked up in `trace` (its index or its name). The engine checks it against the trace
    /// ([`Selection::check`], the web page's selection form uses the same check).
    pub fn relative(&self, trace: &Trace) -> Result<Selection, CliError> {
        let comm = match &self.comm {
            None => None,
            Some(c) => Some(tracelogic_engine::resolve_comm(trace, c)?),
        };
        let on_comms = match self.on_comm.as_slice() {
            [] => None,
            names => {
                let mut ids = Vec::new();
                for text in names {
                    ids.extend(on_comm_ids(trace, text)?);
                }
                ids.sort_unstable();
                ids.dedup();
                Some(ids)
            }
        };
        Ok(Selection {
            ranks: self.ranks.as_ref().map(|r| r.0.clone()),
            comm,
            from: self.from,
            to: self.to,
            min_bytes: self.min_bytes,
            max_bytes: self.max_bytes,
            kinds: self.kinds.as_ref().map(|k| k.0.clone()),
            on_comms,
        })
    }

    /// An engine over the whole `trace` and the selection of these flags for it: `matrix`,
    /// `query`, `topology` and `replay` apply the selection themselves.
    pub fn engine(&self, trace: Trace) -> Result<(Engine, Selection), CliError> {
        let selection = self.relative(&trace)?;
        let engine = Engine::new(trace, FieldWords::Flags);
        engine.absolute(&selection)?;
        Ok((engine, selection))
    }
}

/// The communicators one `--on-comm` value names: the whole text as an index or a name
/// (communicator names such as `comm 3 (split of MPI_COMM_WORLD, colour 0)` hold commas), else
/// each of its comma-separated items.
fn on_comm_ids(trace: &Trace, text: &str) -> Result<Vec<tracelogic_model::CommId>, CliError> {
    const FLAG: &str = "--on-comm";
    if let Ok(id) = tracelogic_engine::resolve_comm_for(trace, text.trim(), FLAG) {
        return Ok(vec![id]);
    }
    if !text.contains(',') {
        return Err(tracelogic_engine::resolve_comm_for(trace, text.trim(), FLAG)
            .unwrap_err()
            .into());
    }
    text.split(',')
        .map(|item| tracelogic_engine::resolve_comm_for(trace, item.trim(), FLAG).map_err(CliError::from))
        .collect()
}

/// An engine holding only the part of `trace` the selection flags keep ([`Engine::narrowed`]:
/// one copy of the trace), for the analyses that run on the restricted trace (`logical`,
/// `patterns`, `phases`, `compare`, `match`, `skeleton`, `convert`); they then ask with
/// `Selection::all()` and report the selection applied. A selection that keeps no call is not
/// an error: a note goes to stderr and the analysis answers on the empty trace.
pub fn narrowed(trace: Trace, args: &SelectionArgs) -> Result<Engine, CliError> {
    let source = trace.source.clone();
    let selection = args.relative(&trace).map_err(|e| match e {
        CliError::Input(m) => CliError::Input(format!("{source}: {m}")),
        other => other,
    })?;
    if selection != Selection::all() {
        set_stage(format!("restricting {source} to the selection"));
    }
    let (engine, note) =
        Engine::narrowed(trace, &selection, FieldWords::Flags).map_err(|e| CliError::from(e.prefixed(&source)))?;
    if let Some(note) = note {
        eprintln!("tracelogic: note: {note}");
    }
    Ok(engine)
}

/// [`narrowed`] over the trace the paths name, loading only the part the flags keep when they
/// name ranks (and no communicator, neither `--comm` nor `--on-comm`) and the trace is an OTF2 folder: only those ranks' event
/// files are read in full, so a trace larger than memory can be analysed a part at a time
/// (`tracelogic overview` shows what to pick). Times still count from the whole trace's first
/// event. Otherwise the whole trace is read and narrowed.
pub fn load_narrowed(paths: &[PathBuf], args: &SelectionArgs) -> Result<Engine, CliError> {
    if args.ranks.is_some() && args.comm.is_none() && args.on_comm.is_empty() {
        let mut source = crate::overview::source(paths)?;
        if tracelogic_formats::stream::streams(source.as_ref()) {
            let selection = Selection {
                ranks: args.ranks.as_ref().map(|r| r.0.clone()),
                comm: None,
                from: args.from,
                to: args.to,
                min_bytes: args.min_bytes,
                max_bytes: args.max_bytes,
                kinds: args.kinds.as_ref().map(|k| k.0.clone()),
                on_comms: None,
            };
            set_stage("reading the selected ranks");
            let (engine, note) = tracelogic_engine::overview::load_part(
                source.as_mut(),
                &selection,
                FieldWords::Flags,
                &mut NoProgress,
            )?;
            for w in &engine.trace().warnings {
                eprintln!("tracelogic: warning: {w}");
            }
            if let Some(note) = note {
                eprintln!("tracelogic: note: {note}");
            }
            return Ok(engine);
        }
    }
    narrowed(load_trace(paths)?, args)
}

pub use tracelogic_engine::documents::Selected;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stage_line_says_where_the_analysis_is_when_it_reports_it() {
        let at = Duration::from_millis(12_400);
        assert_eq!(working_line("building it", None, at), "building it… 12 s");
        let step = progress::Step {
            stage: "verifying by expansion",
            done: 41,
            total: 100,
        };
        assert_eq!(
            working_line("building it", Some(&step), at),
            "building it: verifying by expansion, 41 %… 12 s"
        );
        let uncounted = progress::Step {
            stage: "folding the loops",
            done: 0,
            total: 0,
        };
        assert_eq!(
            working_line("building it", Some(&uncounted), at),
            "building it: folding the loops… 12 s"
        );
    }

    #[test]
    fn guard_turns_a_panic_into_an_internal_error_naming_the_stage() {
        let r = guarded(|| {
            set_stage("building the matrix");
            let v: Vec<u32> = Vec::new();
            Ok(ExitCode::from(v[3] as u8))
        });
        match r {
            Err(e @ CliError::Internal(_)) => {
                let m = e.to_string();
                assert!(m.contains("building the matrix"), "{m}");
                assert!(m.contains("index out of bounds"), "{m}");
                assert_eq!(e.exit_code(), ExitCode::from(3));
            }
            _ => panic!("expected an internal error"),
        }
        assert!(guarded(|| Ok(ExitCode::SUCCESS)).is_ok());
    }

    #[test]
    fn selection_flags_are_checked_against_the_trace() {
        let mut t = Trace::new("test", "t", 4);
        t.push_call(0, "MPI_Init", 1_000, 2_000, tracelogic_model::NO_CALLPATH, 0);
        t.add_comm("rows", vec![0, 1]);
        let args = SelectionArgs {
            ranks: Some(RankList(vec![1, 2])),
            comm: Some("rows".into()),
            from: Some(500),
            ..Default::default()
        };
        let s = args.relative(&t).unwrap();
        assert_eq!((s.comm, s.from), (Some(1), Some(500)));
        let engine = Engine::new(t.clone(), FieldWords::Flags);
        assert_eq!(engine.absolute(&s).unwrap().from, Some(1_500));
        let error = |args: SelectionArgs| -> String {
            match args.engine(t.clone()) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("accepted"),
            }
        };
        let bad = SelectionArgs {
            ranks: Some(RankList(vec![4])),
            ..Default::default()
        };
        assert!(error(bad).contains("rank 4"));
        let bad = SelectionArgs {
            comm: Some("cols".into()),
            ..Default::default()
        };
        assert!(error(bad).contains("`cols`"));
        let by_index = SelectionArgs {
            comm: Some("0".into()),
            ..Default::default()
        };
        assert_eq!(by_index.relative(&t).unwrap().comm, Some(0));
        let backwards = SelectionArgs {
            from: Some(2),
            to: Some(1),
            ..Default::default()
        };
        assert_eq!(error(backwards), "--from is later than --to");
        let sizes = SelectionArgs {
            min_bytes: Some(2),
            max_bytes: Some(1),
            ..Default::default()
        };
        assert_eq!(error(sizes), "--min-bytes is larger than --max-bytes");
    }

    #[test]
    fn tables_align_numbers_right() {
        let t = table(
            &["rank", "calls"],
            vec![vec!["0".into(), "5".into()], vec!["1".into(), "123".into()]],
            &[1],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with("  5"), "{t}");
        assert!(lines[2].ends_with(" 123"), "{t}");
    }
}
