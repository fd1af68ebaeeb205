//! Communication skeletons of the NAS Parallel Benchmarks (NPB 3.3 MPI), at any legal rank count.
//!
//! [`generate_nas`] writes the trace a run of BT, SP, LU, MG, CG, FT, IS or EP would leave: the
//! same MPI calls, in the same order, with the same partners, tags and relative message sizes
//! as the NPB 3.3-MPI sources (Fortran; IS in C), but with the computation replaced by simulated
//! time. It exists
//! because the papers' tables (Logicalization Tables 6–7 and §5.2, PACPM Table 4) are about 4 to
//! 128 ranks and the recorded samples stop at 8–9; a skeleton lets tests and users check what
//! the tool says about the sizes the papers measured.
//!
//! # What each skeleton follows
//!
//! - **BT** (`BT/make_set.f`, `copy_faces.f`, `x_solve.f`, `y_solve.f`, `z_solve.f`, `adi.f`,
//!   `bt.f`, `setup_mpi.f`): `n = p²` ranks, multi-partition with `p` cells per rank; cell `c`
//!   of process `(i, j)` sits at `(i + c, j − c, c) mod p`. `successor`/`predecessor` are
//!   `(i±1, j)`, `(i, j±1)` and the diagonal `(i∓1, j±1)` (`make_set`), a periodic 6-point
//!   stencil. Per time step (`adi`): `copy_faces` (6 `MPI_Irecv`, 6 `MPI_Isend` on `comm_rhs`,
//!   tags EAST 2000 … TOP 7000, sizes 2 layers × 5 components of every cell face that has a
//!   neighbour, `MPI_Waitall`), then per axis a pipelined block-tridiagonal solve on
//!   `comm_solve`: forward stage by stage to the successor (`MAX_CELL_DIM²·30` doubles, tag
//!   WEST/SOUTH/BOTTOM + cell coordinates), then back-substitution to the predecessor
//!   (`MAX_CELL_DIM²·5` doubles, tag EAST/NORTH/TOP + …), each stage `MPI_Irecv`, `MPI_Wait`
//!   (the previous send), `MPI_Wait` (the receive), then `MPI_Isend`. Set-up: `MPI_Comm_split`
//!   and two `MPI_Comm_dup`, 6 broadcasts; one untimed step, a barrier, the time steps; the
//!   verification's two `MPI_Allreduce` around one more `copy_faces`, `MPI_Reduce`, a barrier.
//! - **SP** (`SP/x_solve.f`, `y_solve.f`, `z_solve.f`, `copy_faces.f`, `make_set.f`): the same
//!   partition and `copy_faces`; the solves send `22·b` doubles forward and `10·b` back (`b` the
//!   cell's face without the domain boundary), tag `DEFAULT_TAG` 0, each stage `MPI_Irecv` then
//!   `MPI_Waitall` of that receive and the previous stage's send.
//! - **LU** (`LU/proc_grid.f`, `neighbors.f`, `subdomain.f`, `exchange_1.f`, `exchange_3.f`,
//!   `ssor.f`, `lu.f`): an `xdim × ydim` grid (`ydim` the largest divisor `≤ √n`), rank =
//!   `row + xdim·col`, north/south = `id ∓ 1`, west/east = `id ∓ xdim`, no wrap-around. Each SSOR
//!   iteration sweeps the `nz − 2` interior planes forward (`MPI_Recv` from north and west,
//!   `MPI_Send` to south and east, `5·(jend−jst+1)` / `5·(iend−ist+1)` doubles, tags from_n 2,
//!   from_w 4) and backward (from south and east, tags from_s 1, from_e 3), then `rhs`'s
//!   `exchange_3` (`MPI_Irecv`/`MPI_Send`/`MPI_Wait` per side, `10·ny·nz` and `10·nx·nz`
//!   doubles) and the `l2norm` `MPI_Allreduce`s every `inorm` steps. Set-up: 10 broadcasts,
//!   `erhs`'s `exchange_3`, the one-step `ssor(1)`, then `ssor(itmax)`. Omitted: the few small
//!   messages of `pintgr` (`exchange_4/5/6`); its three `MPI_Allreduce` are kept.
//! - **MG** (`MG/mg.f`: `setup`, `mg3P`, `comm3`, `comm3_ex`, `ready`, `give3`, `take3`,
//!   `give3_ex`, `take3_ex`, `zran3`, `norm2u3`): a `pi1 × pi2 × pi3` periodic process grid
//!   (`pi1 = 2^⌊log₂n/3⌋`, …), levels `lt` (finest) down to 1. `setup` is run per process: at a
//!   level where this process or its neighbour holds no points along an axis, the neighbour
//!   distance `next` doubles, so coarse levels talk to processes 2, 4, … apart; a process holding
//!   no points on some axis is `dead` and skips `comm3`; `take_ex`/`give_ex` send the coarse
//!   values to the processes that had none when interpolating back (`comm3_ex`). `comm3` per
//!   axis: `MPI_Irecv` from both sides (tag `100·(dir+2+10·axis)`), `MPI_Send` to `+1` then
//!   `−1`, two `MPI_Wait`; faces of `(n2−2)(n3−2)`, `n1(n3−2)`, `n1·n2` doubles. The run:
//!   barrier, 7 broadcasts, `zran3` (barrier, 40 `MPI_Allreduce`, barrier, `comm3`), `norm2u3`
//!   (2 `MPI_Allreduce`), one untimed V-cycle, `zran3` again, barrier, `nit` V-cycles
//!   (`mg3P` + `resid`), `MPI_Reduce`. At 8 ranks class S this gives 1438 calls per rank, as
//!   the recorded `npb-mg.S.8` sample.
//! - **CG** (`CG/cg.f`: `setup_proc_info`, `setup_submatrix_info`, `conj_grad`): an `nprows ×
//!   npcols` grid (`npcols = nprows` or `2·nprows`), rank = `row·npcols + col`; the
//!   sum-reductions exchange with `reduce_exch_proc` (`col xor npcols/2^i` … recursive
//!   halving within the row, tags `i`) by `MPI_Irecv`/`MPI_Send`/`MPI_Wait`, and each matrix-
//!   vector product ends with an exchange with the transpose process `exch_proc` (tag 1; a
//!   rank on the diagonal of a square grid sends to itself, as the real code does). 25 CG
//!   iterations per outer iteration, one untimed outer iteration, `niter` timed ones.
//!
//! - **FT** (`FT/ft.f`: `setup`, `transpose_x_yz`, `checksum`), 1D layout: `MPI_Comm_split`
//!   into `commslice1` (every process when `np ≤ nz`; `commslice2`, one process each, is not
//!   written), each 3D FFT's transpose one `MPI_Alltoall` of the rank's share of the complex
//!   grid, each iteration's `checksum` an `MPI_Reduce` of one complex. No point-to-point
//!   message, as Logicalization §5.1 says ("only collective All-All communication").
//! - **IS** (`IS/is.c`: `rank`, `full_verify`): per ranking an `MPI_Allreduce` of the 1024 + 5
//!   bucket counts, an `MPI_Alltoall` of the send counts and an `MPI_Alltoallv` of the keys;
//!   `full_verify` passes the largest key to the next rank (`MPI_Irecv` from `me − 1`,
//!   `MPI_Send` to `me + 1`, tag 1000, 4 bytes): its only point-to-point traffic is a line.
//! - **EP** (`EP/ep.f`): a barrier, the computation, and the `MPI_Allreduce`s of the sums, the
//!   10 annulus counts and the time. No point-to-point message.
//!
//! Messages are sized in bytes (8 per double) from the chosen class's grid; a receive records
//! the size that arrived, as the DUMPI reader does from the status.
//!
//! # Time and numbering
//!
//! The calls are timed by the generator's [`Clock`] model (each call at least the overhead; an
//! eager send lasts overhead + copy; a receive or wait ends overhead after the later of its
//! entry and the message's arrival; collectives end together after the last entry), with
//! compute time proportional to each process's share of the grid between communication steps,
//! so replay and similarity see plausible work. [`NasSpec::numbering`] places the NAS processes
//! on world ranks like [`crate::Spec::numbering`]: rank `r` runs NAS process
//! `NasTruth::node_of_rank[r]`, whose number is its node in [`NasTruth::topology`].

