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

/// A trace's files read on demand, a file (or its first bytes) at a time, as the
/// [`FileSource`](tracelogic_formats::stream::FileSource) the streaming readers take
/// (`docs/large-traces.md`): `fetch(file, start, end, out)` fills `out` with bytes `[start, end)`
/// of file `file`, asked for in slices of at most `slice_bytes`. Nothing is kept between reads,
/// so the overview of an OTF2 trace holds the definitions and one rank's event files at a time.
///
/// In the worker the files are the page's `File` handles read with `FileReaderSync`
/// ([`blob_files`]); the slicing is pure, tested natively.
pub struct SlicedFiles<F> {
    list: Vec<(String, u64)>,
    slice_bytes: u64,
    fetch: F,
    /// Files read ahead ([`SlicedFiles::prefetch`]), handed out by their next read.
    kept: std::collections::HashMap<usize, Vec<u8>>,
    /// The reader's announced order of whole reads ([`tracelogic_formats::stream::FileSource::will_read`]): file → its
    /// position in `order`.
    order: Vec<usize>,
    position: std::collections::HashMap<usize, usize>,
    /// Reads bytes `[start, end)` of the given files laid end to end, when the source can
    /// ([`SlicedFiles::read_ahead_with`]): small files announced next are then read together.
    joined: Option<JoinedRead>,
}

/// Bytes `[start, end)` of `files` laid end to end, into `out`.
pub type JoinedRead = Box<dyn FnMut(&[usize], u64, u64, &mut [u8]) -> io::Result<()>>;

/// Most files one read ahead takes (with at most the slice size in bytes).
const AHEAD_FILES: usize = 512;

impl<F: FnMut(usize, u64, u64, &mut [u8]) -> io::Result<()>> SlicedFiles<F> {
    /// Files named and sized as `list` (relative names, as [`crate::worker`] gets them).
    pub fn new(list: Vec<(String, u64)>, slice_bytes: u64, fetch: F) -> Self {
        SlicedFiles {
            list,
            slice_bytes: slice_bytes.max(1),
            fetch,
            kept: std::collections::HashMap::new(),
            order: Vec::new(),
            position: std::collections::HashMap::new(),
            joined: None,
        }
    }

    /// Read small files the reader announces next ([`tracelogic_formats::stream::FileSource::will_read`]) together, up to
    /// the slice size and [`AHEAD_FILES`] files per read, with `joined`: in a browser each read
    /// costs about 1.4 ms whatever its size, so a 4,096-rank OTF2 trace's small event files
    /// take a few hundred reads instead of 4,096. At most one slice of bytes is held ahead.
    pub fn read_ahead_with(mut self, joined: JoinedRead) -> Self {
        self.joined = Some(joined);
        self
    }
}

impl<F> SlicedFiles<F> {
    /// When `index` is in the announced order and the files after it are small, read it with
    /// them in one joined read and keep them for their own reads.
    fn read_ahead(&mut self, index: usize) -> Result<(), FormatError> {
        let Some(&from) = self.position.get(&index) else {
            return Ok(());
        };
        let mut batch = Vec::new();
        let mut bytes = 0u64;
        for &f in &self.order[from..] {
            let size = self.list[f].1;
            if batch.len() == AHEAD_FILES || bytes + size > self.slice_bytes || self.kept.contains_key(&f) {
                break;
            }
            batch.push(f);
            bytes += size;
        }
        let Some(mut joined) = self.joined.take().filter(|_| batch.len() > 1) else {
            return Ok(());
        };
        let read = self.prefetch(&batch, |start, end, out| joined(&batch, start, end, out));
        self.joined = Some(joined);
        read
    }

