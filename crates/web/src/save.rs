//! "Save trace as…": the loaded trace (restricted to the page's selection) written in another
//! format, optionally with its ranks renumbered, by the engine's convert (`tracelogic convert`).
//! The worker packs the files ([`save_trace`]); the summary view downloads them. Text is one file; DUMPI and OTF2,
//! which are several files, come as one uncompressed tar archive, which tracelogic (and `tar`)
//! reads back.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use tracelogic_engine::convert::{self, TraceFormat};
use tracelogic_engine::Engine;
use tracelogic_formats::InputFile;
use tracelogic_model::{Rank, Selection};

/// The formats the page writes (those with a writer in `tracelogic_formats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SaveFormat {
    /// tracelogic's native text format.
    Text,
    /// SST DUMPI (`.meta` and one `.bin` per rank), in a tar archive.
    Dumpi,
    /// OTF2 (anchor, definitions and per-location event files), in a tar archive.
    Otf2,
}

impl SaveFormat {
    /// Every format, in the order the page offers them.
    pub const ALL: [SaveFormat; 3] = [SaveFormat::Text, SaveFormat::Dumpi, SaveFormat::Otf2];

    /// Short name, as `tracelogic convert --format` takes it.
    pub fn id(self) -> &'static str {
        match self {
            SaveFormat::Text => "text",
            SaveFormat::Dumpi => "dumpi",
            SaveFormat::Otf2 => "otf2",
        }
    }

    /// The format named `id` ([`SaveFormat::id`]).
    pub fn from_id(id: &str) -> Option<SaveFormat> {
        SaveFormat::ALL.into_iter().find(|f| f.id() == id)
    }
}

/// How the saved trace's ranks are renumbered (`tracelogic convert --renumber`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Renumbering {
    /// Ranks as they are.
    Keep,
    /// Rank r becomes n-1-r.
    Reverse,
    /// A random permutation drawn from this seed.
    Random(u64),
}

/// The file the worker built, as the page downloads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedTrace {
    /// Suggested file name (`NAME.txt` or `NAME-dumpi.tar` / `NAME-otf2.tar`).
    pub file_name: String,
    /// Its MIME type.
    pub mime: String,
    /// Its content, base64 (the worker's answers travel as JSON text).
    pub base64: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Files inside (the file itself for text, the tar's members otherwise).
    pub files: Vec<String>,
    /// Ranks written.
    pub ranks: u32,
    /// MPI calls written.
    pub calls: u64,
    /// `permutation[r]` is the new number of rank r; `None` when the ranks were kept.
    pub permutation: Option<Vec<Rank>>,
}

/// A plain file-name stem from a trace's source (letters, digits, `-`, `_`, `.`), never empty.
fn stem(source: &str) -> String {
    let last = source.rsplit(['/', '\\']).next().unwrap_or(source);
    let clean: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_matches('.').to_owned();
    if clean.is_empty() {
        "trace".into()
    } else {
        clean
    }
}

/// `files` as one uncompressed tar archive (fixed times and modes, so the same trace gives the
/// same bytes).
fn tar_of(files: &[InputFile]) -> Result<Vec<u8>, String> {
    let mut builder = tar::Builder::new(Vec::new());
    for f in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(f.bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        builder
            .append_data(&mut header, &f.name, f.bytes.as_slice())
            .map_err(|e| format!("cannot archive {}: {e}", f.name))?;
    }
    builder
        .into_inner()
        .map_err(|e| format!("cannot finish the archive: {e}"))
}

/// The part of the engine's trace `selection` keeps, written in `format` and renumbered as
/// asked, as one file to download.
pub fn save_trace(
    engine: &Engine,
    selection: &Selection,
    format: SaveFormat,
    renumbering: Renumbering,
) -> Result<SavedTrace, String> {
    let name = stem(&engine.trace().source);
    let (to, written_as) = match format {
        SaveFormat::Text => (TraceFormat::Text, format!("{name}.txt")),
        SaveFormat::Dumpi => (TraceFormat::Dumpi, name.clone()),
        SaveFormat::Otf2 => (TraceFormat::Otf2, name.clone()),
    };
    let renumbering = match renumbering {
        Renumbering::Keep => convert::Renumbering::Keep,
        Renumbering::Reverse => convert::Renumbering::Reverse,
        Renumbering::Random(seed) => convert::Renumbering::Random(seed),
    };
    let converted = engine.convert(selection, to, &renumbering, &written_as)?;
    let written: Vec<InputFile> = converted.files.into_iter().map(InputFile::from).collect();
    let files: Vec<String> = written.iter().map(|f| f.name.clone()).collect();
    let (file_name, mime, content) = match format {
        SaveFormat::Text => {
            let file = written.into_iter().next().ok_or("the writer wrote no file")?;
            (file.name, "text/plain", file.bytes)
        }
        SaveFormat::Dumpi | SaveFormat::Otf2 => (
            format!("{name}-{}.tar", format.id()),
            "application/x-tar",
            tar_of(&written)?,
        ),
    };
    Ok(SavedTrace {
        file_name,
        mime: mime.into(),
        bytes: content.len() as u64,
        base64: base64::engine::general_purpose::STANDARD.encode(&content),
        files,
        ranks: converted.ranks,
        calls: converted.calls,
        permutation: converted.permutation,
    })
}