use crate::numbering;
use crate::rng::SplitMix64;
use crate::spec::{topology_string, Clock, Numbering};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use tracelogic_graph::TopologySpec;
use tracelogic_model::{CollectiveOp, P2pDir, Rank, Time, Trace, NOT_COMPLETED, NO_CALLPATH, NO_ROOT};

/// The most calls a skeleton may have, checked before anything is built: the programs (about
/// 80 bytes per call) and the trace (30 to 70) are both in memory, about 3 GB at the limit.
const MAX_CALLS: u64 = 20_000_000;
/// The most ranks a skeleton may have.
const MAX_RANKS: u32 = 1 << 16;
/// The latest time the clock may reach, far below `u64::MAX` so no sum can overflow.
const MAX_TIME: f64 = (1u64 << 62) as f64;
/// Random-stream id of the numbering (the same as the generator's, so a seed places alike).
const STREAM_NUMBERING: u64 = 1;

/// A NAS Parallel Benchmark whose communication [`generate_nas`] reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum NasBenchmark {
    /// Block tri-diagonal solver: multi-partition on a square number of ranks.
    Bt,
    /// Scalar penta-diagonal solver: the same partition as BT, other solve messages.
    Sp,
    /// Lower-upper Gauss-Seidel: wavefront sweeps on a 2D process grid.
    Lu,
    /// Multigrid V-cycles on a 3D periodic process grid.
    Mg,
    /// Conjugate gradient: row reductions and transpose exchanges.
    Cg,
    /// 3D FFT: all-to-all transposes, no point-to-point communication.
    Ft,
    /// Integer sort: all-to-all key exchange, one key passed along the ranks at the end.
    Is,
    /// Embarrassingly parallel: a few reductions.
    Ep,
}

