//! A trace written in another format, optionally restricted to a selection and with its ranks
//! renumbered ([`Trace::renumber_ranks`]): moves traces between tools and makes placement
//! experiments (the same run under another numbering).

use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_formats::InputFile;
pub use tracelogic_model::renumber::{check_permutation, parse_permutation, random_permutation, reverse_permutation};
use tracelogic_model::{Rank, Selection, Trace};

/// The formats tracelogic writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TraceFormat {
    /// tracelogic's native text format (one file).
    Text,
    /// SST DUMPI (`.meta` and one `.bin` per rank).
    Dumpi,
    /// OTF2 (anchor, definitions and per-location event files).
    Otf2,
}

impl TraceFormat {
    /// Short name (`text`, `dumpi`, `otf2`).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Text => "text",
            TraceFormat::Dumpi => "dumpi",
            TraceFormat::Otf2 => "otf2",
        }
    }
}

/// How the written trace's ranks are numbered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Renumbering {
    /// As they are.
    Keep,
    /// Rank r becomes n-1-r.
    Reverse,
    /// A random permutation drawn from this seed.
    Random(u64),
    /// `permutation[r]` is the new number of rank r.
    Given(Vec<Rank>),
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenFile {
    /// Its name (a relative path for the files of a DUMPI or OTF2 set).
    pub name: String,
    /// Its content.
    pub bytes: Vec<u8>,
}

impl From<InputFile> for WrittenFile {
    fn from(f: InputFile) -> WrittenFile {
        WrittenFile {
            name: f.name,
            bytes: f.bytes,
        }
    }
}

impl From<WrittenFile> for InputFile {
    fn from(f: WrittenFile) -> InputFile {
        InputFile::new(f.name, f.bytes)
    }
}

/// The trace written in another format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Converted {
    /// Where the trace came from.
    pub source: String,
    /// Format it was read from.
    pub from: String,
    /// Format written.
    pub to: TraceFormat,
    /// The files written, with their content (one for text, named as asked).
    pub files: Vec<WrittenFile>,
    /// World ranks written.
    pub ranks: u32,
    /// MPI calls written.
    pub calls: u64,
    /// `permutation[r]` is the new number of rank r; `None` when the ranks were kept.
    pub permutation: Option<Vec<Rank>>,
    /// The selection applied before renumbering (original rank numbers, absolute times).
    pub selection: Selection,
}

impl Engine {
    /// `selection` written in `format`, its ranks renumbered as `renumbering` says; `name` is the
    /// text file's name, or the base name of the DUMPI / OTF2 files (`tracelogic convert`, the
    /// page's "Save trace as…"). Errors of the renumbering are the permutation's own.
    pub fn convert(
        &self,
        selection: &Selection,
        format: TraceFormat,
        renumbering: &Renumbering,
        name: &str,
    ) -> Result<Converted> {
        let scope = self.scope(selection)?;
        let trace = scope.trace();
        let n = trace.num_ranks();
        let permutation = match renumbering {
            Renumbering::Keep => None,
            Renumbering::Reverse => Some(reverse_permutation(n)),
            Renumbering::Random(seed) => Some(random_permutation(n, *seed)),
            Renumbering::Given(p) => {
                check_permutation(p, n).map_err(|e| Error::Input(e.to_string()))?;
                Some(p.clone())
            }
        };
        let renumbered;
        let written: &Trace = match &permutation {
            None => trace,
            Some(perm) => {
                renumbered = trace.renumber_ranks(perm).map_err(|e| Error::Input(e.to_string()))?;
                &renumbered
            }
        };
        let files: Vec<InputFile> = match format {
            TraceFormat::Text => vec![InputFile::new(
                name,
                tracelogic_formats::text::write(written).into_bytes(),
            )],
            TraceFormat::Dumpi => tracelogic_formats::dumpi::write(written, name),
            TraceFormat::Otf2 => tracelogic_formats::otf2::write(written, name),
        };
        Ok(Converted {
            source: written.source.clone(),
            from: self.trace().format.clone(),
            to: format,
            files: files.into_iter().map(WrittenFile::from).collect(),
            ranks: written.num_ranks(),
            calls: written.num_calls(),
            permutation,
            selection: scope.selection,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;
    use tracelogic_formats::read_trace;

    #[test]
    fn a_reversed_lu_reads_back_with_each_rank_where_the_permutation_put_it() {
        let e = sample_engine("npb-lu.S.8");
        for format in [TraceFormat::Text, TraceFormat::Dumpi, TraceFormat::Otf2] {
            let c = e
                .convert(&Selection::all(), format, &Renumbering::Reverse, "lu")
                .unwrap();
            assert_eq!(c.permutation.as_deref(), Some(&[7, 6, 5, 4, 3, 2, 1, 0][..]));
            let back = read_trace(c.files.iter().cloned().map(InputFile::from).collect()).unwrap();
            assert_eq!((back.num_ranks(), back.num_calls()), (8, e.trace().num_calls()));
            // Rank 0's calls are rank 7's now.
            assert_eq!(back.ranks[7].calls.len(), e.trace().ranks[0].calls.len(), "{format:?}");
        }
        let bad = e.convert(
            &Selection::all(),
            TraceFormat::Text,
            &Renumbering::Given(vec![0, 0]),
            "x",
        );
        assert!(bad.unwrap_err().message().contains("2"));
    }

    #[test]
    fn a_selection_writes_only_what_it_keeps() {
        let e = sample_engine("npb-lu.S.8");
        let two = Selection {
            ranks: Some(vec![0, 1]),
            ..Selection::default()
        };
        let c = e
            .convert(&two, TraceFormat::Text, &Renumbering::Keep, "two.txt")
            .unwrap();
        assert_eq!(c.files[0].name, "two.txt");
        let kept = e.trace().ranks[0].calls.len() + e.trace().ranks[1].calls.len();
        assert_eq!(c.calls, kept as u64);
        assert_eq!(c.selection, two);
    }
}