/// The bytes of a [`SavedTrace`].
pub fn content(saved: &SavedTrace) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(&saved.base64)
        .map_err(|e| format!("the saved trace is damaged: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_engine::FieldWords;
    use tracelogic_model::Trace;

    fn sample(name: &str) -> Engine {
        Engine::new(crate::session::tests::sample_trace(name), FieldWords::Labels)
    }

    fn save_trace(engine: &Engine, format: SaveFormat, renumbering: Renumbering) -> Result<SavedTrace, String> {
        super::save_trace(engine, &Selection::all(), format, renumbering)
    }

    fn read_back(saved: &SavedTrace) -> Engine {
        let bytes = content(saved).unwrap();
        assert_eq!(bytes.len() as u64, saved.bytes);
        let trace: Trace =
            tracelogic_formats::read_trace(vec![InputFile::new(saved.file_name.clone(), bytes)]).unwrap();
        Engine::new(trace, FieldWords::Labels)
    }

    #[test]
    fn every_format_reads_back_with_the_same_summary() {
        let t = sample("npb-lu.S.8");
        let before = t.summary();
        for (format, renumbering) in SaveFormat::ALL
            .into_iter()
            .flat_map(|f| [(f, Renumbering::Keep), (f, Renumbering::Random(7))])
        {
            let saved = save_trace(&t, format, renumbering).unwrap();
            assert_eq!(saved.permutation.is_none(), renumbering == Renumbering::Keep);
            assert_eq!((saved.ranks, saved.calls), (8, t.trace().num_calls()));
            let back = read_back(&saved);
            assert_eq!(back.trace().format, format.id(), "{}", saved.file_name);
            let after = back.summary();
            let mut calls = before.calls_per_rank.clone();
            if let Some(perm) = &saved.permutation {
                for (r, &p) in perm.iter().enumerate() {
                    calls[p as usize] = before.calls_per_rank[r];
                }
            }
            assert_eq!(after.calls_per_rank, calls, "{format:?}");
            assert_eq!(after.calls_by_kind, before.calls_by_kind, "{format:?}");
            assert_eq!(
                (after.p2p_bytes, after.p2p_messages, after.matched_messages),
                (before.p2p_bytes, before.p2p_messages, before.matched_messages),
                "{format:?}"
            );
        }
    }

    #[test]
    fn renumbered_saves_move_each_rank_s_calls() {
        let t = sample("npb-lu.S.8");
        let saved = save_trace(&t, SaveFormat::Text, Renumbering::Random(4)).unwrap();
        let perm = saved.permutation.clone().unwrap();
        let back = read_back(&saved);
        for r in 0..t.trace().num_ranks() {
            assert_eq!(
                t.trace().ranks[r as usize].calls.len(),
                back.trace().ranks[perm[r as usize] as usize].calls.len()
            );
        }
        let reversed = save_trace(&t, SaveFormat::Dumpi, Renumbering::Reverse).unwrap();
        assert_eq!(reversed.permutation, Some((0..8).rev().collect()));
        assert!(reversed.file_name.ends_with("-dumpi.tar"), "{}", reversed.file_name);
        assert!(
            reversed.files.iter().any(|f| f.ends_with(".meta")),
            "{:?}",
            reversed.files
        );
    }

    #[test]
    fn file_names_are_plain() {
        assert_eq!(stem("a/b/npb lu<1>.S.8"), "npb_lu_1_.S.8");
        assert_eq!(stem(".."), "trace");
        assert_eq!(stem(""), "trace");
    }
}