impl NasBenchmark {
    /// Every benchmark, in the papers' order.
    pub const ALL: [NasBenchmark; 8] = [
        NasBenchmark::Bt,
        NasBenchmark::Sp,
        NasBenchmark::Lu,
        NasBenchmark::Mg,
        NasBenchmark::Cg,
        NasBenchmark::Ft,
        NasBenchmark::Is,
        NasBenchmark::Ep,
    ];

    /// Lower-case name (`bt`), as the command line takes it.
    pub fn name(self) -> &'static str {
        match self {
            NasBenchmark::Bt => "bt",
            NasBenchmark::Sp => "sp",
            NasBenchmark::Lu => "lu",
            NasBenchmark::Mg => "mg",
            NasBenchmark::Cg => "cg",
            NasBenchmark::Ft => "ft",
            NasBenchmark::Is => "is",
            NasBenchmark::Ep => "ep",
        }
    }
}

impl FromStr for NasBenchmark {
    type Err = String;
    fn from_str(s: &str) -> Result<NasBenchmark, String> {
        let t = s.trim().to_ascii_lowercase();
        NasBenchmark::ALL
            .into_iter()
            .find(|b| b.name() == t)
            .ok_or_else(|| format!("unknown NAS benchmark `{s}` (use bt, sp, lu, mg, cg, ft, is or ep)"))
    }
}

impl fmt::Display for NasBenchmark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<NasBenchmark> for String {
    fn from(b: NasBenchmark) -> String {
        b.name().to_owned()
    }
}

impl TryFrom<String> for NasBenchmark {
    type Error = String;
    fn try_from(s: String) -> Result<NasBenchmark, String> {
        s.parse()
    }
}

/// An NPB problem class: it sets the grid (hence message sizes) and the default iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum NasClass {
    /// Sample size.
    S,
    /// Workstation size.
    W,
    /// Standard class A.
    A,
    /// Standard class B (the size of PACPM's Table 4).
    B,
    /// Standard class C.
    C,
}

impl NasClass {
    /// Upper-case letter.
    pub fn name(self) -> &'static str {
        match self {
            NasClass::S => "S",
            NasClass::W => "W",
            NasClass::A => "A",
            NasClass::B => "B",
            NasClass::C => "C",
        }
    }
}

impl FromStr for NasClass {
    type Err = String;
    fn from_str(s: &str) -> Result<NasClass, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "S" => Ok(NasClass::S),
            "W" => Ok(NasClass::W),
            "A" => Ok(NasClass::A),
            "B" => Ok(NasClass::B),
            "C" => Ok(NasClass::C),
            _ => Err(format!("unknown NAS class `{s}` (use S, W, A, B or C)")),
        }
    }
}

