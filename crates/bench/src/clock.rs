//! Clocks of the benchmark: wall and CPU time, peak resident memory.

use std::time::Instant;

pub(crate) fn cpu_timed<T>(best: &mut f64, f: impl FnOnce() -> T) -> T {
    let c = thread_cpu_ms();
    let out = f();
    *best = best.min(thread_cpu_ms() - c);
    out
}

pub(crate) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// CPU time this thread has run, in milliseconds (`CLOCK_THREAD_CPUTIME_ID`). Wall time alone
/// misleads when the machine is shared.
/// CPU time of the whole process (every thread, kernel time included), in ms.
pub(crate) fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

pub(crate) fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Peak resident memory of this process so far, in KiB (`VmHWM` of `/proc/self/status`; 0
/// elsewhere). Measured here because a child's `ru_maxrss` also counts its parent's memory before
/// `exec`.
pub(crate) fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
