use super::write::{push_members, push_token};
use super::*;

use crate::NoProgress;
use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

#[test]
fn declarations_before_ranks_are_kept() {
    // Found by fuzzing: `ranks` rebuilt the trace and dropped the functions declared before
    // it, while the reader's cache still held their ids (an index panic at the first call).
    let text = "#tracelogic-text 1\nfunction 0 MPI_Init\nfunction 1 MPI_Finalize\nranks 1\n0 0 5 MPI_Init\n0 6 9 MPI_Finalize\n";
    for fast in [true, false] {
        let file = InputFile::new("t.txt", text.as_bytes().to_vec());
        let t = read_one_with(&file, &mut NoProgress, fast).unwrap();
        let c = &t.ranks[0].calls;
        let names: Vec<&str> = c.func.iter().map(|&f| t.functions.name(f)).collect();
        assert_eq!(names, ["MPI_Init", "MPI_Finalize"], "fast path {fast}");
    }
}

/// Every byte value at every place of a word of digits, and every pair of adjacent bytes
/// (carries and borrows between bytes): the word scans find the first byte they look for,
/// exactly as a byte-by-byte scan does.
#[test]
fn word_scans_stop_at_the_first_byte_they_look_for() {
    let scalar = |w: [u8; 8], stop: &dyn Fn(u8) -> bool| w.iter().position(|&c| stop(c)).unwrap_or(8) as u32;
    let check = |w: [u8; 8]| {
        let x = u64::from_le_bytes(w);
        assert_eq!(leading_digits(x), scalar(w, &|c| !c.is_ascii_digit()), "{w:?}");
        assert_eq!(bytes_before_space_or_control(x), scalar(w, &|c| c <= b' '), "{w:?}");
    };
    for k in 0..8 {
        for v in 0..=255u8 {
            let mut w = *b"57305730";
            w[k] = v;
            check(w);
            if k < 7 {
                for u in 0..=255u8 {
                    w[k + 1] = u;
                    check(w);
                }
            }
        }
    }
}

/// `fast_digits` against `str::parse` for every length from 1 to 21 digits, several digit
/// patterns and every kind of byte that can follow a number.
#[test]
fn fast_digits_agree_with_parse_at_every_length() {
    for len in 1..=21 {
        for pattern in ["9", "0", "1", "0123456789", "5000000000", "1844674407370955161"] {
            let digits: String = pattern.chars().cycle().take(len).collect();
            for after in ["", " ", "\n", "\r\n", ",", "x", "=", "/", ":", "\u{0}"] {
                let text = format!("{digits}{after}");
                let mut pos = 0;
                let got = fast_digits(LineWords::new(text.as_bytes()), &mut pos);
                if len <= 19 {
                    assert_eq!(got, Some(digits.parse::<u64>().unwrap()), "`{text}`");
                    assert_eq!(pos, len, "`{text}`");
                } else {
                    assert_eq!(got, None, "`{text}`: a 20th digit goes to the general parser");
                }
            }
        }
    }
    let read = |s: &str| fast_digits(LineWords::new(s.as_bytes()), &mut 0);
    assert_eq!(read("0"), Some(0));
    assert_eq!(read("00000000"), Some(0));
    assert_eq!(read("12345678 9"), Some(12_345_678));
    assert_eq!(read(&u64::MAX.to_string()), None);
    assert_eq!(read("+5"), None);
    assert_eq!(read("-5"), None);
    assert_eq!(read(""), None);
    // The line ends at its newline: digits of the next line are not part of the value.
    assert_eq!(read("12\n34"), Some(12));
    assert_eq!(read("1234567\r\n8"), Some(1_234_567));
}

