//! Reader for Paraver traces (`.prv` with its `.pcf` and `.row`), as written by Extrae.
//!
//! Choices (also in `docs/formats.md` of the repository):
//! - **Ranks** are the tasks of the application(s) whose threads emit MPI events (event types
//!   whose `.pcf` values are named `MPI_*`), numbered in (application, task) order. Other
//!   applications — e.g. the uncore-counter readers PROFET adds as application 2 — are not
//!   ranks and are ignored. A trace without any MPI event takes application 1.
//! - **MPI calls** come from those event types: a non-zero value enters the call it names in
//!   the `.pcf`, value 0 leaves it. The id → name map is built from the `.pcf`, never assumed.
//! - **Collectives** are calls whose name is a collective; their bytes, root and communicator
//!   come from the `.pcf` types labelled `Send Size / Recv Size / Root / Communicator in MPI
//!   Global OP` in the same record. The root is a rank of that communicator.
//! - **Point-to-point** operations come from communication records (type 3): the send is
//!   attached to the call open on the sending thread at the logical send time, the receive to
//!   the receive call open at the logical receive time and completed by the call open at the
//!   physical receive time. Paraver does not record which call completed a non-blocking send:
//!   it is attached to the first later `MPI_Wait*`/`MPI_Test*` of the thread that is not a
//!   single-request wait already completing a receive.
//! - **Call paths** are the `Caller at level N` events recorded with the call (outermost
//!   first; `Unresolved` and `_NOT_Found` levels dropped), else the stack of user functions
//!   (event types whose value 0 is labelled `End`, other than sampling types).
//! - **Metrics** are hardware counters: types labelled `PAPI_*`, or in the `.pcf` gradient named
//!   "Hardware Counters" with an Extrae counter label `NAME ([description])`; values are stored
//!   as recorded (Extrae records the increment since the previous read).
//!
//! Layout: [`names`] reads the `.pcf` and `.row`, [`prv`] the `.prv`'s header and records,
//! [`build`] turns the records into the trace; this file picks the files and chains them.

mod build;
mod names;
mod prv;

use crate::{FormatError, InputFile, Progress, ProgressSink};
use build::*;
use names::*;
use prv::*;
use std::collections::HashMap;
use tracelogic_model::{
    CallIdx, CallKind, CallpathId, CollectiveOp, CommId, Location, MetricSamples, P2pDir, Rank, RegionId, Time, Trace,
    COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

/// Choose the `.prv`, `.pcf` and `.row` of the input set.
fn pick_files(files: &[InputFile]) -> Result<(&InputFile, Option<&InputFile>, Option<&InputFile>), FormatError> {
    let is_prv = |f: &&InputFile| {
        let b = f.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&f.bytes);
        b.starts_with(b"#Paraver") || b.starts_with(b"new format")
    };
    let prvs: Vec<&InputFile> = files.iter().filter(is_prv).collect();
    let prv = match prvs.as_slice() {
        [p] => *p,
        [] => {
            let name = files.first().map(|f| f.name.as_str()).unwrap_or("(no input)");
            return Err(FormatError::new(
                name,
                "no Paraver .prv file (starting with `#Paraver`) was given",
            ));
        }
        [a, b, ..] => {
            return Err(FormatError::new(
                &b.name,
                format!(
                    "several .prv files were given (`{}` and `{}`); give one trace",
                    a.name, b.name
                ),
            ))
        }
    };
    let stem = prv.name.strip_suffix(".prv").unwrap_or(&prv.name);
    let companion = |ext: &str| -> Option<&InputFile> {
        let same = format!("{stem}.{ext}");
        files.iter().find(|f| f.name == same).or_else(|| {
            let all: Vec<&InputFile> = files
                .iter()
                .filter(|f| f.name.to_ascii_lowercase().ends_with(&format!(".{ext}")))
                .collect();
            if all.len() == 1 {
                Some(all[0])
            } else {
                None
            }
        })
    };
    Ok((prv, companion("pcf"), companion("row")))
}

