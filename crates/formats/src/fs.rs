//! Loading input sets from disk (native builds only; the web app gets its files from the page).

use crate::{expand_archives, FormatError, InputFile};
use std::path::{Path, PathBuf};

/// Deepest folder nesting followed, so a symbolic-link loop ends with an error instead of
/// recursing forever.
const MAX_FOLDER_DEPTH: u32 = 32;

/// Read the files named on a command line into an input set.
///
/// A file becomes one [`InputFile`] named by its file name. A folder contributes every file
/// below it, recursively, named by its path relative to that folder with `/` separators and
/// in sorted order (so results do not depend on the directory listing order). Archives
/// (given directly or found in folders) are unpacked by [`expand_archives`], which also strips a
/// folder shared by all names. A path that does not exist or cannot be read gives an error
/// naming it.
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<InputFile>, FormatError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            load_folder(path, "", 0, &mut files)?;
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            files.push(InputFile::new(name, read_file(path)?));
        }
    }
    expand_archives(files)
}

fn load_folder(dir: &Path, prefix: &str, depth: u32, files: &mut Vec<InputFile>) -> Result<(), FormatError> {
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
            load_folder(&path, &format!("{name}/"), depth + 1, files)?;
        } else if meta.is_file() {
            files.push(InputFile::new(name, read_file(&path)?));
        }
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    std::fs::read(path).map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, e: std::io::Error) -> FormatError {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => format!("cannot read it: {e}"),
    };
    FormatError::new(&path.display().to_string(), what)
}
