//! `cargo run --example pack -- OUT PATH...`: write the files of PATH as one fuzz input (see `tracelogic_fuzz::pack`),
//! to seed the corpora from real samples. A folder contributes its files (named relative to it,
//! archives unpacked, the samples' `expected/` dumps and notes left out); a file is taken as it
//! is, so an archive stays an archive for the `read_trace` target.

use std::path::PathBuf;
use tracelogic_formats::InputFile;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: pack OUT PATH...");
        std::process::exit(2);
    }
    let mut files: Vec<InputFile> = Vec::new();
    for arg in &args[1..] {
        let path = PathBuf::from(arg);
        if path.is_dir() {
            match tracelogic_formats::fs::load_paths(&[path]) {
                Ok(found) => files.extend(found.into_iter().filter(|f| {
                    !(f.name.starts_with("expected/") || f.name.ends_with(".md") || f.name.ends_with(".cfg"))
                })),
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            }
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match std::fs::read(&path) {
                Ok(bytes) => files.push(InputFile::new(name, bytes)),
                Err(e) => {
                    eprintln!("cannot read {arg}: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    if let Err(e) = std::fs::write(&args[0], tracelogic_fuzz::pack(&files)) {
        eprintln!("cannot write {}: {e}", args[0]);
        std::process::exit(1);
    }
}
