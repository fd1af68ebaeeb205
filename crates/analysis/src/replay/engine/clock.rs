//! The clock arithmetic of the replay: advancing a rank's clocks and terms over its K
//! configurations at once, in straight loops over `f64` slices.

/// `x.max(y)` (the other when one is NaN) as a compare and select. On wasm `f64::max` is a call
/// to libm's `fmax` (wasm's `f64.max` propagates NaN), which took a sixth of the page's what-if;
/// this is that function's expression, so the bits are the same on every target.
#[inline(always)]
pub(crate) fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || x < y {
        y
    } else {
        x
    }
}

#[inline(always)]
pub(crate) fn advance_clock(clock: &mut [f64], dt: f64) {
    for c in clock.iter_mut() {
        *c += dt;
    }
}

/// A send's injection starts when both the rank and its interface are free; the interface is
/// then busy for `B·β`. `start` holds the rank's clock on entry and the injection start on exit.
#[inline(always)]
pub(crate) fn inject(start: &mut [f64], nic: &mut [f64], beta: &[f64], eff: f64) {
    for ((s, n), b) in start.iter_mut().zip(nic.iter_mut()).zip(beta) {
        *s = fmax(*s, *n);
        *n = *s + eff * b;
    }
}

/// A send completes when its bytes are injected: `start + B·β`.
#[inline(always)]
pub(crate) fn complete_send(clock: &mut [f64], bandwidth: &mut [f64], start: &[f64], beta: &[f64], eff: f64) {
    for (((c, bw), s), b) in clock.iter_mut().zip(bandwidth.iter_mut()).zip(start).zip(beta) {
        let d = fmax(s + eff * b - *c, 0.0);
        *bw += d;
        *c += d;
    }
}

/// What a receive of `B` effective bytes costs under each configuration: the transfer
/// `α + B·β` and the latency's share of it, `α / (α + B·β)`.
#[inline(always)]
pub(crate) fn recv_costs(alpha: &[f64], beta: &[f64], eff: f64, cost: &mut [f64], share: &mut [f64]) {
    for (((c, s), a), b) in cost.iter_mut().zip(share.iter_mut()).zip(alpha).zip(beta) {
        let transfer_cost = a + eff * b;
        *c = transfer_cost;
        *s = a / fmax(transfer_cost, f64::MIN_POSITIVE);
    }
}

/// A receive completes at `max(clock, sent + α + B·β)`; the idle time before the sender sent is
/// waiting, the rest is split between latency and bandwidth in proportion α : B·β (`cost`,
/// `share`: [`recv_costs`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn complete_recv(
    clock: &mut [f64],
    wait: &mut [f64],
    latency: &mut [f64],
    bandwidth: &mut [f64],
    sent: &[f64],
    cost: &[f64],
    share: &[f64],
) {
    let k = clock.len();
    let (wait, latency, bandwidth) = (&mut wait[..k], &mut latency[..k], &mut bandwidth[..k]);
    let (sent, cost, share) = (&sent[..k], &cost[..k], &share[..k]);
    for i in 0..k {
        let c = clock[i];
        let delta = fmax(sent[i] + cost[i] - c, 0.0);
        let idle = fmax(sent[i] - c, 0.0);
        let transfer = delta - idle;
        let lat = transfer * share[i];
        wait[i] += idle;
        latency[i] += lat;
        bandwidth[i] += transfer - lat;
        clock[i] = c + delta;
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn apply_collective(
    clock: &mut [f64],
    wait: &mut [f64],
    latency: &mut [f64],
    bandwidth: &mut [f64],
    start: &[f64],
    alpha: &[f64],
    beta: &[f64],
    steps: f64,
    eff: f64,
) {
    let k = clock.len();
    let (wait, latency, bandwidth) = (&mut wait[..k], &mut latency[..k], &mut bandwidth[..k]);
    let (start, alpha, beta) = (&start[..k], &alpha[..k], &beta[..k]);
    for i in 0..k {
        let c = clock[i];
        let s = fmax(start[i], c);
        let l = steps * alpha[i];
        let b = eff * beta[i];
        wait[i] += s - c;
        latency[i] += l;
        bandwidth[i] += b;
        clock[i] = s + l + b;
    }
}

#[inline(always)]
pub(crate) fn max_into(dst: &mut [f64], src: &[f64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = fmax(*d, *s);
    }
}

#[inline(always)]
pub(crate) fn ns_to_s(ns: u64) -> f64 {
    ns as f64 * 1e-9
}
