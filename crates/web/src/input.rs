//! Turning what the user gives the page — picked files, a picked folder, dropped files and
//! folders — into named `File` handles for the worker, which reads their bytes
//! ([`crate::worker`]) through [`blob_reader`], slice by slice; the page itself never reads a trace.
//!
//! Names keep the folder structure (`npb-lu.S.8/dumpi-0000.bin`, `traces/0.evt`) because
//! readers such as OTF2 find their files by relative path.

use js_sys::{Array, Promise};
use std::io::{self, Read, Seek, SeekFrom};
use tracelogic_formats::FormatError;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

/// Something dropped or picked, before its content is read.
pub enum Source {
    /// A file with the relative name it should get.
    File(String, File),
    /// A dropped file or folder, to be walked.
    Entry(FileSystemEntry),
}

/// The sources of a drop. Must run inside the `drop` handler: the browser empties the
/// `DataTransfer` once the event returns.
pub fn sources_from_drop(data: &DataTransfer) -> Vec<Source> {
    let items = data.items();
    let mut sources = Vec::new();
    for i in 0..items.length() {
        let Some(item) = items.get(i) else { continue };
        if item.kind() != "file" {
            continue;
        }
        match item.webkit_get_as_entry() {
            Ok(Some(entry)) => sources.push(Source::Entry(entry)),
            _ => {
                if let Ok(Some(file)) = item.get_as_file() {
                    sources.push(Source::File(file.name(), file));
                }
            }
        }
    }
    if sources.is_empty() {
        if let Some(files) = data.files() {
            return sources_from_list(&files);
        }
    }
    sources
}

/// The sources of an `<input type=file>` (with `webkitdirectory`, each file carries its path
/// inside the picked folder).
pub fn sources_from_list(files: &FileList) -> Vec<Source> {
    (0..files.length())
        .filter_map(|i| files.get(i))
        .map(|f| {
            let relative = js_sys::Reflect::get(&f, &JsValue::from_str("webkitRelativePath"))
                .ok()
                .and_then(|v| v.as_string())
                .filter(|p| !p.is_empty());
            Source::File(relative.unwrap_or_else(|| f.name()), f)
        })
        .collect()
}

/// A short label for what was given: the single file or folder name, or `N files`.
pub fn label(sources: &[Source]) -> String {
    match sources {
        [Source::File(name, _)] => name.clone(),
        [Source::Entry(e)] => e.name(),
        _ if sources.iter().all(|s| matches!(s, Source::File(..))) => {
            let folders: Vec<&str> = sources
                .iter()
                .filter_map(|s| match s {
                    Source::File(n, _) => n.split_once('/').map(|(d, _)| d),
                    Source::Entry(_) => None,
                })
                .collect();
            match folders.first() {
                Some(d) if folders.len() == sources.len() && folders.iter().all(|x| x == d) => d.to_string(),
                _ => format!("{} files", sources.len()),
            }
        }
        _ => format!("{} items", sources.len()),
    }
}

