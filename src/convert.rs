//! `tracelogic convert`: read a trace in any format, optionally restrict it to a selection and
//! renumber its ranks ([`Trace::renumber_ranks`]), and write it with one of the
//! `tracelogic_formats` writers. It moves traces between tools and makes placement experiments:
//! the same run under another rank numbering.

use crate::common::{load_trace, narrowed, set_stage, CliError, CliResult, SelectionArgs};
use crate::generate::OutFormat;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use tracelogic_engine::convert::{
    check_permutation, parse_permutation, random_permutation, reverse_permutation, Renumbering, TraceFormat,
    WrittenFile,
};
use tracelogic_model::{Rank, Selection, Trace};

/// Arguments of `tracelogic convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace), in any format tracelogic reads.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format (`--format`, as `generate` names it: `--to` is the selection's time window).
    #[arg(long, value_enum)]
    pub format: OutFormat,
    /// Where to write: the file for text, a folder (created if needed) for dumpi and otf2.
    #[arg(long)]
    pub out: PathBuf,
    /// Base name of the DUMPI / OTF2 files [default: the --out folder's name].
    #[arg(long)]
    pub name: Option<String>,
    /// Renumber the world ranks: `reverse` (r becomes n-1-r), `random:SEED` (a seeded random
    /// permutation), or a FILE with one new rank per line (line r+1 is rank r's new number).
    #[arg(long, value_name = "reverse|random:SEED|FILE")]
    pub renumber: Option<String>,
    /// Print what was written as JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// The permutation a `--renumber` value names for a trace of `n` ranks, checked.
pub fn permutation(spec: &str, n: u32) -> Result<Vec<Rank>, CliError> {
    let perm = if spec == "reverse" {
        reverse_permutation(n)
    } else if let Some(seed) = spec.strip_prefix("random:") {
        let seed = seed
            .parse::<u64>()
            .map_err(|_| CliError::Input(format!("--renumber random:SEED: `{seed}` is not a whole number")))?;
        random_permutation(n, seed)
    } else {
        let path = Path::new(spec);
        let text = fs::read_to_string(path).map_err(|e| {
            CliError::Input(format!(
                "--renumber `{spec}`: not `reverse` or `random:SEED`, and cannot read it as a file: {e}"
            ))
        })?;
        parse_permutation(&text).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?
    };
    check_permutation(&perm, n).map_err(|e| CliError::Input(format!("--renumber {spec}: {e}")))?;
    Ok(perm)
}

/// Run `tracelogic convert`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let engine = narrowed(trace, &args.selection)?;
    let renumbering = match &args.renumber {
        None => Renumbering::Keep,
        Some(spec) => Renumbering::Given(permutation(spec, engine.trace().num_ranks())?),
    };
    let name = output_name(args.format, &args.out, args.name.as_deref())?;
    set_stage(format!("writing the {} trace", format_name(args.format)));
    let converted = engine
        .convert(&Selection::all(), trace_format(args.format), &renumbering, &name)
        .map_err(|e| match (&args.renumber, e) {
            (Some(spec), tracelogic_engine::Error::Input(m)) => CliError::Input(format!("--renumber {spec}: {m}")),
            (_, e) => e.into(),
        })?;
    let written = write_files(&converted.files, args.format, &args.out)?;
    crate::print::convert::print(&converted, written, &args.out, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// Write `trace` in `format` at `out` (the file for text, a folder for DUMPI and OTF2, named
/// `name` or after the folder); returns the paths written with their sizes.
pub fn write_trace(
    trace: &Trace,
    format: OutFormat,
    out: &Path,
    name: Option<&str>,
) -> Result<Vec<(PathBuf, u64)>, CliError> {
    let name = output_name(format, out, name)?;
    set_stage(format!("writing the {} trace", format_name(format)));
    let files: Vec<WrittenFile> = match format {
        OutFormat::Text => vec![WrittenFile {
            name,
            bytes: tracelogic_formats::text::write(trace).into_bytes(),
        }],
        OutFormat::Dumpi => tracelogic_formats::dumpi::write(trace, &name)
            .into_iter()
            .map(Into::into)
            .collect(),
        OutFormat::Otf2 => tracelogic_formats::otf2::write(trace, &name)
            .into_iter()
            .map(Into::into)
            .collect(),
    };
    write_files(&files, format, out)
}

fn format_name(f: OutFormat) -> &'static str {
    trace_format(f).name()
}