impl fmt::Display for NasClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<NasClass> for String {
    fn from(c: NasClass) -> String {
        c.name().to_owned()
    }
}

impl TryFrom<String> for NasClass {
    type Error = String;
    fn try_from(s: String) -> Result<NasClass, String> {
        s.parse()
    }
}

/// What skeleton to generate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NasSpec {
    /// Which benchmark.
    pub benchmark: NasBenchmark,
    /// Problem class (grid size, default iterations).
    pub class: NasClass,
    /// World ranks (square for BT/SP, a power of two for LU, MG and CG).
    pub ranks: u32,
    /// Time steps / iterations; `None` = the class's own count (BT S: 60, LU S: 50, ...).
    #[serde(default)]
    pub iterations: Option<u32>,
    /// Which NAS process each world rank runs.
    #[serde(default = "row_major")]
    pub numbering: Numbering,
    /// Seed of the numbering.
    #[serde(default)]
    pub seed: u64,
    /// The clock model.
    #[serde(default)]
    pub clock: Clock,
}

fn row_major() -> Numbering {
    Numbering::RowMajor
}

impl NasSpec {
    /// A spec with row-major numbering, the class's iterations and the default clock.
    pub fn new(benchmark: NasBenchmark, class: NasClass, ranks: u32) -> NasSpec {
        NasSpec {
            benchmark,
            class,
            ranks,
            iterations: None,
            numbering: Numbering::RowMajor,
            seed: 0,
            clock: Clock::default(),
        }
    }
}

/// What [`generate_nas`] knows about the skeleton it wrote: which process each rank runs and
/// on which process grid, so tests can check identification and mapping against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NasTruth {
    /// The spec, iterations resolved.
    pub spec: NasSpec,
    /// The process grid as `FAMILY:DIMS` (`stencil6:4x4`, `grid:8x4`, `torus:2x4x4`,
    /// `nas-cg:4x8`); empty when the run has a single process.
    pub topology: String,
    /// Readable name of that grid (`4x4 6-point stencil`).
    pub topology_label: String,
    /// `node_of_rank[r]`: the NAS process (its node in `topology`) world rank r runs.
    pub node_of_rank: Vec<u32>,
    /// MPI calls in the trace.
    pub calls: u64,
    /// Point-to-point messages (sends).
    pub messages: u64,
    /// Bytes of those messages.
    pub bytes: u64,
}