/// Walk folders and list every file with its relative name.
pub async fn files_of(sources: Vec<Source>) -> Result<Vec<(String, File)>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<FileSystemEntry> = Vec::new();
    for s in sources {
        match s {
            Source::File(name, f) => out.push((name, f)),
            Source::Entry(e) => stack.push(e),
        }
    }
    while let Some(entry) = stack.pop() {
        let name = entry.full_path().trim_start_matches('/').to_owned();
        if entry.is_directory() {
            let reader = entry.unchecked_ref::<FileSystemDirectoryEntry>().create_reader();
            // readEntries returns at most about 100 entries per call: repeat until empty.
            loop {
                let batch = JsFuture::from(Promise::new(&mut |resolve, reject| {
                    if let Err(e) = reader.read_entries_with_callback_and_callback(&resolve, &reject) {
                        let _ = reject.call1(&JsValue::NULL, &e);
                    }
                }))
                .await
                .map_err(|e| format!("{name}: cannot list the folder: {}", js_message(&e)))?;
                let batch: Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|v| v.unchecked_into::<FileSystemEntry>()));
            }
        } else {
            let file_entry = entry.unchecked_ref::<FileSystemFileEntry>();
            let file = JsFuture::from(Promise::new(&mut |resolve, reject| {
                file_entry.file_with_callback_and_callback(&resolve, &reject)
            }))
            .await
            .map_err(|e| format!("{name}: cannot open the file: {}", js_message(&e)))?;
            out.push((name, file.unchecked_into()));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A readable message from a JavaScript error value.
pub fn js_message(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Bytes fetched per `Blob.slice` (8 MiB): large enough that the per-slice cost vanishes, small
/// enough that progress moves on a slow disk and no single JS buffer is large.
pub const SLICE_BYTES: u64 = 8 << 20;

/// A file of `size` bytes read on demand in slices of at most `slice_bytes`, as [`Read`] +
/// [`Seek`]: `fetch(start, end, out)` fills `out` with bytes `[start, end)`. Small reads are served
/// from the last slice; a read asking for a whole slice or more gets it straight into its buffer.
pub struct SliceReader<F> {
    size: u64,
    slice_bytes: u64,
    pos: u64,
    /// The last slice fetched, and where it starts in the file.
    slice: Vec<u8>,
    slice_start: u64,
    fetch: F,
}

impl<F: FnMut(u64, u64, &mut [u8]) -> io::Result<()>> SliceReader<F> {
    /// A reader at position 0 of a file of `size` bytes.
    pub fn new(size: u64, slice_bytes: u64, fetch: F) -> Self {
        SliceReader {
            size,
            slice_bytes: slice_bytes.max(1),
            pos: 0,
            slice: Vec::new(),
            slice_start: 0,
            fetch,
        }
    }
}

impl<F: FnMut(u64, u64, &mut [u8]) -> io::Result<()>> Read for SliceReader<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let in_slice = self.pos >= self.slice_start && self.pos < self.slice_start + self.slice.len() as u64;
        if !in_slice {
            let start = self.pos;
            let end = (start + self.slice_bytes).min(self.size);
            let n = (end - start) as usize;
            if buf.len() >= n {
                (self.fetch)(start, end, &mut buf[..n])?;
                self.pos = end;
                return Ok(n);
            }
            let mut slice = std::mem::take(&mut self.slice);
            slice.resize(n, 0);
            (self.fetch)(start, end, &mut slice)?;
            self.slice = slice;
            self.slice_start = start;
        }
        let at = (self.pos - self.slice_start) as usize;
        let n = buf.len().min(self.slice.len() - at);
        buf[..n].copy_from_slice(&self.slice[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<F> Seek for SliceReader<F> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let target = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos =
            target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"))?;
        Ok(self.pos)
    }
}

/// A picked `File` (or any `Blob`) read on demand with `FileReaderSync` in slices of
/// [`SLICE_BYTES`]: the worker unpacks archives from it as a stream, so the compressed bytes are
/// never held whole. `FileReaderSync` exists in workers only.
///
/// Every slice fetched is reported to `progress` with the position it reaches; when that returns
/// false the read fails with an error wrapping [`FormatError::cancelled`]. A slice shorter than
/// asked (the file changed on disk while it was read) is an error too.
pub fn blob_reader<'p>(
    name: &str,
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
    progress: &'p mut dyn FnMut(u64) -> bool,
) -> SliceReader<impl FnMut(u64, u64, &mut [u8]) -> io::Result<()> + 'p> {
    let name = name.to_owned();
    let size = blob.size() as u64;
    SliceReader::new(size, SLICE_BYTES, move |start, end, out: &mut [u8]| {
        if !progress(end) {
            return Err(io::Error::other(FormatError::cancelled(&name)));
        }
        let buffer = blob
            .slice_with_f64_and_f64(start as f64, end as f64)
            .and_then(|s| reader.read_as_array_buffer(&s))
            .map_err(|e| io::Error::other(format!("cannot read bytes {start}..{end}: {}", js_message(&e))))?;
        let chunk = js_sys::Uint8Array::new(&buffer);
        if chunk.length() as u64 != end - start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read {} bytes of {start}..{end} (the file changed while it was read)",
                    chunk.length()
                ),
            ));
        }
        chunk.copy_to(out);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn reader(
        bytes: Vec<u8>,
        slice: u64,
        log: &RefCell<Vec<(u64, u64)>>,
    ) -> SliceReader<impl FnMut(u64, u64, &mut [u8]) -> io::Result<()> + '_> {
        SliceReader::new(bytes.len() as u64, slice, move |start, end, out: &mut [u8]| {
            log.borrow_mut().push((start, end));
            out.copy_from_slice(&bytes[start as usize..end as usize]);
            Ok(())
        })
    }

    #[test]
    fn small_reads_come_from_one_slice_and_large_reads_go_straight_through() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let log = RefCell::new(Vec::new());
        let mut r = reader(bytes.clone(), 4096, &log);
        let mut small = [0u8; 10];
        r.read_exact(&mut small).unwrap();
        r.read_exact(&mut small).unwrap();
        assert_eq!(&small, &bytes[10..20]);
        assert_eq!(*log.borrow(), [(0, 4096)]);
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, &bytes[20..]);
        assert!(log.borrow()[1..].iter().all(|(s, e)| e - s <= 4096));
        assert_eq!(log.borrow().last().unwrap().1, 10_000);
    }

    #[test]
    fn seeks_reposition_and_refuse_to_go_before_the_start() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let log = RefCell::new(Vec::new());
        let mut r = reader(bytes.clone(), 1000, &log);
        assert_eq!(r.seek(SeekFrom::End(-22)).unwrap(), 4978);
        let mut tail = Vec::new();
        r.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, &bytes[4978..]);
        r.seek(SeekFrom::Start(0)).unwrap();
        assert_eq!(r.seek(SeekFrom::Current(1500)).unwrap(), 1500);
        let mut one = [0u8; 1];
        r.read_exact(&mut one).unwrap();
        assert_eq!(one[0], bytes[1500]);
        assert!(r.seek(SeekFrom::Current(-2000)).is_err());
        assert_eq!(r.seek(SeekFrom::Start(9000)).unwrap(), 9000);
        assert_eq!(r.read(&mut one).unwrap(), 0, "past the end reads nothing");
    }

    #[test]
    fn an_archive_unpacks_through_small_slices() {
        use std::io::Write;
        // Varied lines, so the gzip stays within the 200× expansion limit.
        let text: Vec<u8> = (0..3000u64)
            .flat_map(|i| format!("{i} {}\n", i * 7919 % 10007).into_bytes())
            .collect();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let packed = gz.finish().unwrap();
        let log = RefCell::new(Vec::new());
        let len = packed.len() as u64;
        let mut r = reader(packed, 300, &log);
        let mut unpacker = tracelogic_formats::input::Unpacker::new();
        unpacker.add_reader("run/t.txt.gz", len, &mut r).unwrap();
        let files = unpacker.finish();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "t.txt");
        assert_eq!(files[0].bytes, text);
        assert!(log.borrow().iter().all(|(s, e)| e - s <= 300));
    }
}
