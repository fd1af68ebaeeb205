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

/// A share in 0..1 as a percentage with one decimal.
pub fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
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
    fn durations_pick_a_unit() {
        assert_eq!(duration(2.5), "2.500 s");
        assert_eq!(duration(0.0125), "12.500 ms");
        assert_eq!(duration(3e-6), "3.000 µs");
        assert_eq!(duration(f64::NAN), "0 s");
    }
}