/// Generate the skeleton trace `spec` describes (format `generated`) and its truth.
pub fn generate_nas(spec: &NasSpec) -> Result<(Trace, NasTruth), String> {
    if spec.ranks == 0 || spec.ranks > MAX_RANKS {
        return Err(format!("ranks must be 1 to {MAX_RANKS}, got {}", spec.ranks));
    }
    if !(spec.clock.bandwidth.is_finite() && spec.clock.bandwidth > 0.0) {
        return Err(format!("bandwidth must be positive, got {}", spec.clock.bandwidth));
    }
    let iterations = spec
        .iterations
        .unwrap_or_else(|| default_iterations(spec.benchmark, spec.class));
    if iterations == 0 {
        return Err("iterations must be at least 1".into());
    }
    let n = spec.ranks;
    let job = match spec.benchmark {
        NasBenchmark::Bt | NasBenchmark::Sp => multipartition(spec.benchmark, spec.class, n, iterations)?,
        NasBenchmark::Lu => lu::lu(spec.class, n, iterations)?,
        NasBenchmark::Mg => mg::mg(spec.class, n, iterations)?,
        NasBenchmark::Cg => cg::cg(spec.class, n, iterations)?,
        NasBenchmark::Ft => ft(spec.class, n, iterations)?,
        NasBenchmark::Is => is(spec.class, n, iterations)?,
        NasBenchmark::Ep => ep(n)?,
    };
    // Every call lasts at most o + L + x(1 GB) and follows at most 10 s of compute (no message
    // nor compute step of any class comes near), so this bounds the last timestamp.
    let c = &spec.clock;
    let per_call = c.overhead_ns as f64 + c.latency_ns as f64 + 1e9 / c.bandwidth + 1e10;
    let bound = job.estimate as f64 * per_call;
    if bound.is_nan() || bound >= MAX_TIME {
        return Err(format!(
            "the simulated clock could pass 2^62 ns (about {bound:.3e} ns): use a smaller overhead or latency, a higher bandwidth or fewer iterations"
        ));
    }
    let node_of_rank = numbering::node_of_rank(spec.numbering, n, &mut SplitMix64::new(spec.seed, STREAM_NUMBERING));
    let mut rank_of_process = vec![0 as Rank; n as usize];
    for (r, &u) in node_of_rank.iter().enumerate() {
        rank_of_process[u as usize] = r as Rank;
    }
    let source = format!("generated:nas-{}.{}.{n}", spec.benchmark, spec.class);
    let mut trace = Trace::new("generated", &source, n);
    for rt in &mut trace.ranks {
        rt.locations.push(tracelogic_model::Location {
            id: 0,
            name: "Master thread".into(),
        });
    }
    let resolved = NasSpec {
        iterations: Some(iterations),
        ..spec.clone()
    };
    trace
        .meta
        .push(("generator".into(), "tracelogic-synth (NAS skeleton)".into()));
    trace.meta.push(("clock resolution".into(), "1 ns".into()));
    trace.meta.push((
        "nas spec".into(),
        serde_json::to_string(&resolved).map_err(|e| format!("cannot encode the spec: {e}"))?,
    ));
    let world: Vec<Rank> = rank_of_process.clone();
    let mut comm_ids = Vec::with_capacity(job.comms.len());
    for (i, name) in job.comms.iter().enumerate() {
        comm_ids.push(if i == 0 { 0 } else { trace.add_comm(name, world.clone()) });
    }
    let stats = simulate(&mut trace, &job.programs, &rank_of_process, &comm_ids, spec.clock)?;
    debug_assert!(
        trace.num_calls() <= job.estimate,
        "{} calls, {} estimated",
        trace.num_calls(),
        job.estimate
    );
    let topology = job.topology.as_ref().map(topology_string).unwrap_or_default();
    let topology_label = job.topology.as_ref().map(|t| t.label()).unwrap_or_default();
    let truth = NasTruth {
        spec: resolved,
        topology,
        topology_label,
        node_of_rank,
        calls: trace.num_calls(),
        messages: stats.messages,
        bytes: stats.bytes,
    };
    Ok((trace, truth))
}

/// The iterations of the class's official run (`niter`, `itmax`, `nit`).
pub fn default_iterations(b: NasBenchmark, c: NasClass) -> u32 {
    use NasClass::*;
    match (b, c) {
        (NasBenchmark::Bt, S) => 60,
        (NasBenchmark::Bt, W) => 200,
        (NasBenchmark::Bt, _) => 200,
        (NasBenchmark::Sp, S) => 100,
        (NasBenchmark::Sp, W) => 400,
        (NasBenchmark::Sp, _) => 400,
        (NasBenchmark::Lu, S) => 50,
        (NasBenchmark::Lu, W) => 300,
        (NasBenchmark::Lu, _) => 250,
        (NasBenchmark::Mg, S | W | A) => 4,
        (NasBenchmark::Mg, _) => 20,
        (NasBenchmark::Cg, S | W | A) => 15,
        (NasBenchmark::Cg, _) => 75,
        (NasBenchmark::Ft, S | W | A) => 6,
        (NasBenchmark::Ft, _) => 20,
        (NasBenchmark::Is, _) => 10,
        (NasBenchmark::Ep, _) => 1,
    }
}

/// The per-rank programs of one benchmark run, in NAS process order.
struct Job {
    programs: Vec<Program>,
    /// The upper bound of calls checked against the limit.
    estimate: u64,
    /// Communicator names; index 0 is `MPI_COMM_WORLD`, the others have every process.
    comms: Vec<String>,
    topology: Option<TopologySpec>,
}

const WORLD: u32 = 0;

