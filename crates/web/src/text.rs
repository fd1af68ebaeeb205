//! How numbers read in the page: counts with thousands separators, sizes in B/kB/MB, durations.

/// `1234567` → `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in decimal units: `999 B`, `1.5 kB`, `12.3 MB`, `4.0 GB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 999.95 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A duration in seconds, with a unit that keeps three significant figures.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds <= 0.0 {
        return "0 s".into();
    }
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.3} µs", seconds * 1e6)
    }
}

/// A share in 0..1 as a percentage with one decimal, or with as many more (up to four) as it
/// takes for a share below 1 not to read as `100.0 %` and a share above 0 not to read as
/// `0.0 %` (a rank reproducing 99.98 % of its calls is not complete; the CLI prints two
/// decimals). Past four decimals the bound is given: `> 99.9999 %`, `< 0.0001 %`.
pub fn percent(share: f64) -> String {
    let value = share * 100.0;
    for decimals in 1..=4 {
        let shown = format!("{value:.decimals$}");
        let rounded: f64 = shown.parse().unwrap_or(value);
        let to_full = share < 1.0 && rounded >= 100.0;
        let to_zero = share > 0.0 && rounded <= 0.0;
        if !to_full && !to_zero {
            return format!("{shown} %");
        }
    }
    if share < 1.0 && share > 0.5 {
        "> 99.9999 %".into()
    } else {
        "< 0.0001 %".into()
    }
}

/// `n` and the noun, plural unless `n` is 1: `1 edge`, `3 edges` (`plural` for irregular nouns).
pub fn counted(n: u64, singular: &str, plural: &str) -> String {
    format!("{} {}", count(n), if n == 1 { singular } else { plural })
}

pub use tracelogic_engine::trace_name;

/// `name` as part of a file name: ASCII letters, digits, `-`, `_` and `.` kept, runs of
/// anything else one `_`, no leading or trailing `.`/`_` (so no hidden file, no path); `trace`
/// when nothing is left.
pub fn file_stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "-_.".contains(c) {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches(|c| c == '_' || c == '.');
    if out.is_empty() {
        "trace".into()
    } else {
        out.chars().take(96).collect()
    }
}

/// A selection in the words of the CLI's flags (`ranks 0-3 · kinds send · from 1.000 ms`),
/// its times relative to the trace's first event as the page keeps them; empty when it selects
/// everything.
pub fn selection(s: &tracelogic_model::Selection) -> String {
    let mut parts = Vec::new();
    if let Some(ranks) = &s.ranks {
        let mut sorted = ranks.clone();
        sorted.sort_unstable();
        sorted.dedup();
        parts.push(format!(
            "{} {}",
            if sorted.len() == 1 { "rank" } else { "ranks" },
            crate::views::topology::rank_ranges(&sorted)
        ));
    }
    if let Some(c) = s.comm {
        parts.push(format!("communicator {c}"));
    }
    if let Some(on) = &s.on_comms {
        let ids: Vec<String> = on.iter().map(|c| c.to_string()).collect();
        parts.push(format!(
            "on {} {}",
            if ids.len() == 1 {
                "communicator"
            } else {
                "communicators"
            },
            ids.join(",")
        ));
    }
    if let Some(f) = s.from {
        parts.push(format!("from {}", duration_or_zero(f)));
    }
    if let Some(t) = s.to {
        parts.push(format!("to {}", duration_or_zero(t)));
    }
    if let Some(b) = s.min_bytes {
        parts.push(format!("at least {}", bytes(b)));
    }
    if let Some(b) = s.max_bytes {
        parts.push(format!("at most {}", bytes(b)));
    }
    if let Some(kinds) = &s.kinds {
        let names: Vec<String> = kinds.iter().map(|k| format!("{k:?}").to_ascii_lowercase()).collect();
        parts.push(format!(
            "{} {}",
            if names.len() == 1 { "kind" } else { "kinds" },
            names.join(",")
        ));
    }
    parts.join(" · ")
}

