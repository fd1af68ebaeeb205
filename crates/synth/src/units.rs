//! Durations written back the way `tracelogic_model::query::parse_time` reads them (sizes and
//! times are parsed by the model's parsers, the same as every other command-line flag).

/// Write a nanosecond duration in the largest unit that keeps it exact (`10us`, `3ms`, `7ns`).
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
    use tracelogic_model::query::parse_time;

    #[test]
    fn formatted_durations_parse_back() {
        for ns in [0, 7, 1_500, 10_000, 3_000_000, 2_000_000_000, 1_000_000_001] {
            assert_eq!(parse_time(&format_duration_ns(ns)), Ok(ns));
        }
        assert_eq!(format_duration_ns(10_000), "10us");
    }
}
