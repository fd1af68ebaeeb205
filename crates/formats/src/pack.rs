//! *Packs*: a set of input files as one byte string, for fuzzing and for the regression inputs
//! the fuzzers found. Most trace formats are sets of files (an OTF2 anchor, definitions and
//! per-location event files; a DUMPI `.meta` and one `.bin` per rank; a Paraver `.prv`, `.pcf`
//! and `.row`), so one fuzz input must carry a whole set: for each file its name, a NUL byte, its
//! length as a little-endian `u32`, then its bytes. [`unpack`] accepts any byte string (a
//! truncated last file keeps what is there), so every mutation a fuzzer makes is still a file set.

use crate::InputFile;

/// Most files one pack yields: enough for every sample (DUMPI NPB BT has 10), small enough that
/// a pathological input cannot turn into thousands of empty files.
pub const MAX_FILES: usize = 64;

/// The file set encoded in `data` (see the module documentation). Bytes with no NUL left are a
/// last file named `input`.
pub fn unpack(data: &[u8]) -> Vec<InputFile> {
    let mut files = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && files.len() < MAX_FILES {
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            files.push(InputFile::new("input", rest.to_vec()));
            break;
        };
        let name = String::from_utf8_lossy(&rest[..nul]).into_owned();
        rest = &rest[nul + 1..];
        let mut len_bytes = [0u8; 4];
        let take = rest.len().min(4);
        len_bytes[..take].copy_from_slice(&rest[..take]);
        rest = &rest[take..];
        let len = (u32::from_le_bytes(len_bytes) as usize).min(rest.len());
        files.push(InputFile::new(name, rest[..len].to_vec()));
        rest = &rest[len..];
    }
    files
}

/// Encode `files` as a pack; `unpack(&pack(f)) == f` for at most [`MAX_FILES`] files whose names
/// hold no NUL.
pub fn pack(files: &[InputFile]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in files {
        out.extend_from_slice(f.name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(f.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&f.bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips_and_truncation_keeps_a_prefix() {
        let files = vec![
            InputFile::new("traces.otf2", b"abc".to_vec()),
            InputFile::new("traces/0.evt", vec![0, 1, 2, 0]),
            InputFile::new("empty", Vec::new()),
        ];
        let packed = pack(&files);
        assert_eq!(unpack(&packed), files);
        let cut = unpack(&packed[..packed.len() - 12]);
        assert_eq!(cut.len(), 2);
        assert_eq!(cut[0], files[0]);
        assert_eq!(cut[1].name, "traces/0.evt");
        assert_eq!(cut[1].bytes, vec![0, 1]);
        assert_eq!(
            unpack(b"no separator"),
            vec![InputFile::new("input", b"no separator".to_vec())]
        );
    }
}
