//! What to generate: the [`Spec`] and its parts, with the textual forms the command line uses.

use crate::units::format_duration_ns;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use tracelogic_graph::TopologySpec;
use tracelogic_model::query::{parse_bytes, parse_time};
use tracelogic_model::CollectiveOp;

/// A synthetic SPMD program on a known topology, everything needed to generate its trace.
///
/// Every field has a default ([`Spec::default`]: 10 iterations of an `isend` halo exchange of
/// 4 KiB messages on a 4×4 torus, row-major numbering, 10 µs of compute per iteration), and in
/// JSON every field may be left out. When [`Spec::phases`] is non-empty the program runs those
/// phases one after the other, each taking the fields it does not set from the spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Spec {
    /// The communication topology, e.g. `torus:4x4` (see `tracelogic_graph::families`).
    #[serde(with = "topology_text")]
    pub topology: TopologySpec,
    /// How world ranks are assigned to topology nodes.
    pub numbering: Numbering,
    /// Seed of every random choice (numbering, imbalance, noise): same seed, same trace.
    pub seed: u64,
    /// Iterations of the communication pattern.
    pub iterations: u32,
    /// Bytes of every point-to-point message of the pattern.
    pub bytes: u64,
    /// Per-direction overrides of [`Spec::bytes`], keyed by direction name (`east`, `north`,
    /// `parent`, `bit0`, `+1`, `row-bit0`, `transpose`: see `tracelogic_graph::Direction::name`).
    pub direction_bytes: BTreeMap<String, u64>,
    /// Compute time in each iteration before the rank communicates, in nanoseconds.
    pub compute_ns: u64,
    /// Per-rank imbalance: rank r computes `compute_ns × (1 + imbalance × x_r)` with `x_r`
    /// drawn uniformly from `[0, 1)` once per rank. 0 = perfectly balanced.
    pub imbalance: f64,
    /// How each iteration's messages are exchanged.
    pub style: Style,
    /// Collectives on `MPI_COMM_WORLD` every few iterations, in this order.
    pub collectives: Vec<CollectiveSpec>,
    /// Optional low-volume traffic to non-neighbours.
    pub noise: Option<Noise>,
    /// Phases run one after the other; empty = one phase made of the fields above.
    pub phases: Vec<Phase>,
    /// Parameters of the clock model.
    pub clock: Clock,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            topology: TopologySpec::parse("torus:4x4").expect("a valid built-in topology"),
            numbering: Numbering::RowMajor,
            seed: 0,
            iterations: 10,
            bytes: 4096,
            direction_bytes: BTreeMap::new(),
            compute_ns: 10_000,
            imbalance: 0.0,
            style: Style::Isend,
            collectives: Vec::new(),
            noise: None,
            phases: Vec::new(),
            clock: Clock::default(),
        }
    }
}

/// How world ranks are assigned to topology nodes (the ground truth a topology identification
/// has to recover).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Numbering {
    /// Rank r plays node r (row-major, dimension 0 fastest).
    RowMajor,
    /// A uniformly random permutation of all ranks.
    Random,
    /// Start row-major, then renumber this fraction of the ranks among themselves (Logicalization
    /// §5.3 renumbers 2/3): exactly `round(fraction × n)` ranks end up on another node (a
    /// single leftover rank cannot move alone, so 1 becomes 2).
    Partial(f64),
}

impl FromStr for Numbering {
    type Err = String;
    fn from_str(s: &str) -> Result<Numbering, String> {
        match s.trim() {
            "row-major" | "rowmajor" | "identity" => Ok(Numbering::RowMajor),
            "random" => Ok(Numbering::Random),
            t => {
                let f = t
                    .strip_prefix("partial:")
                    .ok_or_else(|| format!("unknown numbering `{s}` (use row-major, random or partial:FRACTION)"))?;
                let x = parse_fraction(f).map_err(|e| format!("numbering `{s}`: {e}"))?;
                Ok(Numbering::Partial(x))
            }
        }
    }
}

impl fmt::Display for Numbering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numbering::RowMajor => f.write_str("row-major"),
            Numbering::Random => f.write_str("random"),
            Numbering::Partial(x) => write!(f, "partial:{x}"),
        }
    }
}

