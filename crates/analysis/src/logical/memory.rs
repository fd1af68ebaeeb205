//! What the machine's memory allows: whether work that holds a second large intermediate at
//! once (two candidate merges sized side by side) fits beside what the process already holds.

/// Whether the memory the system still has available (Linux's `MemAvailable`) is at least
/// `times` what this process holds resident now. `false` where either is unknown (other
/// systems, wasm): the caller then keeps to its lower-memory path.
pub(super) fn room_for_times_resident(times: u64) -> bool {
    match (available_bytes(), resident_bytes()) {
        (Some(available), Some(resident)) => available >= resident.saturating_mul(times),
        _ => false,
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_bytes() -> Option<u64> {
    kib_line(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
}

/// This process's resident size (`VmRSS` of `/proc/self/status`), in bytes.
fn resident_bytes() -> Option<u64> {
    kib_line(&std::fs::read_to_string("/proc/self/status").ok()?, "VmRSS:")
}

/// The value of the line starting with `name` in a `/proc` text whose values are in kB, in
/// bytes.
fn kib_line(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line[name.len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kib_line_reads_the_named_line_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:        22000000 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(kib_line(text, "MemAvailable:"), Some(23_000_000 * 1024));
        assert_eq!(kib_line(text, "MemTotal:"), Some(24_576_000 * 1024));
        assert_eq!(kib_line("MemTotal: 1 kB\n", "MemAvailable:"), None);
        assert_eq!(kib_line("MemAvailable: many kB\n", "MemAvailable:"), None);
        assert_eq!(kib_line("MemAvailable: 12 MB\n", "MemAvailable:"), None);
    }

    #[test]
    fn this_process_is_resident_on_linux() {
        if cfg!(target_os = "linux") {
            let resident = resident_bytes().expect("VmRSS");
            assert!(resident > 1 << 20, "{resident}");
            assert!(available_bytes().is_some());
        }
    }
}