fn trace_format(f: OutFormat) -> TraceFormat {
    match f {
        OutFormat::Text => TraceFormat::Text,
        OutFormat::Dumpi => TraceFormat::Dumpi,
        OutFormat::Otf2 => TraceFormat::Otf2,
    }
}

/// Check that `out` can take `format` and give the name the files are written under: the text
/// file's own name, or the base name of the DUMPI / OTF2 files (`name`, or after the folder).
fn output_name(format: OutFormat, out: &Path, name: Option<&str>) -> Result<String, CliError> {
    if format == OutFormat::Text {
        if out.is_dir() {
            return Err(CliError::Input(format!(
                "{} is a folder; --out must be a file for the text format",
                out.display()
            )));
        }
        return Ok(out
            .file_name()
            .map_or_else(|| "trace.txt".into(), |n| n.to_string_lossy().into_owned()));
    }
    let name = match name {
        Some(n) => n.to_owned(),
        None => default_name(out, format),
    };
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err(CliError::Input(format!("--name `{name}` must be a plain file name")));
    }
    if out.is_file() {
        return Err(CliError::Input(format!(
            "{} is a file; --out must be a folder for this format",
            out.display()
        )));
    }
    Ok(name)
}

/// Write the converted files at `out` (the file for text, a folder for DUMPI and OTF2); returns
/// the paths written with their sizes.
/// `trace` written `repeats` times end to end as OTF2 into the folder `out` (which must be empty
/// or not exist), each file written as soon as it is encoded
/// ([`tracelogic_formats::otf2::write_repeated`]): the archive may be far larger than memory.
pub fn write_otf2_repeated(
    trace: &Trace,
    out: &Path,
    name: Option<&str>,
    repeats: u64,
) -> Result<Vec<(PathBuf, u64)>, CliError> {
    let io_err = |p: &Path, e: std::io::Error| CliError::Input(format!("cannot write {}: {e}", p.display()));
    let name = output_name(OutFormat::Otf2, out, name)?;
    if fs::read_dir(out).map(|mut d| d.next().is_some()).unwrap_or(false) {
        return Err(CliError::Input(format!(
            "{} is not empty; --repeat writes into an empty folder",
            out.display()
        )));
    }
    fs::create_dir_all(out.join(&name)).map_err(|e| io_err(out, e))?;
    let ranks = trace.ranks.len();
    let mut written = Vec::new();
    let mut done = 0usize;
    tracelogic_formats::otf2::write_repeated(trace, &name, repeats, |file, bytes| {
        let path = out.join(file);
        fs::write(&path, bytes).map_err(|e| io_err(&path, e))?;
        if file.ends_with(".evt") {
            done += 1;
            set_stage(format!("writing the otf2 trace: {done} of {ranks} ranks"));
        }
        written.push((path, bytes.len() as u64));
        Ok::<(), CliError>(())
    })?;
    Ok(written)
}

pub fn write_files(files: &[WrittenFile], format: OutFormat, out: &Path) -> Result<Vec<(PathBuf, u64)>, CliError> {
    let io_err = |p: &Path, e: std::io::Error| CliError::Input(format!("cannot write {}: {e}", p.display()));
    if format == OutFormat::Text {
        let text = &files[0].bytes;
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        fs::write(out, text).map_err(|e| io_err(out, e))?;
        return Ok(vec![(out.to_path_buf(), text.len() as u64)]);
    }
    if let Some(other) = other_trace_in(out, files) {
        return Err(CliError::Input(format!(
            "{} already holds another trace ({other}); the new one would be read together with it: \
             write into an empty folder, or remove that trace",
            out.display()
        )));
    }
    fs::create_dir_all(out).map_err(|e| io_err(out, e))?;
    let mut written = Vec::with_capacity(files.len());
    for f in files {
        let rel = Path::new(&f.name);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(CliError::Internal(format!(
                "the writer produced an unsafe file name `{}`",
                f.name
            )));
        }
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        fs::write(&path, &f.bytes).map_err(|e| io_err(&path, e))?;
        written.push((path, f.bytes.len() as u64));
    }
    Ok(written)
}