/// How an iteration's point-to-point messages are exchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Style {
    /// `MPI_Irecv` from every incoming neighbour, `MPI_Isend` to every outgoing one, one
    /// `MPI_Waitall` completing them all.
    Isend,
    /// One `MPI_Sendrecv` per direction: send along it, receive from the opposite side
    /// (`MPI_Send` / `MPI_Recv` where a mesh border leaves only one side).
    Sendrecv,
    /// Blocking `MPI_Send` / `MPI_Recv`, every rank following one global order of the messages
    /// (direction, then parity class, then sender) so that no synchronous send can deadlock.
    Blocking,
    /// LU-like sweep on a 2D grid: receive from north and west, compute, send south and east;
    /// then the reverse sweep (receive from south and east, compute, send north and west).
    Wavefront,
}

impl Style {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Style::Isend => "isend",
            Style::Sendrecv => "sendrecv",
            Style::Blocking => "blocking",
            Style::Wavefront => "wavefront",
        }
    }
}

impl FromStr for Style {
    type Err = String;
    fn from_str(s: &str) -> Result<Style, String> {
        match s.trim() {
            "isend" | "isend-irecv-waitall" => Ok(Style::Isend),
            "sendrecv" => Ok(Style::Sendrecv),
            "blocking" => Ok(Style::Blocking),
            "wavefront" => Ok(Style::Wavefront),
            _ => Err(format!(
                "unknown style `{s}` (use isend, sendrecv, blocking or wavefront)"
            )),
        }
    }
}

impl fmt::Display for Style {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective on `MPI_COMM_WORLD` after every `every`-th iteration of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct CollectiveSpec {
    /// `Allreduce`, `Barrier` or `Bcast` (root: world rank 0).
    pub op: CollectiveOp,
    /// Period in iterations (≥ 1).
    pub every: u32,
    /// Bytes per rank (0 for a barrier).
    pub bytes: u64,
}

impl FromStr for CollectiveSpec {
    type Err = String;
    /// `OP:EVERY[:BYTES]`, e.g. `allreduce:5`, `bcast:10:1Ki`, `barrier:1`.
    fn from_str(s: &str) -> Result<CollectiveSpec, String> {
        let mut parts = s.trim().split(':');
        let op = match parts.next().unwrap_or("") {
            "allreduce" => CollectiveOp::Allreduce,
            "barrier" => CollectiveOp::Barrier,
            "bcast" => CollectiveOp::Bcast,
            o => {
                return Err(format!(
                    "unknown collective `{o}` in `{s}` (use allreduce, barrier or bcast)"
                ))
            }
        };
        let every = match parts.next() {
            Some(e) => e
                .parse::<u32>()
                .ok()
                .filter(|&e| e > 0)
                .ok_or_else(|| format!("collective `{s}`: the period must be a positive integer, got `{e}`"))?,
            None => 1,
        };
        let bytes = match (parts.next(), op) {
            (Some(b), CollectiveOp::Barrier) => {
                return Err(format!("collective `{s}`: a barrier carries no data, `{b}` given"))
            }
            (Some(b), _) => parse_bytes(b).map_err(|e| format!("collective `{s}`: {e}"))?,
            (None, CollectiveOp::Barrier) => 0,
            (None, _) => 8,
        };
        if let Some(extra) = parts.next() {
            return Err(format!("collective `{s}`: unexpected `{extra}` (use OP:EVERY[:BYTES])"));
        }
        Ok(CollectiveSpec { op, every, bytes })
    }
}

impl fmt::Display for CollectiveSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            CollectiveOp::Barrier => return write!(f, "barrier:{}", self.every),
            CollectiveOp::Bcast => "bcast",
            _ => "allreduce",
        };
        write!(f, "{op}:{}:{}", self.every, self.bytes)
    }
}

/// Low-volume traffic off the topology, the kind the matrix filter (Logicalization §4.1) must remove.
///
/// `round(fraction × active ranks)` ranks of each phase, chosen once per phase, each send one
/// message per iteration to one fixed random rank that is not their topology neighbour,
/// `percent`% of the phase's message size (at least 1 byte).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Noise {
    /// Share of ranks that send noise (0..=1).
    pub fraction: f64,
    /// Size of a noise message in percent of the main message size.
    pub percent: f64,
}

