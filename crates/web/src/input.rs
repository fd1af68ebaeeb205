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
        read_blob_slice(&blob, &reader, start, end, out)
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
/// `FileReaderSync` in slices of [`SLICE_BYTES`] (workers only), small files announced next read
/// together ([`SlicedFiles::read_ahead_with`]). A slice shorter than asked (the file changed on
/// disk after the pick) is an error naming the file and the bytes.
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
        let joined = join_blobs(files.iter().map(|&i| &ahead[i])).map_err(|e| io::Error::other(js_message(&e)))?;
        read_blob_slice(&joined, &ahead_reader, start, end, out)
    });
    let sliced = SlicedFiles::new(list, SLICE_BYTES, move |file, start, end, out: &mut [u8]| {
        read_blob_slice(&blobs[file], &reader, start, end, out)
    });
    sliced.read_ahead_with(joined)
}

/// `blobs` laid end to end as one `new Blob(...)`.
fn join_blobs<'b>(blobs: impl Iterator<Item = &'b web_sys::Blob>) -> Result<web_sys::Blob, JsValue> {
    let parts: js_sys::Array = blobs.map(JsValue::from).collect();
    web_sys::Blob::new_with_blob_sequence(&parts)
}

/// Bytes `[start, end)` of `blob` into `out`, with `FileReaderSync`; fewer bytes than asked
/// (the file changed on disk after the pick) is an error.
fn read_blob_slice(
    blob: &web_sys::Blob,
    reader: &web_sys::FileReaderSync,
    start: u64,
    end: u64,
    out: &mut [u8],
) -> io::Result<()> {
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
}

/// Read every file of `source` but the per-rank event files (OTF2 `.evt`, DUMPI `.bin`: the
/// definitions, anchor, `.meta`) ahead, in
/// one pass over `blobs` laid end to end as one `new Blob(...)` ([`SlicedFiles::prefetch`]).
pub fn prefetch_blobs<F>(
    source: &mut SlicedFiles<F>,
    blobs: &[web_sys::Blob],
    reader: &web_sys::FileReaderSync,
) -> Result<(), FormatError> {
    let files: Vec<usize> = (0..source.list.len())
        .filter(|&i| !source.list[i].0.ends_with(".evt") && !source.list[i].0.ends_with(".bin"))
        .collect();
    let joined = join_blobs(files.iter().map(|&i| &blobs[i]))
        .map_err(|e| FormatError::new("the picked files", format!("cannot join them: {}", js_message(&e))))?;
    source.prefetch(&files, |start, end, out: &mut [u8]| {
        read_blob_slice(&joined, reader, start, end, out)
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
/// `new Blob(files)` read in large slices takes a fraction of that (docs/notes/performance-history.md,
/// "Web loading of many files").
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
pub fn append(file: &mut Vec<u8>, array: &js_sys::Uint8Array) -> bool {
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
pub fn changed(name: &str, part: &Chunk, got: u32) -> FormatError {
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
    let mut files = Vec::with_capacity(blobs.len());
    for (name, blob) in names.iter().zip(blobs) {
        files.push(file_buffer(name, blob.size() as u64)?);
    }
    let mut done = 0u64;
    read_slices(names, blobs, &mut |part, array| {
        if !append(&mut files[part.file], array) {
            return Err(changed(&names[part.file], part, array.length()));
        }
        done += part.end - part.start;
        if !progress(part.file, done) {
            return Err(FormatError::cancelled(&names[part.file]));
        }
        Ok(())
    })
    .await?;
    Ok(files)
}

/// An empty buffer with room for the `size` bytes of file `name`; an error when they cannot be
/// held.
pub fn file_buffer(name: &str, size: u64) -> Result<Vec<u8>, FormatError> {
    let mut bytes = Vec::new();
    usize::try_from(size)
        .ok()
        .and_then(|n| bytes.try_reserve_exact(n).ok())
        .ok_or_else(|| FormatError::new(name, format!("{size} bytes do not fit in the worker's memory")))?;
    Ok(bytes)
}

/// Read `blobs` (named `names`) end to end as one `new Blob(blobs)`, [`READS_IN_FLIGHT`] slices
/// of at most [`SLICE_BYTES`] at once with `Blob.arrayBuffer()` ([`plan_slices`]), and hand
/// each file part of each slice to `part` in order (the part's bytes as a view into the slice,
/// the right length). While `part` runs (copying the bytes, or decoding what they complete) the
/// browser goes on reading the slices in flight. A slice that cannot be read (a file removed or
/// changed on disk after the pick) is read again file part by file part, so the error names the
/// file and the bytes that failed. The first error of `part` ends the read.
pub async fn read_slices(
    names: &[String],
    blobs: &[web_sys::Blob],
    part: &mut dyn FnMut(&Chunk, &js_sys::Uint8Array) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let sizes: Vec<u64> = blobs.iter().map(|b| b.size() as u64).collect();
    let reads = plan_slices(&sizes, SLICE_BYTES);
    if reads.is_empty() {
        return Ok(());
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
        for chunk in &read.parts {
            let n = (chunk.end - chunk.start) as u32;
            let name = &names[chunk.file];
            let array = match &whole_slice {
                Some(a) => a.subarray(at, at + n),
                // The joined read failed or came back short: read this part from its own file,
                // whose error names it.
                None => {
                    let buffer = blobs[chunk.file]
                        .slice_with_f64_and_f64(chunk.start as f64, chunk.end as f64)
                        .map(|s| JsFuture::from(s.array_buffer()))
                        .map_err(|e| {
                            FormatError::at_offset(name, chunk.start, format!("cannot read it: {}", js_message(&e)))
                        })?
                        .await
                        .map_err(|e| {
                            FormatError::at_offset(
                                name,
                                chunk.start,
                                format!("cannot read bytes {}..{}: {}", chunk.start, chunk.end, js_message(&e)),
                            )
                        })?;
                    js_sys::Uint8Array::new(&buffer)
                }
            };
            at += n;
            if array.length() != n {
                return Err(changed(name, chunk, array.length()));
            }
            part(chunk, &array)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
