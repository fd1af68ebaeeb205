//! The replay across processes that share no memory (the page's pool of workers): one
//! traverses the trace ([`traverse`]) and streams its instructions as bytes ([`encode`]) to
//! executors, each replaying a share of the configurations ([`ShareExecutor`]) exactly as a
//! native executor thread does; the traversal's findings ([`Traversal`]) and the shares' final
//! clocks make the same [`Replay`] as [`super::replay_configurations`], bit for bit.

use super::clock::ns_to_s;
use super::exec::{Clocks, Instr};
use super::{results, Engine};
use crate::replay::network::{Configuration, MessageTable};
use crate::replay::{DroppedCalls, Replay, ReplayError, ReplayWarnings};
use std::ops::Range;
use tracelogic_model::{Matching, Rank, Trace};

const COMPUTE: u8 = 0;
const FROZEN: u8 = 1;
const POST: u8 = 2;
const COMPLETE_SEND: u8 = 3;
const COMPLETE_RECV: u8 = 4;
const OPEN: u8 = 5;
const JOIN: u8 = 6;
const LEAVE: u8 = 7;

/// Append `chunk` to `out`: per instruction a tag byte, then its fields little-endian (ranks
/// and slots as `u32`, seconds and bytes as the `f64`'s bits), 9 to 25 bytes.
pub(crate) fn encode(chunk: &[Instr], out: &mut Vec<u8>) {
    let u = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let f = |out: &mut Vec<u8>, v: f64| out.extend_from_slice(&v.to_bits().to_le_bytes());
    for i in chunk {
        match *i {
            Instr::Compute { r, dt } | Instr::Frozen { r, dt } => {
                out.push(if matches!(i, Instr::Compute { .. }) {
                    COMPUTE
                } else {
                    FROZEN
                });
                u(out, r);
                f(out, dt);
            }
            Instr::Post { r, slot, eff }
            | Instr::CompleteSend { r, slot, eff }
            | Instr::CompleteRecv { r, slot, eff } => {
                out.push(match i {
                    Instr::Post { .. } => POST,
                    Instr::CompleteSend { .. } => COMPLETE_SEND,
                    _ => COMPLETE_RECV,
                });
                u(out, r);
                u(out, slot);
                f(out, eff);
            }
            Instr::Open { r, slot } | Instr::Join { r, slot } => {
                out.push(if matches!(i, Instr::Open { .. }) { OPEN } else { JOIN });
                u(out, r);
                u(out, slot);
            }
            Instr::Leave { r, slot, steps, eff } => {
                out.push(LEAVE);
                u(out, r);
                u(out, slot);
                f(out, steps);
                f(out, eff);
            }
        }
    }
}

/// The instructions [`encode`] wrote into `bytes`, appended to `out`.
pub(crate) fn decode(bytes: &[u8], out: &mut Vec<Instr>) -> Result<(), ReplayError> {
    let mut at = 0;
    let broken = |at: usize, why: &str| ReplayError(format!("replay instructions broken at byte {at}: {why}"));
    while at < bytes.len() {
        let tag = bytes[at];
        let len = match tag {
            COMPUTE | FROZEN => 12,
            POST | COMPLETE_SEND | COMPLETE_RECV => 16,
            OPEN | JOIN => 8,
            LEAVE => 24,
            _ => return Err(broken(at, &format!("unknown instruction {tag}"))),
        };
        let Some(body) = bytes.get(at + 1..at + 1 + len) else {
            return Err(broken(at, "the last instruction is cut short"));
        };
        let u = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().expect("4 bytes"));
        let f = |o: usize| f64::from_bits(u64::from_le_bytes(body[o..o + 8].try_into().expect("8 bytes")));
        out.push(match tag {
            COMPUTE => Instr::Compute { r: u(0), dt: f(4) },
            FROZEN => Instr::Frozen { r: u(0), dt: f(4) },
            POST => Instr::Post {
                r: u(0),
                slot: u(4),
                eff: f(8),
            },
            COMPLETE_SEND => Instr::CompleteSend {
                r: u(0),
                slot: u(4),
                eff: f(8),
            },
            COMPLETE_RECV => Instr::CompleteRecv {
                r: u(0),
                slot: u(4),
                eff: f(8),
            },
            OPEN => Instr::Open { r: u(0), slot: u(4) },
            JOIN => Instr::Join { r: u(0), slot: u(4) },
            _ => Instr::Leave {
                r: u(0),
                slot: u(4),
                steps: f(8),
                eff: f(16),
            },
        });
        at += 1 + len;
    }
    Ok(())
}

/// What the traversal found besides the clocks: everything a [`Replay`] holds but the
/// configurations' results.
#[derive(Debug, Clone, PartialEq)]
pub struct Traversal {
    /// Ranks replayed (each share's state holds `ranks × 6 × K` values).
    pub ranks: usize,
    not_replayed: Vec<f64>,
    warnings: ReplayWarnings,
    peak: u64,
    measured_s: f64,
    calls: u64,
    messages: u64,
}

/// Traverse `trace` once for every configuration, handing the encoded instructions to `hand` in
/// order, a chunk of about 32 Ki instructions at a time (each must go to every executor).
pub fn traverse(
    trace: &Trace,
    dropped: &DroppedCalls,
    matching: &Matching,
    table: Option<&MessageTable>,
    hand: &mut dyn FnMut(&[u8]),
) -> Traversal {
    let all = 0..trace.ranks.len() as Rank;
    let mut engine = Engine::new(trace, dropped, &matching.messages, None, table, all, None);
    let mut bytes = Vec::new();
    engine.run(&mut |v| {
        bytes.clear();
        encode(v, &mut bytes);
        v.clear();
        hand(&bytes);
    });
    let not_replayed = engine.not_replayed.clone();
    let (warnings, peak) = engine.gathered();
    let (start, end) = trace.span();
    Traversal {
        ranks: trace.ranks.len(),
        not_replayed,
        warnings,
        peak,
        measured_s: ns_to_s(end.saturating_sub(start)),
        calls: trace.num_calls(),
        messages: matching.messages.len() as u64,
    }
}