impl FromStr for Noise {
    type Err = String;
    /// `FRACTION:PERCENT%`, e.g. `0.1:2%`.
    fn from_str(s: &str) -> Result<Noise, String> {
        let (f, p) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("noise `{s}`: expected FRACTION:PERCENT% (e.g. 0.1:2%)"))?;
        let fraction = parse_fraction(f).map_err(|e| format!("noise `{s}`: {e}"))?;
        let percent: f64 = p
            .trim()
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("noise `{s}`: bad percentage `{p}`"))?;
        Ok(Noise { fraction, percent })
    }
}

impl fmt::Display for Noise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}%", self.fraction, self.percent)
    }
}

/// One phase of a multi-phase program; unset fields come from the [`Spec`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Phase {
    /// Topology of this phase (it may have fewer nodes than the largest phase: the ranks whose
    /// node does not exist in it stay idle).
    #[serde(with = "opt_topology_text", skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// Iterations of this phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// Message size of this phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Per-direction sizes of this phase (replace the spec's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction_bytes: Option<BTreeMap<String, u64>>,
    /// Compute per iteration in this phase, in nanoseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_ns: Option<u64>,
    /// Exchange style of this phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<Style>,
}

impl FromStr for Phase {
    type Err = String;
    /// Comma-separated `key=value` pairs: `topology=torus:4x4,iterations=5,bytes=1Ki,
    /// compute=20us,style=sendrecv`.
    fn from_str(s: &str) -> Result<Phase, String> {
        let mut phase = Phase::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("phase `{s}`: expected key=value, got `{item}`"))?;
            let v = v.trim();
            let err = |e: String| format!("phase `{s}`: {e}");
            match k.trim() {
                "topology" => phase.topology = Some(TopologySpec::parse(v).map_err(err)?),
                "iterations" => {
                    phase.iterations = Some(v.parse().map_err(|_| err(format!("bad iteration count `{v}`")))?)
                }
                "bytes" => phase.bytes = Some(parse_bytes(v).map_err(err)?),
                "compute" => phase.compute_ns = Some(parse_time(v).map_err(err)?),
                "style" => phase.style = Some(v.parse().map_err(err)?),
                other => {
                    return Err(err(format!(
                        "unknown key `{other}` (use topology, iterations, bytes, compute, style)"
                    )))
                }
            }
        }
        Ok(phase)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = &self.topology {
            parts.push(format!("topology={}", topology_string(t)));
        }
        if let Some(i) = self.iterations {
            parts.push(format!("iterations={i}"));
        }
        if let Some(b) = self.bytes {
            parts.push(format!("bytes={b}"));
        }
        if let Some(c) = self.compute_ns {
            parts.push(format!("compute={}", format_duration_ns(c)));
        }
        if let Some(st) = self.style {
            parts.push(format!("style={st}"));
        }
        f.write_str(&parts.join(","))
    }
}

/// The clock model's constants. Every call lasts at least `overhead_ns`; a send also copies its
/// bytes out (`bytes / bandwidth`); a message arrives `latency_ns + bytes / bandwidth` after its
/// send was entered; a receive (or the wait completing it) ends `overhead_ns` after both its entry
/// and the message's arrival. See the crate documentation for the whole model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Clock {
    /// Fixed cost of every MPI call, in nanoseconds.
    pub overhead_ns: u64,
    /// Network latency, in nanoseconds.
    pub latency_ns: u64,
    /// Bandwidth in bytes per nanosecond (= GB/s).
    pub bandwidth: f64,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock {
            overhead_ns: 500,
            latency_ns: 2_000,
            bandwidth: 1.0,
        }
    }
}

/// A number in `[0, 1]`, written as a decimal (`0.67`) or a fraction (`2/3`).
fn parse_fraction(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let x = match s.split_once('/') {
        Some((a, b)) => {
            let a: f64 = a.trim().parse().map_err(|_| format!("bad fraction `{s}`"))?;
            let b: f64 = b.trim().parse().map_err(|_| format!("bad fraction `{s}`"))?;
            a / b
        }
        None => s.parse().map_err(|_| format!("bad fraction `{s}`"))?,
    };
    if x.is_finite() && (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!("fraction `{s}` must be between 0 and 1"))
    }
}

