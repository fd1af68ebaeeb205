//! The repository stands alone and its docs point at things that exist: no file reads or cites
//! anything outside it (papers are cited by the short names of docs/references.md), and every
//! relative link in README.md and docs/ names a file of the repository.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Text files of the repository (sources, tests, scripts, docs), without build output and
/// installed node modules.
fn text_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(
                    name.as_str(),
                    "target" | "node_modules" | ".git" | "dist" | ".venv" | "artifacts"
                ) {
                    stack.push(path);
                }
            } else if ["rs", "md", "mjs", "js", "sh", "py", "toml", "html"]
                .iter()
                .any(|e| path.extension().is_some_and(|x| x == *e))
                || path
                    .parent()
                    .is_some_and(|p| p.file_name().is_some_and(|n| n == "scripts" || n == ".ci"))
            {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn nothing_reads_or_cites_what_lies_outside_the_repository() {
    let this = root().join("tests/repository.rs");
    // Spelled in pieces so that this list is not itself a reference outside the repository.
    let forbidden = [
        concat!("..", "/shared"),
        "shared/data",
        "shared/docs",
        "seed 00",
        "Seed 00",
    ];
    let mut found = Vec::new();
    for path in text_files() {
        if path == this {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else { continue };
        for (n, line) in text.lines().enumerate() {
            if forbidden.iter().any(|f| line.contains(f)) {
                found.push(format!(
                    "{}:{}: {}",
                    path.strip_prefix(root()).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references outside the repository:\n{}",
        found.join("\n")
    );
}

/// `[text](target)` links of a markdown text whose target is a relative path.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let path = target.split('#').next().unwrap_or("");
        if !path.is_empty() && !path.contains("://") && !path.starts_with("mailto:") && !path.contains(' ') {
            out.push(path.to_string());
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_names_a_file_of_the_repository() {
    let mut docs: Vec<PathBuf> = vec![root().join("README.md")];
    for e in fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = fs::read_to_string(doc).unwrap();
        for link in relative_links(&text) {
            checked += 1;
            if !doc.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", doc.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(checked > 10, "only {checked} links found: the link parser is broken");
    assert!(broken.is_empty(), "links to missing files:\n{}", broken.join("\n"));
}

#[test]
fn the_link_parser_finds_relative_links_only() {
    let links = relative_links("see [cli](docs/cli.md#x), [web](https://x.org/a) and [me](#top) [r](../README.md)");
    assert_eq!(links, ["docs/cli.md", "../README.md"]);
}

/// Every `.rs` file under `dir` (no build output).
fn rust_sources() -> Vec<PathBuf> {
    text_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect()
}

/// Test names and fields cited in the docs (a backticked snake_case name of four or more words,
/// as `the_collective_root_anchors_the_pairing`) and the `.rs` files they cite must exist.
#[test]
fn every_test_and_source_file_cited_in_the_docs_exists() {
    let mut docs: Vec<PathBuf> = vec![root().join("README.md")];
    for e in fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let code: String = rust_sources()
        .iter()
        .filter_map(|p| fs::read_to_string(p).ok())
        .collect::<Vec<_>>()
        .join("\n");
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let defined = |name: &str| {
        code.match_indices(name).any(|(i, _)| {
            let before = code[..i].chars().next_back().is_none_or(|c| !is_ident(c));
            let after = code[i + name.len()..].chars().next().is_none_or(|c| !is_ident(c));
            before && after
        })
    };
    let mut missing = Vec::new();
    let mut names = 0;
    for doc in &docs {
        let text = fs::read_to_string(doc).unwrap();
        for quoted in text.split('`').skip(1).step_by(2) {
            // `module::tests::name` and `tests/file.rs::name` cite the last segment.
            let quoted = quoted.rsplit("::").next().unwrap_or(quoted);
            let words = quoted.split('_').count();
            let snake = !quoted.is_empty()
                && quoted
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if snake && words >= 4 {
                names += 1;
                if !defined(quoted) {
                    missing.push(format!("{}: {quoted}", doc.strip_prefix(root()).unwrap().display()));
                }
            } else if quoted.ends_with(".rs") && !quoted.contains(' ') && !quoted.contains('*') && !quoted.contains('{')
            {
                let found = root().join(quoted).exists() || rust_sources().iter().any(|p| p.ends_with(quoted));
                if !found {
                    missing.push(format!("{}: {quoted}", doc.strip_prefix(root()).unwrap().display()));
                }
            }
        }
    }
    assert!(names > 20, "only {names} names found: the parser is broken");
    assert!(
        missing.is_empty(),
        "cited in the docs but not in the code:\n{}",
        missing.join("\n")
    );
}