/// One step of a process's program.
#[derive(Debug, Clone)]
enum Step {
    /// Time outside MPI.
    Compute(u64),
    /// A call without communication (`MPI_Comm_rank`, `MPI_Comm_split`, `MPI_Init`...).
    Plain(&'static str),
    /// A point-to-point post: `MPI_Isend`/`MPI_Irecv` (request `req`) or blocking.
    Post {
        func: &'static str,
        dir: P2pDir,
        peer: u32,
        tag: i32,
        comm: u32,
        bytes: u64,
        req: Option<u32>,
    },
    /// `MPI_Wait` / `MPI_Waitall` of these requests (possibly none: a null request).
    Wait { func: &'static str, reqs: Vec<u32> },
    /// A collective on a communicator (root as NAS process).
    Collective {
        op: CollectiveOp,
        comm: u32,
        root: Option<u32>,
        bytes: u64,
    },
    /// `MPI_Finalize`: leaves together with every process.
    Finalize,
}

/// A process's program under construction.
#[derive(Debug, Default)]
struct Program {
    steps: Vec<Step>,
    requests: u32,
}

impl Program {
    fn compute(&mut self, ns: u64) {
        if ns > 0 {
            self.steps.push(Step::Compute(ns));
        }
    }
    fn plain(&mut self, func: &'static str) {
        self.steps.push(Step::Plain(func));
    }
    #[allow(clippy::too_many_arguments)]
    fn post(&mut self, func: &'static str, dir: P2pDir, peer: u32, tag: i32, comm: u32, bytes: u64, nb: bool) -> u32 {
        let req = nb.then(|| {
            self.requests += 1;
            self.requests - 1
        });
        self.steps.push(Step::Post {
            func,
            dir,
            peer,
            tag,
            comm,
            bytes,
            req,
        });
        req.unwrap_or(u32::MAX)
    }
    fn isend(&mut self, peer: u32, tag: i32, comm: u32, bytes: u64) -> u32 {
        self.post("MPI_Isend", P2pDir::Send, peer, tag, comm, bytes, true)
    }
    fn irecv(&mut self, peer: u32, tag: i32, comm: u32, bytes: u64) -> u32 {
        self.post("MPI_Irecv", P2pDir::Recv, peer, tag, comm, bytes, true)
    }
    fn send(&mut self, peer: u32, tag: i32, comm: u32, bytes: u64) {
        self.post("MPI_Send", P2pDir::Send, peer, tag, comm, bytes, false);
    }
    fn recv(&mut self, peer: u32, tag: i32, comm: u32, bytes: u64) {
        self.post("MPI_Recv", P2pDir::Recv, peer, tag, comm, bytes, false);
    }
    fn wait(&mut self, req: Option<u32>) {
        self.steps.push(Step::Wait {
            func: "MPI_Wait",
            reqs: req.into_iter().collect(),
        });
    }
    fn waitall(&mut self, reqs: &[u32]) {
        self.steps.push(Step::Wait {
            func: "MPI_Waitall",
            reqs: reqs.to_vec(),
        });
    }
    fn collective(&mut self, op: CollectiveOp, comm: u32, bytes: u64) {
        let root = matches!(op, CollectiveOp::Bcast | CollectiveOp::Reduce).then_some(0);
        self.steps.push(Step::Collective { op, comm, root, bytes });
    }
}

/// Refuse runs whose trace would be too large, from an upper bound of calls per process and
/// iteration, before any program is built.
fn check_calls(n: u32, per_iteration: u64, iterations: u32, fixed: u64) -> Result<u64, String> {
    let calls = (n as u64).saturating_mul(
        per_iteration
            .saturating_mul(iterations as u64 + 2)
            .saturating_add(fixed),
    );
    if calls > MAX_CALLS {
        return Err(format!(
            "this skeleton would have about {calls} calls; the generator stops at {MAX_CALLS} (use --iterations to run fewer steps)"
        ));
    }
    Ok(calls)
}

fn grid_size(b: NasBenchmark, c: NasClass) -> u32 {
    use NasClass::*;
    match (b, c) {
        (_, S) => 12,
        (NasBenchmark::Bt, W) => 24,
        (NasBenchmark::Sp, W) => 36,
        (_, W) => 33,
        (_, A) => 64,
        (_, B) => 102,
        (_, C) => 162,
    }
}

mod bt_sp;
mod cg;
mod collectives;
mod lu;
mod mg;
mod simulate;
#[cfg(test)]
mod tests;

use bt_sp::*;
pub use cg::*;
use collectives::*;
pub use lu::*;
pub use mg::*;
use simulate::*;