/// `family:AxB`, the form `TopologySpec::parse` reads.
pub(crate) fn topology_string(t: &TopologySpec) -> String {
    let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
    format!("{}:{}", t.family.name(), dims.join("x"))
}

macro_rules! text_conversions {
    ($($t:ty),*) => {$(
        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.to_string()
            }
        }
        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(s: String) -> Result<$t, String> {
                s.parse()
            }
        }
    )*};
}
text_conversions!(Numbering, Style, CollectiveSpec, Noise);

/// Serde for a [`TopologySpec`] as its `family:AxB` text.
pub(crate) mod topology_text {
    use super::topology_string;
    use serde::{Deserialize, Deserializer, Serializer};
    use tracelogic_graph::TopologySpec;

    pub fn serialize<S: Serializer>(t: &TopologySpec, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&topology_string(t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TopologySpec, D::Error> {
        let text = String::deserialize(d)?;
        TopologySpec::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Serde for an optional [`TopologySpec`] as its `family:AxB` text.
mod opt_topology_text {
    use super::topology_string;
    use serde::{Deserialize, Deserializer, Serializer};
    use tracelogic_graph::TopologySpec;

    pub fn serialize<S: Serializer>(t: &Option<TopologySpec>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&topology_string(t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TopologySpec>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => TopologySpec::parse(&text).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_forms_round_trip() {
        for n in ["row-major", "random", "partial:0.5"] {
            assert_eq!(n.parse::<Numbering>().unwrap().to_string(), n);
        }
        assert_eq!("partial:2/3".parse::<Numbering>(), Ok(Numbering::Partial(2.0 / 3.0)));
        assert!("partial:1.5".parse::<Numbering>().is_err());
        assert!("shuffled"
            .parse::<Numbering>()
            .unwrap_err()
            .contains("unknown numbering"));

        let c: CollectiveSpec = "allreduce:5".parse().unwrap();
        assert_eq!((c.op, c.every, c.bytes), (CollectiveOp::Allreduce, 5, 8));
        let c: CollectiveSpec = "bcast:2:1Ki".parse().unwrap();
        assert_eq!((c.op, c.every, c.bytes), (CollectiveOp::Bcast, 2, 1024));
        assert_eq!(c.to_string().parse::<CollectiveSpec>(), Ok(c));
        assert!("barrier:0".parse::<CollectiveSpec>().is_err());
        assert!("gather:3".parse::<CollectiveSpec>().is_err());

        let n: Noise = "0.1:2%".parse().unwrap();
        assert_eq!((n.fraction, n.percent), (0.1, 2.0));
        assert!("0.1".parse::<Noise>().is_err());
        assert!("2:5%".parse::<Noise>().is_err());

        let p: Phase = "topology=grid:4x2,iterations=3,bytes=1Ki,compute=5us,style=sendrecv"
            .parse()
            .unwrap();
        assert_eq!(p.iterations, Some(3));
        assert_eq!(p.bytes, Some(1024));
        assert_eq!(p.compute_ns, Some(5000));
        assert_eq!(p.to_string().parse::<Phase>(), Ok(p));
        assert!("topology=grid:4x2,colour=red"
            .parse::<Phase>()
            .unwrap_err()
            .contains("unknown key"));
    }

    #[test]
    fn spec_json_is_readable_and_round_trips() {
        let spec: Spec = serde_json::from_str(
            r#"{"topology": "stencil6:4x4", "numbering": "partial:0.67", "collectives": ["allreduce:5"],
                "noise": "0.25:1%", "phases": [{"topology": "ring:8", "iterations": 2}]}"#,
        )
        .unwrap();
        assert_eq!(spec.topology, TopologySpec::parse("stencil6:4x4").unwrap());
        assert_eq!(spec.iterations, 10);
        assert_eq!(spec.phases[0].topology, Some(TopologySpec::parse("ring:8").unwrap()));
        let back: Spec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
        let err = serde_json::from_str::<Spec>(r#"{"topolgy": "ring:4"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
    }
}
