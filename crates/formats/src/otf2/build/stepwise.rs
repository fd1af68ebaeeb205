//! A whole read fed one rank at a time: the caller brings each rank's event files when it has
//! them, so a source that reads asynchronously (the web worker's `Blob` reads) decodes one rank
//! while the next ones are still being read, and holds only the event files not decoded yet.

use super::*;

/// A whole read of an OTF2 archive whose event files are handed in by the caller, one part (a
/// rank's locations) at a time in [`StepwiseRead::event_files`] order.
///
/// The parts are those of the threaded read ([`parts_by_rank`], read by [`read_part`] and
/// merged by [`merge`]), so the trace, its ids, warnings and errors are those of
/// [`crate::otf2::read`] on the same files (`tests/stepwise_read.rs`).
pub struct StepwiseRead<'a> {
    trace: Trace,
    shared: Shared<'a>,
    run: Run,
    per_rank: Vec<PartSpec>,
    location_warnings: Vec<(u32, String)>,
    /// The parts read so far, in order.
    parts: Vec<Part>,
    /// The archive's files with only the event files of the part being read filled in.
    files: Vec<InputFile>,
    bytes_total: u64,
}

impl<'a> StepwiseRead<'a> {
    /// A read of `archive` (opened with its event files empty; `sizes` are every file's true
    /// size, in the archive's file order). `None` when the archive is read in one part (one
    /// rank, or many parts each setting up a large region table): then read it whole.
    pub fn new(archive: &'a Archive<'a>, sizes: &[u64]) -> Result<Option<StepwiseRead<'a>>, FormatError> {
        let bytes_total = sizes.iter().sum();
        let begun = begin(archive, false)?;
        if !parts_pay(&begun.shared, &begun.per_rank, bytes_total) {
            return Ok(None);
        }
        let files = archive
            .files
            .iter()
            .map(|_| InputFile::new(String::new(), Vec::new()))
            .collect();
        Ok(Some(StepwiseRead {
            trace: begun.trace,
            shared: begun.shared,
            run: Run {
                several: true,
                callpath_storage: AtomicUsize::new(0),
                failed_at: AtomicUsize::new(usize::MAX),
            },
            per_rank: begun.per_rank,
            location_warnings: begun.location_warnings,
            parts: Vec::new(),
            files,
            bytes_total,
        }))
    }

    /// Parts of the read (one per rank with locations).
    pub fn parts(&self) -> usize {
        self.per_rank.len()
    }

    /// Parts read so far: the next one read is this one.
    pub fn parts_read(&self) -> usize {
        self.parts.len()
    }

    /// The event files part `part` reads (its locations' in definition order), by index into
    /// the archive's files.
    pub fn event_files(&self, part: usize) -> Vec<usize> {
        let locations = &self.shared.archive.locations;
        self.per_rank[part]
            .locations
            .iter()
            .filter_map(|&(i, _)| locations[i].evt)
            .collect()
    }

    /// Every byte of the archive: its files' true sizes together.
    pub fn bytes_total(&self) -> u64 {
        self.bytes_total
    }

    /// Read the next part from `events`, its event files as (index into the archive's files,
    /// bytes) (files of the part it does not give read as empty: give every non-empty one);
    /// they are dropped once it is read.
    /// `advance(bytes)` sees the part's bytes decoded so far and cancels with false. A
    /// location that fails does not end the read here: its error comes from
    /// [`StepwiseRead::finish`], which gives the first in location order, as a whole read does.
    pub fn read_next(
        &mut self,
        events: Vec<(usize, Vec<u8>)>,
        advance: &mut dyn FnMut(u64) -> bool,
    ) -> Result<(), FormatError> {
        let Some(spec) = self.per_rank.get(self.parts.len()) else {
            return Err(FormatError::new(
                self.shared.archive.anchor_name(),
                "every part of the read was already read",
            ));
        };
        let archive = self.shared.archive;
        for &(location, _) in &spec.locations {
            if let Some(e) = archive.locations[location].evt {
                self.files[e] = InputFile::new(archive.files[e].name.clone(), Vec::new());
            }
        }
        for (index, bytes) in events {
            self.files[index].bytes = bytes;
        }
        let mut report = |_: usize, inside: Option<u64>, before: u64| advance(before + inside.unwrap_or(0));
        let part = read_part(&self.shared, &self.run, spec, None, &mut report, &self.files);
        for f in &mut self.files {
            if !f.bytes.is_empty() || !f.name.is_empty() {
                *f = InputFile::new(String::new(), Vec::new());
            }
        }
        self.parts.push(part?);
        Ok(())
    }

    /// The trace once every part was read; `None` when the parts' call paths together passed
    /// the budget (only a read in one part knows which it keeps: read the archive whole).
    pub fn finish(mut self) -> Result<Option<Trace>, FormatError> {
        if self.parts.len() < self.per_rank.len() {
            return Err(FormatError::new(
                self.shared.archive.anchor_name(),
                format!("{} of {} parts were read", self.parts.len(), self.per_rank.len()),
            ));
        }
        if self.parts.iter().any(|p| p.over_budget) {
            return Ok(None);
        }
        let first_failure = self
            .parts
            .iter_mut()
            .filter_map(|p| p.failure.take())
            .min_by_key(|(index, _)| *index);
        if let Some((_, e)) = first_failure {
            return Err(e);
        }
        let parts = self.per_rank.into_iter().zip(self.parts).collect();
        merge(&mut self.trace, parts, self.location_warnings);
        let archive = self.shared.archive;
        if !archive.warnings.is_empty() {
            let mut warnings = archive.warnings.clone();
            warnings.append(&mut self.trace.warnings);
            self.trace.warnings = warnings;
        }
        self.trace.shrink_to_fit();
        Ok(Some(self.trace))
    }
}