/// Plain call lines with numbers at the fast path's limits (19 and 20 digits, u64::MAX, i32
/// tags at and past their range, `+` and `-` signs) read the same both ways.
#[test]
fn numbers_at_the_limits_read_the_same_both_ways() {
    let lines = [
        "0 0 0 MPI_Send send=1 tag=0 bytes=0",
        "0 1 9999999999999999999 MPI_Send send=1 tag=1 bytes=9999999999999999999",
        "0 1 10000000000000000000 MPI_Send send=1 tag=1 bytes=8",
        "0 1 2 MPI_Send send=1 tag=1 bytes=18446744073709551615",
        "0 1 2 MPI_Send send=1 tag=1 bytes=18446744073709551616",
        "0 1 2 MPI_Send send=1 tag=2147483647 bytes=1",
        "0 1 2 MPI_Send send=1 tag=2147483648 bytes=1",
        "0 1 2 MPI_Send send=1 tag=-1 bytes=1",
        "0 1 2 MPI_Send send=1 tag=-2147483648 bytes=1",
        "0 1 2 MPI_Send send=1 tag=+3 bytes=1",
        "0 1 2 MPI_Send send=1 tag=1 bytes=+4",
        "0 +1 2 MPI_Send send=1 tag=1 bytes=4",
        "0 1 +2 MPI_Send send=1 tag=1 bytes=4",
        "0 1 2 MPI_Send send=-1 tag=1 bytes=4",
        "00 1 2 MPI_Send send=01 tag=007 bytes=0004",
    ];
    for line in lines {
        let text = format!("{HEADER}{line}\n");
        let (fast, general) = both_ways(&text);
        assert_eq!(fast, general, "`{line}`");
    }
}

/// Request ids: small and dense (slots), far beyond the rank's operations, 19 digits,
/// reused after completion, completed on another line out of order, posted twice, waited
/// for twice or never posted, negative: the same trace or error both ways.
#[test]
fn request_ids_read_the_same_both_ways() {
    let ok = [
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=0\n0 3 4 MPI_Wait wait=0\n0 5 6 MPI_Isend send=1 tag=1 bytes=8 req=0\n0 7 8 MPI_Wait wait=0",
        "0 1 2 MPI_Irecv recv=1 tag=1 bytes=8 req=1099511627776\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=3\n0 5 6 MPI_Waitall wait=3,1099511627776",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=9999999999999999999\n0 3 4 MPI_Wait wait=9999999999999999999",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=200\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=70\n0 5 6 MPI_Isend send=1 tag=1 bytes=8 req=2\n0 7 8 MPI_Waitall wait=70,2,200",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=5\n1 1 2 MPI_Irecv recv=0 tag=1 bytes=8 req=5\n1 3 4 MPI_Wait wait=5\n0 3 4 MPI_Wait wait=5",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=7",
    ];
    for body in ok {
        let (fast, general) = both_ways(&format!("{HEADER}{body}\n"));
        assert_eq!(fast.as_ref().expect(body), general.as_ref().expect(body), "{body}");
    }
    let bad = [
        ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=4", "posted again"),
        ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1099511627776\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=1099511627776", "posted again"),
        ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n0 3 4 MPI_Waitall wait=4,4", "no open request 4"),
        ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n1 3 4 MPI_Wait wait=4", "no open request 4"),
        ("0 1 2 MPI_Wait wait=18446744073709551615", "no open request"),
        ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=-1", "request id"),
        ("0 1 2 MPI_Wait wait=-1", "request id"),
    ];
    for (body, needle) in bad {
        let (fast, general) = both_ways(&format!("{HEADER}{body}\n"));
        let fast = fast.expect_err(body);
        assert_eq!(fast, general.expect_err(body), "{body}");
        assert!(fast.contains(needle), "{body}: {fast}");
    }
}

