//! The small real traces bundled with the page (`web/samples/`, licences in
//! `web/samples/SOURCES.md`), and which one the page opens on.

/// A bundled trace: a folder under `samples/` next to `index.html`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Folder name, also the value of `?sample=` / `#sample=`.
    pub id: &'static str,
    /// What the menu shows.
    pub title: &'static str,
    /// The files of the trace, relative to the folder.
    pub files: &'static [&'static str],
}

impl Sample {
    /// Relative URL of one of the sample's files (relative, so the page works from any sub-path).
    pub fn url(&self, file: &str) -> String {
        format!("samples/{}/{}", self.id, file)
    }
}

/// Every bundled sample, in menu order.
pub const SAMPLES: &[Sample] = &[
    Sample {
        id: "npb-lu.S.8",
        title: "NPB LU class S, 8 ranks (DUMPI)",
        files: &[
            "dumpi-2026.11.22.08.59.38.meta",
            "dumpi-2026.11.22.08.59.38-0000.bin",
            "dumpi-2026.11.22.08.59.38-0001.bin",
            "dumpi-2026.11.22.08.59.38-0002.bin",
            "dumpi-2026.11.22.08.59.38-0003.bin",
            "dumpi-2026.11.22.08.59.38-0004.bin",
            "dumpi-2026.11.22.08.59.38-0005.bin",
            "dumpi-2026.11.22.08.59.38-0006.bin",
            "dumpi-2026.11.22.08.59.38-0007.bin",
        ],
    },
    Sample {
        id: "npb-mg.S.8",
        title: "NPB MG class S, 8 ranks (DUMPI)",
        files: &[
            "dumpi-2026.11.22.08.59.44.meta",
            "dumpi-2026.11.22.08.59.44-0000.bin",
            "dumpi-2026.11.22.08.59.44-0001.bin",
            "dumpi-2026.11.22.08.59.44-0002.bin",
            "dumpi-2026.11.22.08.59.44-0003.bin",
            "dumpi-2026.11.22.08.59.44-0004.bin",
            "dumpi-2026.11.22.08.59.44-0005.bin",
            "dumpi-2026.11.22.08.59.44-0006.bin",
            "dumpi-2026.11.22.08.59.44-0007.bin",
        ],
    },
    Sample {
        id: "npb-bt.S.9",
        title: "NPB BT class S, 9 ranks (DUMPI)",
        files: &[
            "dumpi-2026.11.22.08.59.13.meta",
            "dumpi-2026.11.22.08.59.13-0000.bin",
            "dumpi-2026.11.22.08.59.13-0001.bin",
            "dumpi-2026.11.22.08.59.13-0002.bin",
            "dumpi-2026.11.22.08.59.13-0003.bin",
            "dumpi-2026.11.22.08.59.13-0004.bin",
            "dumpi-2026.11.22.08.59.13-0005.bin",
            "dumpi-2026.11.22.08.59.13-0006.bin",
            "dumpi-2026.11.22.08.59.13-0007.bin",
            "dumpi-2026.11.22.08.59.13-0008.bin",
        ],
    },
    Sample {
        id: "pipit-ping-pong-otf2",
        title: "Ping-pong, 2 ranks (OTF2, Score-P)",
        files: &[
            "traces.otf2",
            "traces.def",
            "traces/0.def",
            "traces/0.evt",
            "traces/1.def",
            "traces/1.evt",
        ],
    },
    Sample {
        id: "profet-paraver-lulesh",
        title: "LULESH, 8 MPI tasks (Paraver, Extrae)",
        files: &[
            "lulesh_7+1_with_uncores_sockets1+2.chop8.prv",
            "lulesh_7+1_with_uncores_sockets1+2.chop8.pcf",
            "lulesh_7+1_with_uncores_sockets1+2.chop8.row",
        ],
    },
    Sample {
        id: "pipit-csv",
        title: "Ping-pong, 2 ranks (Pipit CSV)",
        files: &["ping-pong-csv.csv"],
    },
];

/// The sample the page opens on when the address names none.
pub const DEFAULT_SAMPLE: &str = "npb-lu.S.8";

/// The sample with this id.
pub fn find(id: &str) -> Option<&'static Sample> {
    SAMPLES.iter().find(|s| s.id == id)
}

/// What the page should load first, from the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartChoice {
    /// Load this sample.
    Sample(&'static Sample),
    /// `sample=none`: open on the empty drop zone.
    Empty,
    /// The address names a sample that does not exist (the page says so and loads the default).
    Unknown(String),
}

/// Decide the first trace from `location.search` (`?sample=ID`) and `location.hash`
/// (`#sample=ID`); the hash wins because the page writes it when the user picks a sample.
pub fn start_choice(search: &str, hash: &str) -> StartChoice {
    let requested =
        param(hash.trim_start_matches('#'), "sample").or_else(|| param(search.trim_start_matches('?'), "sample"));
    match requested {
        None => StartChoice::Sample(find(DEFAULT_SAMPLE).expect("the default sample is in SAMPLES")),
        Some(id) if id == "none" => StartChoice::Empty,
        Some(id) => match find(&id) {
            Some(s) => StartChoice::Sample(s),
            None => StartChoice::Unknown(id),
        },
    }
}

/// Value of `key` in an `a=1&b=2` string, with `%xx` and `+` decoded.
fn param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| percent_decode(v))
    })
}

/// `s` with `%xx` escapes and `+` decoded (malformed escapes kept as they are); shared by the
/// address's query and fragment.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_listed_file_is_bundled() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/samples");
        for s in SAMPLES {
            for f in s.files {
                let p = root.join(s.id).join(f);
                assert!(p.is_file(), "{} is listed for sample {} but missing", p.display(), s.id);
            }
        }
    }

    #[test]
    fn every_bundled_file_is_listed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/samples");
        for s in SAMPLES {
            let mut found = Vec::new();
            collect(&root.join(s.id), "", &mut found);
            found.sort();
            let mut listed: Vec<String> = s.files.iter().map(|f| f.to_string()).collect();
            listed.sort();
            assert_eq!(found, listed, "files of sample {}", s.id);
        }
    }

    fn collect(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                collect(&e.path(), &format!("{name}/"), out);
            } else {
                out.push(name);
            }
        }
    }

    #[test]
    fn opens_on_lu_without_a_choice() {
        assert_eq!(start_choice("", ""), StartChoice::Sample(find("npb-lu.S.8").unwrap()));
    }

    #[test]
    fn hash_beats_query() {
        assert_eq!(
            start_choice("?sample=npb-mg.S.8", "#sample=npb-bt.S.9"),
            StartChoice::Sample(find("npb-bt.S.9").unwrap())
        );
        assert_eq!(
            start_choice("?x=1&sample=pipit-csv", ""),
            StartChoice::Sample(find("pipit-csv").unwrap())
        );
    }

    #[test]
    fn none_and_unknown() {
        assert_eq!(start_choice("?sample=none", ""), StartChoice::Empty);
        assert_eq!(
            start_choice("", "#sample=nope%20here"),
            StartChoice::Unknown("nope here".into())
        );
    }

    #[test]
    fn percent_decoding_tolerates_bad_escapes() {
        assert_eq!(percent_decode("a%2Fb"), "a/b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("a+b"), "a b");
    }
}
