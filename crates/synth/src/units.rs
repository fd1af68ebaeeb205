//! Sizes and durations as people type them (`4KiB`, `10us`), for specs and the command line.

/// Parse a byte count: a plain integer (`4096`) or a number with a unit (`B`, `kB`/`KB` = 1000,
/// `KiB`/`k`/`K` = 1024, `MB` = 10^6, `MiB`/`M` = 2^20, `GB`, `GiB`/`G`). Fractions are allowed
/// with a unit (`1.5KiB`) and rounded to whole bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "kB" | "KB" => 1_000,
        "k" | "K" | "KiB" | "kiB" => 1 << 10,
        "MB" => 1_000_000,
        "M" | "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "G" | "GiB" => 1 << 30,
        u => {
            return Err(format!(
                "unknown size unit `{u}` in `{s}` (use B, KiB, MiB, GiB, kB, MB, GB)"
            ))
        }
    };
    scaled(num, scale).ok_or_else(|| format!("bad size `{s}` (expected e.g. 4096, 64KiB, 1MiB)"))
}

/// Parse a duration into nanoseconds: a plain integer is nanoseconds; units `ns`, `us`/`µs`,
/// `ms`, `s` (fractions allowed: `2.5us`).
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        u => return Err(format!("unknown time unit `{u}` in `{s}` (use ns, us, ms, s)")),
    };
    scaled(num, scale).ok_or_else(|| format!("bad duration `{s}` (expected e.g. 500ns, 10us, 2ms)"))
}

/// `num × scale` as an integer, rejecting empty, negative, non-finite and out-of-range values.
fn scaled(num: &str, scale: u64) -> Option<u64> {
    if num.is_empty() {
        return None;
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(scale);
    }
    let x: f64 = num.parse().ok()?;
    let v = (x * scale as f64).round();
    (x.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

/// Write a nanosecond duration the way [`parse_duration_ns`] reads it, in the largest exact unit.
pub fn format_duration_ns(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64KiB"), Ok(65536));
        assert_eq!(parse_bytes("2kB"), Ok(2000));
        assert_eq!(parse_bytes("1.5KiB"), Ok(1536));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("-3").is_err());
        assert!(parse_bytes("12 parsecs").unwrap_err().contains("unknown size unit"));
        assert!(parse_bytes("99999999999999999999").is_err());
    }

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration_ns("10us"), Ok(10_000));
        assert_eq!(parse_duration_ns("2.5us"), Ok(2_500));
        assert_eq!(parse_duration_ns("750"), Ok(750));
        assert_eq!(parse_duration_ns("3ms"), Ok(3_000_000));
        assert!(parse_duration_ns("1h").unwrap_err().contains("unknown time unit"));
        for ns in [0, 7, 10_000, 3_000_000, 2_000_000_000, 1_500] {
            assert_eq!(parse_duration_ns(&format_duration_ns(ns)), Ok(ns));
        }
    }
}