/// Function names that share prefixes, lengths, first and last bytes, at the name cache's
/// length limits (8, 16 and 17 bytes), and more names than it has slots: every line takes
/// the fast path and names the same function as the general parser.
#[test]
fn function_names_sharing_prefixes_read_the_same_both_ways() {
    let mut names: Vec<String> = [
        "MPI_Send",
        "MPI_Sendrecv",
        "MPI_Send_init",
        "MPI_Isend",
        "MPI_Ssend",
        "MPI_Bsend",
        "MPI_Recv",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Waitany",
        "MPI_Allreduce",
        "MPI_Reduce",
        "F",
        "FF",
        "ABCDEFGH",
        "ABCDEFGX",
        "ABCDEFGHIJKLMNOP",
        "ABCDEFGHIJKLMNOQ",
        "ABCDEFGHIJKLMNOPQ",
        "ABCDEFGHIJKLMNOPR",
        "XBCDEFGHIJKLMNOP",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // More names than the cache has slots, all with the same first eight bytes: some share
    // a slot, and only their second word tells them apart.
    names.extend((0..100).map(|i| format!("ABCDEFGH_{i}")));
    names.extend((0..4).map(|i| format!("ABCDEFGHIJKLMNOP_{i}")));
    let mut body = String::new();
    for round in 0..3 {
        for (i, name) in names.iter().enumerate() {
            let t = (round * names.len() + i) * 10;
            body.push_str(&format!("{} {t} {} {name}\n", i % 2, t + 5));
        }
    }
    let text = format!("{HEADER}{body}");
    let (fast, general) = both_ways(&text);
    assert_eq!(fast.as_ref().expect("reads"), general.as_ref().expect("reads"));
    let mut reader = reader_after_header(HEADER);
    for line in body.lines() {
        let (done, len) = reader
            .fast_call(LineWords::new(line.as_bytes()))
            .unwrap_or_else(|| panic!("fast path refused `{line}`"));
        done.expect("reads");
        assert_eq!(len, line.len());
    }
    let t = &reader.trace;
    for (rank, line) in body.lines().enumerate().map(|(i, l)| (i % 2, (i, l))) {
        let (i, line) = line;
        let name = line.split(' ').nth(3).expect("a name");
        let call = i / 2;
        assert_eq!(t.functions.name(t.ranks[rank].calls.func[call]), name, "`{line}`");
    }
}

/// Line ends: `\r\n`, no newline at the end of the file, a `\r` inside a line or doubled,
/// blank lines, trailing spaces, and a name or value cut by a `\r`: the same trace or error
/// both ways, the same line numbers in errors.
#[test]
fn line_ends_read_the_same_both_ways() {
    let bodies = [
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\r\n0 3 4 MPI_Barrier\r\n",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\n0 3 4 MPI_Barrier",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\n0 3 4 MPI_Barrier\r",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\r",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\n\n\r\n0 3 4 MPI_Wait\n",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\r\r\n",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8\rx\n",
        "0 1 2 MPI_Send\r send=1 tag=1 bytes=8\n",
        "0 1 2 MPI_Send send=1\r tag=1 bytes=8\n",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8 \n",
        "0 1 2 MPI_Send send=1 tag=1 bytes=8 \r\n",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n0 3 4 MPI_Waitall wait=1\r\n",
        "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n0 3 4 MPI_Waitall wait=1,\r\n",
        "0 1 2 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0\r\n",
        "0 1 2 MPI_Reduce coll=Reduce\r root=1\n",
        "0 1 2 MPI_Send send=any tag=any bytes=8\r\n",
        "0 1 2 MPI_Recv recv=any\r\n",
        "0 1 2 MPI_Send\n0 3 4 MPI_Send\r\n0 5 6 MPI_Sen\r\n",
        "0 1 2 MPI_Send\t\n",
        "0 1 2 MPI_Send\u{0}\n",
    ];
    for body in bodies {
        let (fast, general) = both_ways(&format!("{HEADER}{body}"));
        assert_eq!(fast, general, "{body:?}");
    }
}

/// Call lines of every plain form with bytes replaced, inserted or removed at seeded random
/// places (digits, spaces, line ends, signs, quotes, `=`, `,`, letters, tabs, NUL): every
/// mutated file reads to the same trace or the same error with and without the fast path.
#[test]
fn mutated_call_lines_read_the_same_both_ways() {
    let body = "0 10 20 MPI_Isend send=1 tag=7 bytes=64 req=3\n\
        0 30 40 MPI_Irecv recv=any tag=any bytes=8 req=4\n\
        1 35 45 MPI_Irecv recv=0 tag=7 bytes=64 req=0\n\
        0 50 60 MPI_Waitall wait=3,4\n\
        1 50 60 MPI_Wait wait=0\n\
        0 70 12345678 MPI_Send send=1 tag=2147483647 bytes=1\n\
        1 90 100 MPI_Recv recv=0 tag=0 bytes=0\n\
        0 110 120 MPI_Sendrecv send=1 tag=1 bytes=4 recv=1 tag=1 bytes=4\n\
        0 130 140 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0\n\
        0 150 160 MPI_Barrier\n\
        0 170 180 MPI_Bcast coll=Bcast bytes=16\n";
    let alphabet = b"0019 \r\n=,+-\"#\tax_\x00";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..3000 {
        let mut bytes = body.as_bytes().to_vec();
        for _ in 0..1 + next(3) {
            let at = next(bytes.len());
            let c = alphabet[next(alphabet.len())];
            match next(3) {
                0 => bytes[at] = c,
                1 => bytes.insert(at, c),
                _ => {
                    bytes.remove(at);
                }
            }
        }
        let mut text = HEADER.as_bytes().to_vec();
        text.extend_from_slice(&bytes);
        let file = InputFile::new("t.txt", text.clone());
        let json = |fast| {
            read_one_with(&file, &mut NoProgress, fast)
                .map(|t| serde_json::to_string(&t).expect("serialises"))
                .map_err(|e| e.to_string())
        };
        assert_eq!(json(true), json(false), "{:?}", String::from_utf8_lossy(&text));
    }
}

#[test]
fn fast_digits_take_at_most_nineteen_digits_without_overflow() {
    let read = |s: &str| fast_digits(LineWords::new(s.as_bytes()), &mut 0);
    assert_eq!(read("9999999999999999999"), Some(9_999_999_999_999_999_999));
    assert_eq!(read("0000000000000000001 x"), Some(1));
    // Twenty digits (u64::MAX has twenty) go to the general parser, which range-checks them.
    assert_eq!(read("18446744073709551615"), None);
    assert_eq!(read("99999999999999999999"), None);
    assert_eq!(read("x1"), None);
}

/// The file read with and without the fast path: both results (as the model's JSON, or the
/// error's text) must be equal.
fn both_ways(text: &str) -> (Result<String, String>, Result<String, String>) {
    let file = InputFile::new("t.txt", text.as_bytes().to_vec());
    let json = |fast| {
        read_one_with(&file, &mut NoProgress, fast)
            .map(|t| serde_json::to_string(&t).expect("serialises"))
            .map_err(|e| e.to_string())
    };
    (json(true), json(false))
}

/// A reader past the header lines of `text`, to try single call lines on.
fn reader_after_header(text: &str) -> Reader<'static> {
    let mut reader = Reader::new("t.txt", true);
    for line in text.lines().skip(1) {
        reader.line(line, 0).expect("header line reads");
    }
    reader
}