/// The base name of the DUMPI / OTF2 files written into `out` when `--name` is not given: the
/// folder's name without the format's own extension (`--out run.otf2` writes `run.otf2`, not
/// `run.otf2.otf2`), `trace` when the folder has no usable name.
fn default_name(out: &Path, format: OutFormat) -> String {
    let folder = out
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
        .unwrap_or("trace");
    let extension = match format {
        OutFormat::Otf2 => ".otf2",
        _ => ".dumpi",
    };
    match folder.strip_suffix(extension) {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => folder.to_owned(),
    }
}

/// The first file of `out` (when it exists) that starts another trace than the one about to be
/// written there (`files`): a DUMPI `.meta` or an OTF2 anchor `.otf2` the writer does not
/// overwrite. Readers take every file of a folder as one trace, so writing beside it would
/// make the folder unreadable or mix two runs.
fn other_trace_in(out: &Path, files: &[WrittenFile]) -> Option<String> {
    let entries = fs::read_dir(out).ok()?;
    entries.flatten().find_map(|entry| {
        let name = entry.file_name().to_str()?.to_owned();
        let starts_a_trace = name.ends_with(".meta") || name.ends_with(".otf2");
        (starts_a_trace && entry.path().is_file() && !files.iter().any(|f| f.name == name)).then_some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_drop_the_format_extension_and_other_traces_are_not_joined() {
        assert_eq!(default_name(Path::new("out/bt.otf2"), OutFormat::Otf2), "bt");
        assert_eq!(default_name(Path::new("out/bt"), OutFormat::Otf2), "bt");
        assert_eq!(default_name(Path::new(".otf2"), OutFormat::Otf2), ".otf2");
        assert_eq!(default_name(Path::new("runs/lu.dumpi"), OutFormat::Dumpi), "lu");
        assert_eq!(default_name(Path::new("."), OutFormat::Dumpi), "trace");
        let dir = std::env::temp_dir().join(format!("tracelogic-convert-other-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mine = |name: &str| WrittenFile {
            name: name.into(),
            bytes: Vec::new(),
        };
        assert_eq!(other_trace_in(&dir, &[mine("a.meta")]), None, "no folder yet");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.meta"), "x").unwrap();
        fs::write(dir.join("notes.txt"), "x").unwrap();
        assert_eq!(
            other_trace_in(&dir, &[mine("a.meta")]),
            None,
            "overwriting the same trace"
        );
        assert_eq!(other_trace_in(&dir, &[mine("b.meta")]).as_deref(), Some("a.meta"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn renumber_values_name_checked_permutations() {
        assert_eq!(permutation("reverse", 3).unwrap(), vec![2, 1, 0]);
        let r = permutation("random:7", 16).unwrap();
        assert_eq!(r, permutation("random:7", 16).unwrap());
        check_permutation(&r, 16).unwrap();
        let e = permutation("random:x", 4).unwrap_err().to_string();
        assert!(e.contains("`x` is not a whole number"), "{e}");
        let e = permutation("/no/such/placement", 4).unwrap_err().to_string();
        assert!(e.contains("cannot read it as a file"), "{e}");
        let dir = std::env::temp_dir().join(format!("tracelogic-convert-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("perm.txt");
        fs::write(&file, "1\n0\n2\n").unwrap();
        assert_eq!(permutation(file.to_str().unwrap(), 3).unwrap(), vec![1, 0, 2]);
        let e = permutation(file.to_str().unwrap(), 4).unwrap_err().to_string();
        assert!(e.contains("names 3 ranks but the trace has 4"), "{e}");
        fs::write(&file, "1\n1\n0\n").unwrap();
        let e = permutation(file.to_str().unwrap(), 3).unwrap_err().to_string();
        assert!(e.contains("would both become 1"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