/// Nanoseconds as a [`duration`], where 0 reads `0 s`.
fn duration_or_zero(ns: u64) -> String {
    duration(ns as f64 * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn sizes_pick_a_unit() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1500), "1.5 kB");
        assert_eq!(bytes(999_960), "1.0 MB");
        assert_eq!(bytes(12_345_678), "12.3 MB");
        assert_eq!(bytes(u64::MAX), "18446.7 PB");
    }

    #[test]
    fn a_share_below_one_never_reads_as_a_hundred_percent() {
        assert_eq!(percent(0.5), "50.0 %");
        assert_eq!(percent(1.0), "100.0 %");
        assert_eq!(percent(0.0), "0.0 %");
        assert_eq!(percent(0.99978), "99.98 %");
        assert_eq!(percent(0.99968), "99.97 %");
        assert_eq!(percent(0.999_996), "99.9996 %");
        assert_eq!(percent(1.0 - 1e-9), "> 99.9999 %");
        assert_eq!(percent(0.0004), "0.04 %");
        assert_eq!(percent(1e-9), "< 0.0001 %");
        assert_eq!(percent(0.9994), "99.9 %");
        assert_eq!(percent(0.9996), "99.96 %");
    }

    #[test]
    fn several_picked_files_take_the_trace_own_name() {
        assert_eq!(
            trace_name("9 files", "dumpi-2026.11.22.08.59.38"),
            "dumpi-2026.11.22.08.59.38"
        );
        assert_eq!(trace_name("3 items", "/tmp/run/traces.otf2"), "traces.otf2");
        assert_eq!(trace_name("npb-lu.S.8", "dumpi-2026.11.22.08.59.38"), "npb-lu.S.8");
        assert_eq!(trace_name("NAS LU class S, 8 ranks", "x"), "NAS LU class S, 8 ranks");
        assert_eq!(trace_name("9 files", ""), "9 files");
        assert_eq!(trace_name("9 filesystems", "x"), "9 filesystems");
    }

    #[test]
    fn file_stems_keep_names_and_drop_paths() {
        assert_eq!(file_stem("dumpi-2026.11.22.08.59.38"), "dumpi-2026.11.22.08.59.38");
        assert_eq!(file_stem("NAS LU, class S"), "NAS_LU_class_S");
        assert_eq!(file_stem("../../etc/passwd"), "etc_passwd");
        assert_eq!(file_stem("…"), "trace");
    }

    #[test]
    fn selections_read_as_the_cli_flags() {
        use tracelogic_model::{CallKind, Selection};
        assert_eq!(selection(&Selection::all()), "");
        let s = Selection {
            ranks: Some(vec![3, 0, 1, 2, 7]),
            from: Some(1_500_000),
            kinds: Some(vec![CallKind::Send, CallKind::SendRecv]),
            min_bytes: Some(4096),
            ..Selection::default()
        };
        assert_eq!(
            selection(&s),
            "ranks 0-3, 7 · from 1.500 ms · at least 4.1 kB · kinds send,sendrecv"
        );
        let one = Selection {
            ranks: Some(vec![5]),
            ..Selection::default()
        };
        assert_eq!(selection(&one), "rank 5");
        let on = Selection {
            on_comms: Some(vec![0, 9]),
            ..Selection::default()
        };
        assert_eq!(selection(&on), "on communicators 0,9");
    }

    #[test]
    fn counted_nouns_agree_with_their_number() {
        assert_eq!(counted(1, "edge", "edges"), "1 edge");
        assert_eq!(counted(0, "edge", "edges"), "0 edges");
        assert_eq!(counted(1234, "file", "files"), "1,234 files");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(2.5), "2.500 s");
        assert_eq!(duration(0.0125), "12.500 ms");
        assert_eq!(duration(3e-6), "3.000 µs");
        assert_eq!(duration(f64::NAN), "0 s");
    }
}