#[test]
fn fast_path_matches_the_general_parser_on_generated_traces() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("grid:3x4", Style::Sendrecv),
        ("grid:4x3", Style::Blocking),
        ("grid:4x4", Style::Wavefront),
    ] {
        let spec = Spec {
            topology: TopologySpec::parse(topology).expect("topology"),
            iterations: 4,
            style,
            collectives: [
                (CollectiveOp::Allreduce, 2, 64),
                (CollectiveOp::Barrier, 3, 0),
                (CollectiveOp::Bcast, 2, 1024),
                (CollectiveOp::Reduce, 3, 8),
            ]
            .into_iter()
            .map(|(op, every, bytes)| CollectiveSpec { op, every, bytes })
            .collect(),
            ..Spec::default()
        };
        let trace = generate(&spec).expect("generates");
        let text = write(&trace);
        let (fast, general) = both_ways(&text);
        let fast = fast.expect("fast path reads the trace");
        assert_eq!(
            fast,
            general.expect("general parser reads the trace"),
            "{topology} {style:?}"
        );
        // The plain call lines (all of a generated trace's) went through the fast path.
        let file = InputFile::new("t.txt", text.as_bytes().to_vec());
        let mut reader_lines = 0;
        for line in text.lines() {
            if line.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                reader_lines += 1;
            }
        }
        let read = read_one_with(&file, &mut NoProgress, true).expect("reads");
        assert_eq!(read.num_calls(), trace.num_calls());
        let mut counting = reader_after_header(&text[..text.find("\n0 ").expect("a call line") + 1]);
        for line in text
            .lines()
            .filter(|l| l.as_bytes().first().is_some_and(u8::is_ascii_digit))
        {
            counting
                .fast_call(LineWords::new(line.as_bytes()))
                .unwrap_or_else(|| panic!("fast path refused `{line}`"))
                .0
                .expect("line reads");
        }
        assert_eq!(counting.fast_lines, reader_lines, "{topology} {style:?}");
        let kinds: std::collections::BTreeSet<_> =
            read.ranks.iter().flat_map(|r| r.calls.kind.iter().copied()).collect();
        let expected: &[CallKind] = match style {
            Style::Isend => &[CallKind::Isend, CallKind::Irecv, CallKind::Completion],
            Style::Sendrecv => &[CallKind::SendRecv],
            _ => &[CallKind::Send, CallKind::Recv],
        };
        for k in expected.iter().chain(&[CallKind::Collective]) {
            assert!(kinds.contains(k), "{topology} {style:?}: no {k:?} call");
        }
    }
}

