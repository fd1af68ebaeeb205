//! Input sets from disk, with archives streamed from their files (native builds only; the web
//! app gets its files from the page).

use super::{archive_kind, InputFile, Unpacker};
use crate::FormatError;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Deepest folder nesting followed, so a symbolic-link loop ends with an error instead of
/// recursing forever.
const MAX_FOLDER_DEPTH: u32 = 32;

/// Read buffer between an archive on disk and its decompressor.
const FILE_BUFFER: usize = 1 << 20;

/// Read the files named on a command line into an input set, unpacking archives as they are read.
///
/// A file becomes one [`InputFile`] named by its file name. A folder contributes every file
/// below it, recursively, named by its path relative to that folder with `/` separators and
/// in sorted order (so results do not depend on the directory listing order). A file whose first
/// bytes say archive or compressed file (given directly or found in a folder) is read through a
/// buffered reader and unpacked by an [`Unpacker`], so only its members are held in memory, under
/// the limits of [`super::expand_archives`]; a folder shared by all names is stripped. A path that
/// does not exist or cannot be read gives an error naming it.
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<InputFile>, FormatError> {
    let mut found = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            list_folder(path, "", 0, &mut found)?;
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            found.push((name, path.clone()));
        }
    }
    let mut unpacker = Unpacker::new();
    for (name, path) in found {
        let mut file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let len = file.metadata().map_err(|e| io_error(&path, e))?.len();
        let mut head = Vec::with_capacity(512);
        (&mut file)
            .take(512)
            .read_to_end(&mut head)
            .map_err(|e| io_error(&path, e))?;
        if archive_kind(&name, &head).is_some() {
            let mut reader = BufReader::with_capacity(FILE_BUFFER, file);
            std::io::Seek::rewind(&mut reader).map_err(|e| io_error(&path, e))?;
            unpacker.add_reader(&name, len, &mut reader)?;
        } else {
            let mut bytes = head;
            if let Ok(extra) = usize::try_from(len.saturating_sub(bytes.len() as u64)) {
                bytes
                    .try_reserve_exact(extra)
                    .map_err(|_| FormatError::new(&name, format!("{len} bytes do not fit in this process's memory")))?;
            }
            file.read_to_end(&mut bytes).map_err(|e| io_error(&path, e))?;
            unpacker.add_file(InputFile::new(name, bytes))?;
        }
    }
    Ok(unpacker.finish())
}

fn list_folder(dir: &Path, prefix: &str, depth: u32, found: &mut Vec<(String, PathBuf)>) -> Result<(), FormatError> {
    if depth > MAX_FOLDER_DEPTH {
        return Err(FormatError::new(
            &dir.display().to_string(),
            format!("folders nest more than {MAX_FOLDER_DEPTH} levels deep (a link loop?)"),
        ));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_error(dir, e))?
        .map(|e| e.map(|e| e.path()).map_err(|e| io_error(dir, e)))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = format!("{prefix}{}", path.file_name().unwrap_or_default().to_string_lossy());
        let meta = std::fs::metadata(&path).map_err(|e| io_error(&path, e))?;
        if meta.is_dir() {
            list_folder(&path, &format!("{name}/"), depth + 1, found)?;
        } else if meta.is_file() {
            found.push((name, path));
        }
    }
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> FormatError {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => format!("cannot read it: {e}"),
    };
    FormatError::new(&path.display().to_string(), what)
}