    /// Read `files` whole ahead of their readers, in one pass over their bytes laid end to end:
    /// `read_joined(start, end, out)` fills `out` with bytes `[start, end)` of that concatenation
    /// ([`plan_slices`]: slices of at most the source's slice size, each holding many small
    /// files). Each file is then handed out by its next read, once. In a browser every read
    /// costs about 1.4 ms whatever its size, so the 4,097 definition files of a 4,096-rank OTF2
    /// trace take a few reads instead of 4,097.
    pub fn prefetch(
        &mut self,
        files: &[usize],
        mut read_joined: impl FnMut(u64, u64, &mut [u8]) -> io::Result<()>,
    ) -> Result<(), FormatError> {
        let sizes: Vec<u64> = files.iter().map(|&i| self.list[i].1).collect();
        let mut bytes: Vec<Vec<u8>> = sizes.iter().map(|_| Vec::new()).collect();
        let mut buffer = Vec::new();
        for read in plan_slices(&sizes, self.slice_bytes) {
            buffer.resize((read.end - read.start) as usize, 0);
            if let Err(e) = read_joined(read.start, read.end, &mut buffer) {
                let first = &read.parts[0];
                return Err(FormatError::at_offset(
                    &self.list[files[first.file]].0,
                    first.start,
                    e.to_string(),
                ));
            }
            let mut at = 0;
            for part in &read.parts {
                let n = (part.end - part.start) as usize;
                bytes[part.file].extend_from_slice(&buffer[at..at + n]);
                at += n;
            }
        }
        for (k, b) in bytes.into_iter().enumerate() {
            self.kept.insert(files[k], b);
        }
        Ok(())
    }
}

impl<F: FnMut(usize, u64, u64, &mut [u8]) -> io::Result<()>> tracelogic_formats::stream::FileSource for SlicedFiles<F> {
    fn list(&self) -> &[(String, u64)] {
        &self.list
    }

    fn read(&mut self, index: usize) -> Result<Vec<u8>, FormatError> {
        self.read_head(index, u64::MAX)
    }

    fn will_read(&mut self, order: &[usize]) {
        self.order = order.to_vec();
        self.position = order.iter().enumerate().map(|(p, &f)| (f, p)).collect();
    }

    fn read_head(&mut self, index: usize, len: u64) -> Result<Vec<u8>, FormatError> {
        if !self.kept.contains_key(&index) && len >= self.list[index].1 {
            self.read_ahead(index)?;
        }
        if let Some(mut kept) = self.kept.remove(&index) {
            kept.truncate(usize::try_from(len).unwrap_or(usize::MAX));
            return Ok(kept);
        }
        let (name, size) = &self.list[index];
        let n = len.min(*size);
        let mut bytes = Vec::new();
        usize::try_from(n)
            .ok()
            .and_then(|n| bytes.try_reserve_exact(n).ok())
            .ok_or_else(|| FormatError::new(name, format!("cannot hold {n} bytes in memory")))?;
        bytes.resize(n as usize, 0);
        let mut at = 0u64;
        while at < n {
            let end = n.min(at + self.slice_bytes);
            (self.fetch)(index, at, end, &mut bytes[at as usize..end as usize]).map_err(|e| {
                match e.get_ref().and_then(|inner| inner.downcast_ref::<FormatError>()) {
                    Some(f) if f.cancelled => FormatError::cancelled(name),
                    _ => FormatError::at_offset(name, at, e.to_string()),
                }
            })?;
            at = end;
        }
        Ok(bytes)
    }
}

/// `blobs` (the page's `File` handles, named `names`) as [`SlicedFiles`] read with
/// `FileReaderSync` in slices of [`SLICE_BYTES`] (workers only). A slice shorter than asked (the
/// file changed on disk after the pick) is an error naming the file and the bytes.
pub fn blob_files(
    names: &[String],
    blobs: Vec<web_sys::Blob>,
    reader: web_sys::FileReaderSync,
) -> SlicedFiles<impl FnMut(usize, u64, u64, &mut [u8]) -> io::Result<()>> {
    let list = names
        .iter()
        .cloned()
        .zip(blobs.iter().map(|b| b.size() as u64))
        .collect();
    let (ahead, ahead_reader) = (blobs.clone(), reader.clone());
    let joined: JoinedRead = Box::new(move |files: &[usize], start, end, out: &mut [u8]| {
        let parts: js_sys::Array = files.iter().map(|&i| JsValue::from(&ahead[i])).collect();
        let buffer = web_sys::Blob::new_with_blob_sequence(&parts)
            .and_then(|b| b.slice_with_f64_and_f64(start as f64, end as f64))
            .and_then(|s| ahead_reader.read_as_array_buffer(&s))
            .map_err(|e| io::Error::other(format!("cannot read bytes {start}..{end}: {}", js_message(&e))))?;
        let chunk = js_sys::Uint8Array::new(&buffer);
        if chunk.length() as u64 != end - start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a file changed while it was read".to_owned(),
            ));
        }
        chunk.copy_to(out);
        Ok(())
    });
    let sliced = SlicedFiles::new(list, SLICE_BYTES, move |file, start, end, out: &mut [u8]| {
        let buffer = blobs[file]
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
    });
    sliced.read_ahead_with(joined)
}