/// Read a paraver trace from its files.
///
/// Errors name the file and 1-based line: a malformed header, record fields that are not
/// numbers, objects (application, task, thread) missing from the header, unknown record types.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let (prv, pcf_file, row_file) = pick_files(files)?;
    let pcf = match pcf_file {
        Some(f) => parse_pcf(f)?,
        None => Pcf::default(),
    };
    let row_threads = match row_file {
        Some(f) => parse_row_threads(f)?,
        None => Vec::new(),
    };
    let roles = classify_types(&pcf);
    let name = prv.name.as_str();
    let mut warnings = Vec::new();
    if pcf_file.is_none() {
        let stem = name.strip_suffix(".prv").unwrap_or(name);
        warnings.push(format!(
            "no .pcf file among the inputs ({stem}.pcf was expected next to {name}): the .pcf names the event \
             types, so without it no MPI call, collective or call path can be recognised and communication \
             records cannot be attached to calls; give the .pcf with the .prv"
        ));
    }
    let text = std::str::from_utf8(&prv.bytes).map_err(|e| {
        let line = prv.bytes[..e.valid_up_to()].iter().filter(|&&c| c == b'\n').count() as u64 + 1;
        FormatError::at_line(name, line, "not UTF-8 text")
    })?;
    let total = prv.bytes.len() as u64;
    // Extrae ends every record with an end of line: a last line without one was cut. It is read
    // as the other lines (a field cut short is then an error at its line), and reported.
    let cut = match text.rfind('\n') {
        Some(i) if !text[i + 1..].trim().is_empty() => Some(text[i + 1..].trim_end()),
        _ => None,
    };

    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.strip_suffix('\r').unwrap_or(l)));
    let (mut line_no, mut head) = lines.next().unwrap_or((1, ""));
    let head_trimmed = head.trim_start_matches('\u{feff}');
    if head_trimmed == "new format" {
        (line_no, head) = lines
            .next()
            .ok_or_else(|| FormatError::at_line(name, 2, "the file ends before the #Paraver header"))?;
    } else {
        head = head_trimmed;
    }
    let header = parse_header(head, name, line_no)?;

    let mut comm_defs: HashMap<u64, CommDef> = HashMap::new();
    for k in 0..header.num_comms {
        let (ln, l) = lines.next().ok_or_else(|| {
            FormatError::at_line(
                name,
                line_no + k as u64 + 1,
                format!(
                    "the header announces {} communicator lines but the file ends",
                    header.num_comms
                ),
            )
        })?;
        if l.trim().is_empty() {
            return Err(FormatError::at_line(
                name,
                ln,
                format!(
                    "the header announces {} communicator lines but only {k} follow",
                    header.num_comms
                ),
            ));
        }
        let fields: Vec<&str> = l.split(':').collect();
        let bad = || {
            FormatError::at_line(
                name,
                ln,
                format!("expected a communicator line `c:appl:id:n:tasks...`, found `{l}`"),
            )
        };
        if fields.len() < 4 || !matches!(fields[0], "c" | "C" | "i" | "I") {
            return Err(bad());
        }
        let appl: u32 = fields[1].parse().map_err(|_| bad())?;
        let id: u64 = fields[2].parse().map_err(|_| bad())?;
        let n: usize = fields[3].parse().map_err(|_| bad())?;
        if fields.len() != 4 + n {
            return Err(FormatError::at_line(
                name,
                ln,
                format!("communicator {id} announces {n} tasks but lists {}", fields.len() - 4),
            ));
        }
        let tasks = fields[4..]
            .iter()
            .map(|t| t.parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad())?;
        comm_defs.insert(id, CommDef { appl, tasks });
    }

    let mut thread_base = Vec::new();
    let mut next = 0usize;
    for app in &header.apps {
        let mut bases = Vec::with_capacity(app.threads_per_task.len());
        for &n in &app.threads_per_task {
            bases.push(next);
            next += n as usize;
        }
        thread_base.push(bases);
    }
    if next as u64 > total {
        return Err(FormatError::at_line(
            name,
            1,
            format!("the header declares {next} threads, more than the file can describe"),
        ));
    }
    let mut body = Body {
        file: name,
        header: &header,
        roles: &roles,
        pcf: &pcf,
        thread_base,
        threads: (0..next).map(|_| ThreadData::default()).collect(),
        comms: Vec::new(),
        trace: Trace::new("paraver", name, 0),
        callpath_cache: HashMap::new(),
        func_cache: HashMap::new(),
        unmatched_leaves: 0,
        counts: [0; 5],
        pairs: Vec::new(),
    };
    let mut done = 0u64;
    let start = Progress {
        stage: "reading records".into(),
        bytes_done: 0,
        bytes_total: total,
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled(name));
    }
    let mut next_report = 4u64 << 20;
    let mut last_line = line_no;
    for (ln, line) in lines {
        last_line = ln;
        done += line.len() as u64 + 1;
        if done >= next_report {
            next_report = done + (4 << 20);
            let p = Progress {
                stage: "reading records".into(),
                bytes_done: done.min(total),
                bytes_total: total,
            };
            if !progress.report(&p) {
                return Err(FormatError::cancelled(name));
            }
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(['c', 'C', 'i', 'I']) {
            continue;
        }
        body.record(trimmed).map_err(|m| {
            let m = if cut.is_some_and(|c| std::ptr::eq(c.as_ptr(), line.as_ptr())) {
                format!("{m} (the file ends inside this line without an end of line: it looks truncated)")
            } else {
                m
            };
            FormatError::at_line(body.file, ln, m)
        })?;
    }
    warnings.extend(truncation_warning(name, last_line, cut, &header, &body.threads));
    let mut trace = build_trace(body, &header, &comm_defs, &row_threads, &roles)?;
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok(trace)
}