const HEADER: &str = "#tracelogic-text 1\nranks 2\ncomm 1 pair 0-1\n";

#[test]
fn plain_lines_with_every_key_take_the_fast_path() {
    let lines = [
        "0 10 20 MPI_Isend send=1 tag=7 bytes=64 req=3",
        "0 30 40 MPI_Irecv recv=any tag=any bytes=8 req=4",
        "0 50 60 MPI_Waitall wait=3,4",
        "0 70 80 MPI_Send send=1 tag=2147483647 bytes=1",
        "0 90 100 MPI_Recv recv=1 tag=0 bytes=0",
        "0 110 120 MPI_Sendrecv send=1 tag=1 bytes=4 recv=1 tag=1 bytes=4",
        "0 130 140 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0",
        "0 150 160 MPI_Barrier",
        "0 170 180 MPI_Bcast coll=Bcast bytes=16",
        "0 190 190 MPI_Wait",
    ];
    let mut reader = reader_after_header(HEADER);
    for line in lines {
        assert!(
            matches!(
                reader.fast_call(LineWords::new(line.as_bytes())),
                Some((Ok(()), len)) if len == line.len()
            ),
            "`{line}`"
        );
    }
    let text = format!("{HEADER}{}\n", lines.join("\n"));
    let (fast, general) = both_ways(&text);
    assert_eq!(fast.expect("reads"), general.expect("reads"));
}

#[test]
fn lines_the_fast_path_refuses_go_to_the_general_parser() {
    // Each line is valid but outside the fast path's plain form.
    let lines = [
        "0 10 1.5us MPI_Send send=1 tag=1 bytes=8",
        "0 2000 +10 MPI_Send send=1 tag=1 bytes=8",
        "0  2100 2200 MPI_Send send=1 tag=1 bytes=8",
        "0\t2300 2400 MPI_Send send=1 tag=1 bytes=8",
        "0 2500 2600 \"MPI Send\" kind=Send send=1 tag=1 bytes=8",
        "0 2700 2800 MPI_Send send=1 tag=1 bytes=8 # a comment",
        "0 2900 3000 MPI_Send send=1 tag=-3 bytes=8 comm=1",
        "0 3100 3200 MPI_Send peer=1 tag=1 bytes=8",
        "0 3300 3400 MPI_Send send=1 tag=1 bytes=8 done=0",
        "0 3500 3600 MPI_Allreduce sent=8 recvd=8",
        "0 3700 3800 MPI_Barrier coll=none",
        "0 3900 4000 MPI_Send send=1 tag=1 bytes=8 ",
        "0 4100 4200 MPI_Send send=+1 tag=1 bytes=8",
        "0 4300 4400 MPI_Send send=1 tag=1 bytes=18446744073709551615",
    ];
    let mut reader = reader_after_header(HEADER);
    for line in lines {
        assert!(
            reader.fast_call(LineWords::new(line.as_bytes())).is_none(),
            "fast path took `{line}`"
        );
    }
    assert_eq!(reader.trace.ranks[0].calls.len(), 0, "a refused line changed the trace");
    let text = format!("{HEADER}{}\n", lines.join("\n"));
    let (fast, general) = both_ways(&text);
    let fast = fast.expect("the general parser reads the refused lines");
    assert_eq!(fast, general.expect("reads"));
    assert!(fast.contains("MPI Send"));
}