/// Read every file of `source` but the OTF2 event files (`.evt`: definitions, anchor) ahead, in
/// one pass over `blobs` laid end to end as one `new Blob(...)` ([`SlicedFiles::prefetch`]).
pub fn prefetch_blobs<F>(
    source: &mut SlicedFiles<F>,
    blobs: &[web_sys::Blob],
    reader: &web_sys::FileReaderSync,
) -> Result<(), FormatError> {
    let files: Vec<usize> = (0..source.list.len())
        .filter(|&i| !source.list[i].0.ends_with(".evt"))
        .collect();
    let parts: js_sys::Array = files.iter().map(|&i| JsValue::from(&blobs[i])).collect();
    let joined = web_sys::Blob::new_with_blob_sequence(&parts)
        .map_err(|e| FormatError::new("the picked files", format!("cannot join them: {}", js_message(&e))))?;
    source.prefetch(&files, |start, end, out: &mut [u8]| {
        let buffer = joined
            .slice_with_f64_and_f64(start as f64, end as f64)
            .and_then(|s| reader.read_as_array_buffer(&s))
            .map_err(|e| io::Error::other(format!("cannot read bytes {start}..{end}: {}", js_message(&e))))?;
        let chunk = js_sys::Uint8Array::new(&buffer);
        if chunk.length() as u64 != end - start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a file changed while it was read".to_owned(),
            ));
        }
        chunk.copy_to(out);
        Ok(())
    })
}

/// Slice reads kept in flight at once by [`read_blobs`]: the browser reads a `Blob` on its own
/// threads, so a few reads at once overlap its file access and inter-process copies. At most this
/// many slices of [`SLICE_BYTES`] are held outside wasm memory.
pub const READS_IN_FLIGHT: usize = 4;

/// Bytes `[start, end)` of file `file`: the part of it that one slice read covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Index of the file.
    pub file: usize,
    /// First byte, in the file.
    pub start: u64,
    /// One past the last byte, in the file.
    pub end: u64,
}

/// One `Blob.slice(start, end).arrayBuffer()` of all files end to end, and the file parts it
/// holds, in order: a slice spans many small files, or part of one large file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceRead {
    /// First byte over all files.
    pub start: u64,
    /// One past the last byte over all files.
    pub end: u64,
    /// The file parts the slice's bytes belong to, front to back.
    pub parts: Vec<Chunk>,
}

/// The reads that cover files of `sizes` bytes laid end to end, each at most `slice_bytes` long,
/// with the parts of the files each one holds (an empty file has none).
///
/// Why end to end: a browser's `File.arrayBuffer()` costs about 1.5 ms each whatever its size
/// and however many are in flight, so 4,097 small rank files took 7 s read one by one; one
/// `new Blob(files)` read in large slices takes a fraction of that (docs/performance.md).
pub fn plan_slices(sizes: &[u64], slice_bytes: u64) -> Vec<SliceRead> {
    let step = slice_bytes.max(1);
    let mut reads: Vec<SliceRead> = Vec::new();
    let mut at = 0u64;
    for (file, &size) in sizes.iter().enumerate() {
        let mut start = 0;
        while start < size {
            let open = reads.last().filter(|r| r.end - r.start < step).is_some();
            if !open {
                reads.push(SliceRead {
                    start: at,
                    end: at,
                    parts: Vec::new(),
                });
            }
            let read = reads.last_mut().expect("a slice is open");
            let end = size.min(start + (step - (read.end - read.start)));
            read.parts.push(Chunk { file, start, end });
            read.end += end - start;
            at += end - start;
            start = end;
        }
    }
    reads
}