impl Traversal {
    /// The replay of `configs` from the final state of each share's executor (`states`, one per
    /// share of `shares`, in order: [`ShareExecutor::into_state`]).
    pub fn finish(
        self,
        configs: &[Configuration],
        shares: &[Range<usize>],
        states: &[Vec<f64>],
        per_rank: bool,
    ) -> Result<Replay, ReplayError> {
        let covered = shares.first().map(|s| s.start) == Some(0)
            && shares.last().map(|s| s.end) == Some(configs.len())
            && shares.windows(2).all(|w| w[0].end == w[1].start);
        if !covered || shares.len() != states.len() {
            return Err(ReplayError(format!(
                "{} states for shares {shares:?} of {} configurations",
                states.len(),
                configs.len()
            )));
        }
        let mut configurations = Vec::with_capacity(configs.len());
        for (state, share) in states.iter().zip(shares) {
            let k = share.len();
            if state.len() != self.ranks * super::ROWS * k {
                return Err(ReplayError(format!(
                    "a share of {k} configurations came back with {} values for {} ranks",
                    state.len(),
                    self.ranks
                )));
            }
            configurations.extend(results(state, k, &self.not_replayed, &configs[share.clone()], per_rank));
        }
        Ok(Replay {
            configurations,
            measured_s: self.measured_s,
            calls: self.calls,
            messages: self.messages,
            peak_pooled_vectors: self.peak,
            warnings: self.warnings,
        })
    }
}

/// The configurations cut into `n` contiguous shares of about equal size, as the native replay
/// cuts them over its threads (at least 4 configurations each).
pub fn shares(configs: usize, n: usize) -> Vec<Range<usize>> {
    super::shares::shares_of(configs, n)
}

/// One share of the configurations, executing the encoded instructions of a [`traverse`] as
/// they arrive.
pub struct ShareExecutor {
    clocks: Clocks,
    decoded: Vec<Instr>,
}

impl ShareExecutor {
    /// Clocks at 0 for `ranks` ranks under `configs` (not empty).
    pub fn new(configs: &[Configuration], ranks: usize) -> ShareExecutor {
        ShareExecutor {
            clocks: Clocks::new(configs, ranks),
            decoded: Vec::new(),
        }
    }

    /// Execute the next chunk of encoded instructions.
    pub fn run(&mut self, bytes: &[u8]) -> Result<(), ReplayError> {
        self.decoded.clear();
        decode(bytes, &mut self.decoded)?;
        self.clocks.run(&self.decoded);
        Ok(())
    }

    /// The final state for [`Traversal::finish`].
    pub fn into_state(self) -> Vec<f64> {
        self.clocks.into_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of instruction, with values whose bits must survive (a subnormal, -0, NaN's
    /// payload, the largest rank and slot).
    fn every_kind() -> Vec<Instr> {
        vec![
            Instr::Compute { r: 0, dt: 1.5e-9 },
            Instr::Frozen {
                r: u32::MAX,
                dt: f64::MIN_POSITIVE / 4.0,
            },
            Instr::Post {
                r: 7,
                slot: u32::MAX,
                eff: 65536.0,
            },
            Instr::CompleteSend {
                r: 1,
                slot: 2,
                eff: -0.0,
            },
            Instr::CompleteRecv {
                r: 3,
                slot: 4,
                eff: f64::from_bits(0x7ff8_0000_dead_beef),
            },
            Instr::Open { r: 5, slot: 6 },
            Instr::Join { r: 8, slot: 9 },
            Instr::Leave {
                r: 10,
                slot: 11,
                steps: 7.0,
                eff: 1e300,
            },
        ]
    }

    #[test]
    fn instructions_round_trip_through_their_bytes_bit_for_bit() {
        let chunk = every_kind();
        let mut bytes = Vec::new();
        encode(&chunk, &mut bytes);
        // Tag and fields: 13 + 13 + 17 × 3 + 9 × 2 + 25 bytes.
        assert_eq!(bytes.len(), 13 * 2 + 17 * 3 + 9 * 2 + 25);
        let mut back = Vec::new();
        decode(&bytes, &mut back).unwrap();
        assert_eq!(back.len(), chunk.len());
        let bits = |i: &Instr| {
            format!("{i:?}")
                + &match *i {
                    Instr::CompleteRecv { eff, .. } | Instr::CompleteSend { eff, .. } => eff.to_bits().to_string(),
                    Instr::Frozen { dt, .. } => dt.to_bits().to_string(),
                    _ => String::new(),
                }
        };
        for (a, b) in chunk.iter().zip(&back) {
            assert_eq!(bits(a), bits(b));
        }
        // Appended after what is there.
        decode(&bytes[..13], &mut back).unwrap();
        assert_eq!(back.len(), chunk.len() + 1);
        assert_eq!(back[chunk.len()], chunk[0]);
    }

    #[test]
    fn cut_or_unknown_bytes_are_refused_not_misread() {
        let mut bytes = Vec::new();
        encode(&every_kind(), &mut bytes);
        let mut out = Vec::new();
        let e = decode(&bytes[..bytes.len() - 1], &mut out).unwrap_err();
        assert!(e.0.contains("cut short"), "{e}");
        let mut bad = bytes.clone();
        bad[13] = 99;
        let e = decode(&bad, &mut out).unwrap_err();
        assert!(e.0.contains("byte 13") && e.0.contains("unknown instruction 99"), "{e}");
    }
}