#[test]
fn errors_are_the_same_with_and_without_the_fast_path() {
    for (bad, needle) in [
        (
            "0 50 40 MPI_Send send=1 tag=1 bytes=8",
            "exit time 40 is before enter time 50",
        ),
        ("0 10 20 MPI_Send tag=1 send=1", "comes before any send="),
        ("0 10 20 MPI_Send send=2 tag=1 bytes=8", "rank 2 is out of range"),
        ("2 10 20 MPI_Send send=1 tag=1 bytes=8", "rank 2 is out of range"),
        ("0 10 20 MPI_Wait wait=9", "rank 0 has no open request 9"),
        ("0 10 20 MPI_Send send=1 tag=1 bytes=8 wait=1,,2", "a request id"),
        ("0 10 20 MPI_Send send=1 tag=2147483648", "tag must be an integer"),
        (
            "0 10 20 MPI_Isend send=1 tag=1 bytes=8 req=1",
            "request 1 of rank 0 is posted again",
        ),
        ("0 10 20 MPI_Send send=1 root=1", "does not apply to a point-to-point"),
        ("0 10 20 MPI_Send send=1 xyz=1", "unknown key `xyz`"),
    ] {
        let text = format!("{HEADER}0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n{bad}\n");
        let (fast, general) = both_ways(&text);
        let fast = fast.expect_err(bad);
        assert_eq!(fast, general.expect_err(bad), "`{bad}`");
        assert!(fast.contains("line 5"), "`{bad}`: {fast}");
        assert!(fast.contains(needle), "`{bad}`: {fast}");
    }
}

#[test]
fn times_take_units_and_round_to_ns() {
    assert_eq!(parse_time("1500").unwrap(), 1500);
    assert_eq!(parse_time("1.5us").unwrap(), 1500);
    assert_eq!(parse_time("2ms").unwrap(), 2_000_000);
    assert_eq!(parse_time("0.25s").unwrap(), 250_000_000);
    assert_eq!(parse_time("1.0005us").unwrap(), 1001);
    assert!(parse_time("3h").is_err());
    assert!(parse_time("1.2.3").is_err());
    assert!(parse_time("99999999999999999999s").is_err());
}

#[test]
fn members_use_ranges() {
    let mut s = String::new();
    push_members(&mut s, &[0, 1, 2, 3, 8, 10, 11]);
    assert_eq!(s, "0-3,8,10-11");
    assert_eq!(parse_members(&s, 12).unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
    assert!(parse_members("0-20", 12).is_err());
}

#[test]
fn tokens_quote_and_unquote() {
    let mut s = String::new();
    push_token(&mut s, "int main(int, \"char\"**)\\");
    let mut lx = Lexer::new(&s);
    assert_eq!(lx.word("x").unwrap(), "int main(int, \"char\"**)\\");
    let mut lx = Lexer::new("a=\"b c\" d=e # comment");
    let t = lx.next_token().unwrap().unwrap();
    assert_eq!((t.key.as_ref(), t.value.as_deref()), ("a", Some("b c")));
    let t = lx.next_token().unwrap().unwrap();
    assert_eq!((t.key.as_ref(), t.value.as_deref()), ("d", Some("e")));
    assert!(lx.next_token().unwrap().is_none());
}