/// Whether a file should be unpacked as it streams in ([`blob_reader`] and
/// `formats::input::Unpacker::add_reader`) rather than read whole first: its name says archive
/// or compressed file, so its bytes are not kept, only its members. A file named otherwise that
/// turns out to be an archive is still unpacked, from its bytes in memory.
pub fn streamed_by_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".gz", ".tgz", ".zst", ".tzst", ".zstd", ".zip", ".tar"]
        .iter()
        .any(|suffix| lower.ends_with(suffix))
}

/// Append `array` to `file`, whose capacity was reserved at its full size; an array longer than
/// the room left means the file grew on disk while it was read.
fn append(file: &mut Vec<u8>, array: &js_sys::Uint8Array) -> bool {
    let n = array.length() as usize;
    if file.len() + n > file.capacity() {
        return false;
    }
    let filled = file.len();
    array.copy_to_uninit(&mut file.spare_capacity_mut()[..n]);
    // SAFETY: the `n` bytes past the length were just initialised by `copy_to_uninit`, and the
    // capacity holds them (checked above).
    unsafe { file.set_len(filled + n) };
    true
}

/// The error of a part that came back `got` bytes long.
fn changed(name: &str, part: &Chunk, got: u32) -> FormatError {
    FormatError::at_offset(
        name,
        part.start,
        format!(
            "read {got} bytes of {}..{} (the file changed while it was read)",
            part.start, part.end
        ),
    )
}