/// Least share of the header's end time the records must reach for a file with MPI calls still
/// open at its end not to be reported as truncated (Extrae and Paraver's cutter write the time of
/// the last record as the end time).
const SHORT_RUN_SHARE: f64 = 0.9;

/// The warning for a `.prv` that looks truncated: its last line has no end of line (the record
/// was cut: its last number may have lost digits), or its records end before [`SHORT_RUN_SHARE`]
/// of the run's end in the header while MPI calls are still open at the end. `last_line` is the
/// number of the file's last line (empty when the file ends with an end of line). Records ending early alone say nothing (hand-written and excerpted
/// traces keep a longer run's header), nor do open calls alone (a thread's last call may be open
/// when tracing stops).
fn truncation_warning(
    name: &str,
    last_line: u64,
    cut: Option<&str>,
    header: &Header,
    threads: &[ThreadData],
) -> Option<String> {
    let header_end = header.end_time.saturating_mul(header.unit_ns);
    let records_end = threads.iter().filter_map(|t| t.span).map(|(_, b)| b).max().unwrap_or(0);
    let open: usize = threads.iter().map(|t| t.open.len()).sum();
    let short = (records_end as f64) < SHORT_RUN_SHARE * header_end as f64;
    let secs = |ns: u64| ns as f64 / 1e9;
    let shorter = format!(
        "the records read end at {:.6} s, though the header says the run lasted {:.6} s",
        secs(records_end),
        secs(header_end)
    );
    if let Some(cut) = cut {
        let shown: String = cut.chars().take(40).collect();
        let ellipsis = if shown.len() < cut.len() { "..." } else { "" };
        let shorter = if short { format!("; {shorter}") } else { String::new() };
        return Some(format!(
            "{name} line {last_line}: the file ends in the middle of a record (`{shown}{ellipsis}` has no end of \
             line), so the file looks truncated and that record, read as it is, may have lost its last digits{shorter}"
        ));
    }
    if short && open > 0 {
        return Some(format!(
            "{name} looks truncated after line {}: {shorter}, and {open} MPI call{} still open at the end",
            last_line.saturating_sub(1),
            if open == 1 { " is" } else { "s are" }
        ));
    }
    None
}
