//! Turning what the user gives the page — picked files, a picked folder, dropped files and
//! folders — into named `File` handles for the worker, which reads their bytes
//! ([`crate::worker`]); the page itself never reads a trace.
//!
//! Names keep the folder structure (`npb-lu.S.8/dumpi-0000.bin`, `traces/0.evt`) because
//! readers such as OTF2 find their files by relative path.

use js_sys::{Array, Promise};
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