/// Read whole `blobs` (named `names`) into wasm memory: all of them end to end as one
/// `new Blob(blobs)`, [`READS_IN_FLIGHT`] slices of at most [`SLICE_BYTES`] at once with
/// `Blob.arrayBuffer()` ([`plan_slices`]), each slice split into its files by their sizes and
/// copied once into each file's buffer (allocated at the file's size up front, so an input that
/// does not fit fails before any read).
///
/// When a slice cannot be read (a file was removed or changed on disk after the pick), its files'
/// parts are read again one by one, so the error names the file and the byte range that failed.
///
/// `progress` sees the file a part belongs to and the bytes read so far over all files after
/// every part (files complete in order); when it returns false the read stops with
/// [`FormatError::cancelled`].
pub async fn read_blobs(
    names: &[String],
    blobs: &[web_sys::Blob],
    progress: &mut dyn FnMut(usize, u64) -> bool,
) -> Result<Vec<Vec<u8>>, FormatError> {
    let sizes: Vec<u64> = blobs.iter().map(|b| b.size() as u64).collect();
    let mut files = Vec::with_capacity(blobs.len());
    for (name, &size) in names.iter().zip(&sizes) {
        let mut bytes = Vec::new();
        usize::try_from(size)
            .ok()
            .and_then(|n| bytes.try_reserve_exact(n).ok())
            .ok_or_else(|| FormatError::new(name, format!("{size} bytes do not fit in the worker's memory")))?;
        files.push(bytes);
    }
    let reads = plan_slices(&sizes, SLICE_BYTES);
    if reads.is_empty() {
        return Ok(files);
    }
    let whole = if blobs.len() == 1 {
        blobs[0].clone()
    } else {
        let parts: Array = blobs.iter().collect();
        web_sys::Blob::new_with_blob_sequence(&parts).map_err(|e| {
            FormatError::new(
                &names[0],
                format!("cannot join the {} files for reading: {}", blobs.len(), js_message(&e)),
            )
        })?
    };
    let start_read = |r: &SliceRead| -> Result<JsFuture, JsValue> {
        whole
            .slice_with_f64_and_f64(r.start as f64, r.end as f64)
            .map(|slice| JsFuture::from(slice.array_buffer()))
    };
    let mut in_flight = std::collections::VecDeque::with_capacity(READS_IN_FLIGHT);
    let mut next = 0;
    let mut done = 0u64;
    for read in &reads {
        while next < reads.len() && in_flight.len() < READS_IN_FLIGHT {
            in_flight.push_back(start_read(&reads[next]));
            next += 1;
        }
        let started = in_flight.pop_front().expect("the slice being waited for is in flight");
        let buffer = match started {
            Ok(future) => future.await.ok(),
            Err(_) => None,
        };
        let whole_slice = buffer
            .map(|b| js_sys::Uint8Array::new(&b))
            .filter(|a| a.length() as u64 == read.end - read.start);
        let mut at = 0u32;
        for part in &read.parts {
            let n = (part.end - part.start) as u32;
            let name = &names[part.file];
            let array = match &whole_slice {
                Some(a) => a.subarray(at, at + n),
                // The joined read failed or came back short: read this part from its own file,
                // whose error names it.
                None => {
                    let buffer = blobs[part.file]
                        .slice_with_f64_and_f64(part.start as f64, part.end as f64)
                        .map(|s| JsFuture::from(s.array_buffer()))
                        .map_err(|e| {
                            FormatError::at_offset(name, part.start, format!("cannot read it: {}", js_message(&e)))
                        })?
                        .await
                        .map_err(|e| {
                            FormatError::at_offset(
                                name,
                                part.start,
                                format!("cannot read bytes {}..{}: {}", part.start, part.end, js_message(&e)),
                            )
                        })?;
                    js_sys::Uint8Array::new(&buffer)
                }
            };
            at += n;
            if array.length() != n || !append(&mut files[part.file], &array) {
                return Err(changed(name, part, array.length()));
            }
            done += u64::from(n);
            if !progress(part.file, done) {
                return Err(FormatError::cancelled(name));
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn slices_cover_every_file_end_to_end_within_the_slice_size() {
        let sizes = [0, 5, 10, 11, 1, 0, 3, 2];
        let reads = plan_slices(&sizes, 5);
        let total: u64 = sizes.iter().sum();
        let mut at = 0;
        let mut seen = vec![0u64; sizes.len()];
        for r in &reads {
            assert_eq!(r.start, at, "slices follow each other without gaps");
            assert!(r.end > r.start && r.end - r.start <= 5, "{r:?} within the slice size");
            let held: u64 = r.parts.iter().map(|p| p.end - p.start).sum();
            assert_eq!(held, r.end - r.start, "{r:?}: the parts are the slice's bytes");
            for p in &r.parts {
                assert_eq!(p.start, seen[p.file], "file {} is read front to back", p.file);
                assert!(p.end > p.start && p.end <= sizes[p.file]);
                seen[p.file] = p.end;
            }
            at = r.end;
        }
        assert_eq!(at, total);
        assert_eq!(seen, sizes, "every file is read to its end");
        assert!(
            reads[..reads.len() - 1].iter().all(|r| r.end - r.start == 5),
            "only the last slice is short"
        );
        assert_eq!(reads.len() as u64, total.div_ceil(5));
        let files: Vec<usize> = reads.iter().flat_map(|r| r.parts.iter().map(|p| p.file)).collect();
        assert!(files.windows(2).all(|w| w[0] <= w[1]), "files in order");
    }

    #[test]
    fn many_small_files_share_a_slice_and_a_large_one_spans_several() {
        let mut sizes = vec![13_000u64; 4096];
        sizes.push(20 << 20);
        let reads = plan_slices(&sizes, SLICE_BYTES);
        let small_total: u64 = 13_000 * 4096;
        // 53 MB of small files in 8 MiB slices: 7 reads rather than 4,096, then the large file.
        assert_eq!(reads.len() as u64, (small_total + (20 << 20)).div_ceil(SLICE_BYTES));
        assert!(
            reads[0].parts.len() > 600,
            "{} files in the first slice",
            reads[0].parts.len()
        );
        let large: Vec<&Chunk> = reads.iter().flat_map(|r| &r.parts).filter(|p| p.file == 4096).collect();
        assert!(large.len() >= 3, "the large file spans slices");
        assert_eq!(
            plan_slices(&[0, 0], 8),
            Vec::<SliceRead>::new(),
            "empty files need no read"
        );
    }

    #[test]
    fn archives_are_streamed_by_their_names() {
        for name in [
            "run.tar.gz",
            "a/B.TGZ",
            "x.tar.zst",
            "t.zip",
            "plain.tar",
            "rank.bin.zstd",
        ] {
            assert!(streamed_by_name(name), "{name}");
        }
        for name in [
            "trace-0000.bin",
            "trace.meta",
            "traces/0.evt",
            "run.txt",
            "gz",
            "tar.bin",
        ] {
            assert!(!streamed_by_name(name), "{name}");
        }
    }

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
    fn sliced_files_read_whole_files_and_heads_in_slices_and_name_the_failing_file() {
        use tracelogic_formats::stream::FileSource;
        let a: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let b: Vec<u8> = vec![7; 10];
        let files = [a.clone(), b.clone(), Vec::new()];
        let log = RefCell::new(Vec::new());
        let mut source = SlicedFiles::new(
            vec![("t/0.evt".into(), 1000), ("t.def".into(), 10), ("empty".into(), 0)],
            300,
            |file, start, end, out: &mut [u8]| {
                log.borrow_mut().push((file, start, end));
                out.copy_from_slice(&files[file][start as usize..end as usize]);
                Ok(())
            },
        );
        assert_eq!(source.list()[1], ("t.def".to_owned(), 10));
        assert_eq!(source.read(0).unwrap(), a);
        assert_eq!(
            *log.borrow(),
            [(0, 0, 300), (0, 300, 600), (0, 600, 900), (0, 900, 1000)],
            "whole file in slices of at most 300 bytes"
        );
        log.borrow_mut().clear();
        assert_eq!(source.read_head(0, 450).unwrap(), &a[..450]);
        assert_eq!(*log.borrow(), [(0, 0, 300), (0, 300, 450)], "a head reads no further");
        assert_eq!(
            source.read_head(1, 1 << 20).unwrap(),
            b,
            "a head longer than the file is the file"
        );
        assert_eq!(source.read(2).unwrap(), Vec::<u8>::new());
        // Through the streaming trait, one rank file at a time: the CLI's reader sees the same bytes.
        let mut failing = SlicedFiles::new(vec![("t/3.evt".into(), 700)], 300, |_, start, _, _: &mut [u8]| {
            if start >= 300 {
                Err(io::Error::other("the disk went away"))
            } else {
                Ok(())
            }
        });
        let e = failing.read(0).unwrap_err().to_string();
        assert!(
            e.contains("t/3.evt") && e.contains("300") && e.contains("the disk went away"),
            "{e}"
        );
        let mut cancelled = SlicedFiles::new(vec![("x".into(), 5)], 300, |_, _, _, _: &mut [u8]| {
            Err(io::Error::other(FormatError::cancelled("x")))
        });
        assert!(cancelled.read(0).unwrap_err().cancelled);
    }

    #[test]
    fn prefetched_files_come_from_few_joined_reads_and_are_handed_out_once() {
        use tracelogic_formats::stream::FileSource;
        let files: Vec<Vec<u8>> = vec![vec![1; 5], vec![2; 700], vec![], vec![3; 7], vec![4; 3]];
        let list = files
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("f{i}"), f.len() as u64))
            .collect();
        let single = RefCell::new(0);
        let mut source = SlicedFiles::new(list, 256, |file, start, end, out: &mut [u8]| {
            *single.borrow_mut() += 1;
            out.copy_from_slice(&files[file][start as usize..end as usize]);
            Ok(())
        });
        let wanted = [0, 2, 3, 4];
        let joined: Vec<u8> = wanted.iter().flat_map(|&i| files[i].clone()).collect();
        let mut reads = 0;
        source
            .prefetch(&wanted, |start, end, out: &mut [u8]| {
                reads += 1;
                out.copy_from_slice(&joined[start as usize..end as usize]);
                Ok(())
            })
            .unwrap();
        assert_eq!(reads, 1, "15 bytes of four files in one read");
        for &i in &wanted {
            assert_eq!(source.read(i).unwrap(), files[i], "file {i}");
        }
        assert_eq!(source.read_head(1, 3).unwrap(), vec![2; 3]);
        assert_eq!(*single.borrow(), 1, "only the file not prefetched was read on its own");
        assert_eq!(source.read(3).unwrap(), files[3], "read again once handed out");
        assert_eq!(*single.borrow(), 2);
        let e = source
            .prefetch(&[1], |_, _, _: &mut [u8]| Err(io::Error::other("gone")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("f1") && e.contains("gone"), "{e}");
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn an_otf2_overview_over_sliced_files_equals_the_one_over_files_in_memory() {
        use tracelogic_formats::stream::{FileSource, MemoryFiles};
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/pyotf2-generated-4rank");
        let files = tracelogic_formats::input::read_paths(&[dir]).unwrap();
        let bytes: Vec<Vec<u8>> = files.iter().map(|f| f.bytes.clone()).collect();
        let list: Vec<(String, u64)> = files.iter().map(|f| (f.name.clone(), f.bytes.len() as u64)).collect();
        let mut sliced = SlicedFiles::new(list, 64, |file, start, end, out: &mut [u8]| {
            out.copy_from_slice(&bytes[file][start as usize..end as usize]);
            Ok(())
        });
        assert!(tracelogic_formats::stream::streams(&sliced));
        let mut memory = MemoryFiles::new(files);
        let nothing = &mut tracelogic_formats::NoProgress;
        let a = tracelogic_engine::overview::overview(&mut sliced, 32, nothing).unwrap();
        let b = tracelogic_engine::overview::overview(&mut memory, 32, nothing).unwrap();
        assert_eq!(a.input_bytes, b.input_bytes);
        assert_eq!(a.streamed, b.streamed);
        assert_eq!(
            a.topology.identification.matched.as_ref().map(|m| &m.label),
            b.topology.identification.matched.as_ref().map(|m| &m.label),
            "the same topology (its timings differ)"
        );
        assert_eq!(a.overview, b.overview);
        assert!(a.streamed && a.overview.calls > 0);
        let _ = sliced.list();
    }

    /// With a joined read, the event files the OTF2 stream announces are read several at a time
    /// (here all four of a 4-rank sample in one read, the slice holding them all): no event file
    /// is fetched alone, and the overview, whole or by parts, is the one over files in memory.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn announced_event_files_are_read_together_and_give_the_same_overview() {
        use tracelogic_formats::stream::MemoryFiles;
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/pyotf2-generated-4rank");
        let files = tracelogic_formats::input::read_paths(&[dir]).unwrap();
        let bytes: std::rc::Rc<Vec<Vec<u8>>> = std::rc::Rc::new(files.iter().map(|f| f.bytes.clone()).collect());
        let list: Vec<(String, u64)> = files.iter().map(|f| (f.name.clone(), f.bytes.len() as u64)).collect();
        let events = list.iter().filter(|(n, _)| n.ends_with(".evt")).count();
        assert_eq!(events, 4);
        let nothing = &mut tracelogic_formats::NoProgress;
        let want = tracelogic_engine::overview::overview(&mut MemoryFiles::new(files.clone()), 32, nothing).unwrap();
        for parts in [1usize, 2] {
            let alone = std::rc::Rc::new(RefCell::new(Vec::new()));
            let together = std::rc::Rc::new(RefCell::new(Vec::new()));
            let mut got = Vec::new();
            for part in 0..parts {
                let (b, log) = (bytes.clone(), alone.clone());
                let sliced = SlicedFiles::new(list.clone(), 1 << 20, move |file, start, end, out: &mut [u8]| {
                    log.borrow_mut().push(file);
                    out.copy_from_slice(&b[file][start as usize..end as usize]);
                    Ok(())
                });
                let (b, log) = (bytes.clone(), together.clone());
                let mut sliced = sliced.read_ahead_with(Box::new(move |fs: &[usize], start, end, out: &mut [u8]| {
                    log.borrow_mut().push(fs.to_vec());
                    let joined: Vec<u8> = fs.iter().flat_map(|&f| b[f].iter().copied()).collect();
                    out.copy_from_slice(&joined[start as usize..end as usize]);
                    Ok(())
                }));
                let owned = move |ranks: u32| {
                    let n = ranks as usize;
                    (n * part / parts) as u32..(n * (part + 1) / parts) as u32
                };
                got.push(tracelogic_engine::overview::overview_part(&mut sliced, 32, &owned, nothing).unwrap());
            }
            let alone_events = alone.borrow().iter().filter(|&&f| list[f].0.ends_with(".evt")).count();
            assert_eq!(alone_events, 0, "{parts} parts: event files fetched one by one");
            assert_eq!(together.borrow().len(), parts, "{parts} parts: one joined read each");
            let report = tracelogic_engine::overview::overview_of_stream_parts(got).unwrap();
            assert_eq!(report.overview, want.overview, "{parts} parts");
        }
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
