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
        NasBenchmark::Lu => lu(spec.class, n, iterations)?,
        NasBenchmark::Mg => mg(spec.class, n, iterations)?,
        NasBenchmark::Cg => cg(spec.class, n, iterations)?,
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

// ---------------------------------------------------------------------------------------------
// BT and SP: multi-partition.

const EAST: i32 = 2000;
const WEST: i32 = 3000;
const NORTH: i32 = 4000;
const SOUTH: i32 = 5000;
const BOTTOM: i32 = 6000;
const TOP: i32 = 7000;

/// One process's cells: coordinates and sizes per axis, by cell index.
struct Cells {
    p: u32,
    coord: Vec<[u32; 3]>,
    size: Vec<[u32; 3]>,
}

impl Cells {
    fn new(process: u32, p: u32, grid: u32) -> Cells {
        let (i, j) = (process % p, process / p);
        let mut coord = Vec::with_capacity(p as usize);
        for c in 0..p {
            coord.push([(i + c) % p, (j + p - c % p) % p, c]);
        }
        let size = coord
            .iter()
            .map(|cc| {
                let mut s = [0u32; 3];
                for d in 0..3 {
                    let (base, excess) = (grid / p, grid % p);
                    s[d] = if cc[d] < excess { base + 1 } else { base };
                }
                s
            })
            .collect();
        Cells { p, coord, size }
    }

    /// The cell in plane `stage` along `axis`.
    fn slice(&self, axis: usize, stage: u32) -> usize {
        self.coord.iter().position(|c| c[axis] == stage).unwrap_or(0)
    }

    /// Interior extent of cell c along `axis` (its size without the domain boundary point).
    fn interior(&self, c: usize, axis: usize) -> u64 {
        let s = self.size[c][axis] as u64;
        let lo = u64::from(self.coord[c][axis] == 0);
        let hi = u64::from(self.coord[c][axis] == self.p - 1);
        s.saturating_sub(lo + hi)
    }

    fn points(&self) -> u64 {
        self.size
            .iter()
            .map(|s| s.iter().map(|&x| x as u64).product::<u64>())
            .sum()
    }
}

fn multipartition(b: NasBenchmark, class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    let p = (n as f64).sqrt().round() as u32;
    if p * p != n {
        return Err(format!(
            "NAS {} runs on a square number of ranks (4, 9, 16, 25, 36, 64, 121...), not {n}",
            b.name().to_uppercase()
        ));
    }
    let grid = grid_size(b, class);
    if grid / p < 3 {
        return Err(format!(
            "NAS {} class {class} on {n} ranks: cells of {} points are too small (make_set needs at least 3; use a larger class)",
            b.name().to_uppercase(),
            grid / p
        ));
    }
    // copy_faces 13 calls, each solve 8 per stage and direction.
    let estimate = check_calls(n, 16 + 24 * p as u64, iterations, 64)?;
    let (setup, solve, rhs) = (1u32, 2u32, 3u32);
    let max_cell = (grid / p + 1) as u64;
    let programs = (0..n)
        .map(|me| {
            let cells = Cells::new(me, p, grid);
            let (i, j) = (me % p, me / p);
            let at = |x: u32, y: u32| (x % p) + p * (y % p);
            let succ = [at(i + 1, j), at(i, j + 1), at(i + p - 1, j + 1)];
            let pred = [at(i + p - 1, j), at(i, j + p - 1), at(i + 1, j + p - 1)];
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_split");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_dup");
            prog.plain("MPI_Comm_dup");
            for bytes in [4, 8, 12, 4, 4, 4] {
                prog.collective(CollectiveOp::Bcast, setup, bytes);
            }
            let adi = |prog: &mut Program| {
                copy_faces(prog, &cells, n, &succ, &pred, rhs);
                for axis in 0..3 {
                    match b {
                        NasBenchmark::Bt => bt_solve(prog, &cells, axis, succ[axis], pred[axis], solve, max_cell),
                        _ => sp_solve(prog, &cells, axis, succ[axis], pred[axis], solve),
                    }
                }
                prog.compute(cells.points());
            };
            adi(&mut prog);
            prog.collective(CollectiveOp::Barrier, setup, 0);
            for _ in 0..iterations {
                adi(&mut prog);
            }
            prog.collective(CollectiveOp::Allreduce, setup, 40);
            copy_faces(&mut prog, &cells, n, &succ, &pred, rhs);
            prog.collective(CollectiveOp::Allreduce, setup, 40);
            prog.collective(CollectiveOp::Reduce, setup, 8);
            prog.collective(CollectiveOp::Barrier, setup, 0);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec![
            "MPI_COMM_WORLD".into(),
            "comm_setup (split of MPI_COMM_WORLD)".into(),
            "comm_solve (dup of comm_setup)".into(),
            "comm_rhs (dup of comm_setup)".into(),
        ],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("stencil6:{p}x{p}")).expect("a valid stencil")),
    })
}

/// `copy_faces`: the six face buffers to the successors and predecessors, then `MPI_Waitall`.
fn copy_faces(prog: &mut Program, cells: &Cells, n: u32, succ: &[u32; 3], pred: &[u32; 3], comm: u32) {
    if n == 1 {
        prog.compute(cells.points());
        return;
    }
    let p = cells.p;
    // Doubles sent towards +axis and −axis: two layers of 5 components of every face that has
    // a neighbouring cell.
    let mut size = [[0u64; 2]; 3];
    for (c, s) in cells.size.iter().enumerate() {
        for (axis, towards) in size.iter_mut().enumerate() {
            let face: u64 = (0..3).filter(|&d| d != axis).map(|d| s[d] as u64).product();
            if cells.coord[c][axis] != p - 1 {
                towards[0] += 2 * 5 * face;
            }
            if cells.coord[c][axis] != 0 {
                towards[1] += 2 * 5 * face;
            }
        }
    }
    let tags = [(EAST, WEST), (NORTH, SOUTH), (TOP, BOTTOM)];
    let mut reqs = Vec::with_capacity(12);
    for axis in 0..3 {
        let (plus, minus) = tags[axis];
        reqs.push(prog.irecv(succ[axis], minus, comm, 8 * size[axis][0]));
        reqs.push(prog.irecv(pred[axis], plus, comm, 8 * size[axis][1]));
    }
    for axis in 0..3 {
        let (plus, minus) = tags[axis];
        reqs.push(prog.isend(succ[axis], plus, comm, 8 * size[axis][0]));
        reqs.push(prog.isend(pred[axis], minus, comm, 8 * size[axis][1]));
    }
    prog.waitall(&reqs);
    prog.compute(cells.points());
}

/// The two coordinates of a cell other than `axis`, as BT folds them into its solve tags.
fn cross_tag(cells: &Cells, c: usize, axis: usize) -> i32 {
    let others: Vec<u32> = (0..3).filter(|&d| d != axis).map(|d| cells.coord[c][d]).collect();
    (others[0] + others[1] * cells.p) as i32
}

/// BT's pipelined block-tridiagonal solve along `axis` (`x_solve`, `y_solve`, `z_solve`).
fn bt_solve(prog: &mut Program, cells: &Cells, axis: usize, succ: u32, pred: u32, comm: u32, max_cell: u64) {
    let p = cells.p;
    let (forward_tag, backward_tag) = [(WEST, EAST), (SOUTH, NORTH), (BOTTOM, TOP)][axis];
    let forward_bytes = 8 * max_cell * max_cell * 30;
    let backward_bytes = 8 * max_cell * max_cell * 5;
    let mut pending: Option<u32> = None;
    for stage in 0..p {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>() * 4;
        let tag = forward_tag + cross_tag(cells, c, axis);
        if stage > 0 {
            let r = prog.irecv(pred, tag, comm, forward_bytes);
            prog.wait(pending.take());
            prog.wait(Some(r));
        }
        prog.compute(cell_work);
        if stage + 1 < p {
            pending = Some(prog.isend(succ, tag, comm, forward_bytes));
        }
    }
    for stage in (0..p).rev() {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>();
        let tag = backward_tag + cross_tag(cells, c, axis);
        if stage + 1 < p {
            let r = prog.irecv(succ, tag, comm, backward_bytes);
            prog.wait(pending.take());
            prog.wait(Some(r));
        }
        prog.compute(cell_work);
        if stage > 0 {
            pending = Some(prog.isend(pred, tag, comm, backward_bytes));
        }
    }
}

/// SP's pipelined Thomas solve along `axis`: each stage's receive is completed together with
/// the previous stage's send by one `MPI_Waitall`.
fn sp_solve(prog: &mut Program, cells: &Cells, axis: usize, succ: u32, pred: u32, comm: u32) {
    let p = cells.p;
    let face = |c: usize| -> u64 { (0..3).filter(|&d| d != axis).map(|d| cells.interior(c, d)).product() };
    let mut pending: Option<u32> = None;
    for stage in 0..p {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>() * 2;
        if stage > 0 {
            let r = prog.irecv(pred, 0, comm, 8 * 22 * face(c));
            prog.compute(cell_work / 2);
            let reqs: Vec<u32> = [Some(r), pending.take()].into_iter().flatten().collect();
            prog.waitall(&reqs);
        }
        prog.compute(cell_work);
        if stage + 1 < p {
            pending = Some(prog.isend(succ, 0, comm, 8 * 22 * face(c)));
        }
    }
    for stage in (0..p).rev() {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>();
        if stage + 1 < p {
            let r = prog.irecv(succ, 0, comm, 8 * 10 * face(c));
            prog.compute(cell_work / 2);
            let reqs: Vec<u32> = [Some(r), pending.take()].into_iter().flatten().collect();
            prog.waitall(&reqs);
        }
        prog.compute(cell_work);
        if stage > 0 {
            pending = Some(prog.isend(pred, 0, comm, 8 * 10 * face(c)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// LU: 2D wavefront.

const FROM_S: i32 = 1;
const FROM_N: i32 = 2;
const FROM_E: i32 = 3;
const FROM_W: i32 = 4;

/// LU's process grid `xdim × ydim` (`proc_grid`): `ydim` the largest divisor of n not above √n.
pub fn lu_grid(n: u32) -> (u32, u32) {
    let mut ydim = ((n as f64).sqrt() + 0.001) as u32;
    while ydim > 1 && !n.is_multiple_of(ydim) {
        ydim -= 1;
    }
    let ydim = ydim.max(1);
    (n / ydim, ydim)
}

fn lu(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS LU runs on a power-of-two number of ranks, not {n}"));
    }
    let grid = grid_size(NasBenchmark::Lu, class);
    let (xdim, ydim) = lu_grid(n);
    if grid / xdim < 3 || grid / ydim < 3 {
        return Err(format!(
            "NAS LU class {class} on {n} ranks ({xdim}x{ydim} processes): sub-domains of {}x{} points are too small (subdomain needs at least 3; use a larger class)",
            grid / xdim,
            grid / ydim
        ));
    }
    let planes = grid as u64 - 2;
    let estimate = check_calls(n, planes * 8 + 32, iterations, 64)?;
    // comm_solve is MPI_COMM_WORLD itself in NPB 3.3 (the recorded run has no other).
    let solve = WORLD;
    let programs = (0..n)
        .map(|id| {
            let (row, col) = (id % xdim, id / xdim);
            let north = (row > 0).then(|| id - 1);
            let south = (row + 1 < xdim).then(|| id + 1);
            let west = (col > 0).then(|| id - xdim);
            let east = (col + 1 < ydim).then(|| id + xdim);
            let share = |total: u32, parts: u32, k: u32| total / parts + u32::from(k < total % parts);
            let (nx, ny, nz) = (
                share(grid, xdim, row) as u64,
                share(grid, ydim, col) as u64,
                grid as u64,
            );
            let ist = if north.is_none() { 2 } else { 1 };
            let iend = if south.is_none() { nx - 1 } else { nx };
            let jst = if west.is_none() { 2 } else { 1 };
            let jend = if east.is_none() { ny - 1 } else { ny };
            let ns_bytes = 8 * 5 * (jend + 1 - jst);
            let ew_bytes = 8 * 5 * (iend + 1 - ist);
            let plane_work = nx * ny * 20;
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            for bytes in [4, 4, 4, 8, 8, 40, 4, 4, 4, 4] {
                prog.collective(CollectiveOp::Bcast, solve, bytes);
            }
            let exchange_3 = |prog: &mut Program| {
                let (ns, ew) = (8 * 10 * ny * nz, 8 * 10 * nx * nz);
                for (from, to, tag, bytes) in [
                    (north, south, FROM_N, ns),
                    (south, north, FROM_S, ns),
                    (west, east, FROM_W, ew),
                    (east, west, FROM_E, ew),
                ] {
                    let r = from.map(|f| prog.irecv(f, tag, solve, bytes));
                    if let Some(t) = to {
                        prog.send(t, tag, solve, bytes);
                    }
                    if r.is_some() {
                        prog.wait(r);
                    }
                }
                prog.compute(nx * ny * nz * 10);
            };
            let ssor = |prog: &mut Program, niter: u32, itmax: u32| {
                exchange_3(prog);
                prog.collective(CollectiveOp::Allreduce, solve, 40);
                prog.collective(CollectiveOp::Barrier, solve, 0);
                for istep in 1..=niter {
                    for _ in 0..planes {
                        if let Some(f) = north {
                            prog.recv(f, FROM_N, solve, ns_bytes);
                        }
                        if let Some(f) = west {
                            prog.recv(f, FROM_W, solve, ew_bytes);
                        }
                        prog.compute(plane_work);
                        if let Some(t) = south {
                            prog.send(t, FROM_N, solve, ns_bytes);
                        }
                        if let Some(t) = east {
                            prog.send(t, FROM_W, solve, ew_bytes);
                        }
                    }
                    for _ in 0..planes {
                        if let Some(f) = south {
                            prog.recv(f, FROM_S, solve, ns_bytes);
                        }
                        if let Some(f) = east {
                            prog.recv(f, FROM_E, solve, ew_bytes);
                        }
                        prog.compute(plane_work);
                        if let Some(t) = north {
                            prog.send(t, FROM_S, solve, ns_bytes);
                        }
                        if let Some(t) = west {
                            prog.send(t, FROM_E, solve, ew_bytes);
                        }
                    }
                    if istep % itmax == 0 {
                        prog.collective(CollectiveOp::Allreduce, solve, 40);
                    }
                    exchange_3(prog);
                    if istep % itmax == 0 || istep == itmax {
                        prog.collective(CollectiveOp::Allreduce, solve, 40);
                    }
                }
                prog.collective(CollectiveOp::Allreduce, solve, 8);
            };
            exchange_3(&mut prog);
            ssor(&mut prog, 1, iterations);
            ssor(&mut prog, iterations, iterations);
            prog.collective(CollectiveOp::Allreduce, solve, 40);
            for _ in 0..3 {
                prog.collective(CollectiveOp::Allreduce, solve, 8);
            }
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| {
            let dims: Vec<String> = [xdim, ydim].iter().filter(|&&d| d > 1).map(u32::to_string).collect();
            TopologySpec::parse(&format!("grid:{}", dims.join("x"))).expect("a valid grid")
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// MG: multigrid on a 3D periodic process grid.

/// What `setup` in mg.f computes for one process, per level `k` (index k − 1) and axis.
struct MgLevels {
    /// Points + 2 ghost layers along each axis.
    m: Vec<[u64; 3]>,
    dead: Vec<bool>,
    take_ex: Vec<[bool; 3]>,
    give_ex: Vec<[bool; 3]>,
    /// Neighbour along each axis towards −1 and +1.
    nbr: Vec<[[u32; 2]; 3]>,
}

/// MG's process grid `pi1 × pi2 × pi3` (`setup`).
pub fn mg_grid(n: u32) -> [u32; 3] {
    let log_p = n.trailing_zeros();
    let dx = log_p / 3;
    let dy = (log_p - dx) / 2;
    let (p1, p2) = (1u32 << dx, 1u32 << dy);
    [p1, p2, n / (p1 * p2)]
}

fn mg_setup(me: u32, n: u32, lt: u32, grid: u64) -> MgLevels {
    let pi = mg_grid(n);
    let idi = [me % pi[0], (me / pi[0]) % pi[1], me / (pi[0] * pi[1])];
    let levels = lt as usize;
    let mut out = MgLevels {
        m: vec![[0; 3]; levels],
        dead: vec![false; levels],
        take_ex: vec![[false; 3]; levels],
        give_ex: vec![[false; 3]; levels],
        nbr: vec![[[0; 2]; 3]; levels],
    };
    let mut next = [1u64; 3];
    for k in (1..=levels).rev() {
        let ng = grid >> (levels - k);
        let mut mi = [0u64; 3];
        for ax in 0..3 {
            let (p, id) = (pi[ax] as u64, idi[ax] as u64);
            mi[ax] = 2 + ((id + 1) * ng) / p - (id * ng) / p;
            let mip = 2 + ((next[ax] + id + 1) * ng) / p - ((next[ax] + id) * ng) / p;
            if mip == 2 || mi[ax] == 2 {
                next[ax] *= 2;
            }
            if k < levels {
                if mip == 2 && mi[ax] == 3 {
                    out.give_ex[k][ax] = true;
                }
                if mip == 3 && mi[ax] == 2 {
                    out.take_ex[k][ax] = true;
                }
            }
        }
        out.dead[k - 1] = mi.contains(&2);
        out.m[k - 1] = mi;
        for ax in 0..3 {
            let p = pi[ax] as i64;
            for (d, sign) in [(0usize, -1i64), (1, 1)] {
                let moved = (idi[ax] as i64 + sign * next[ax] as i64).rem_euclid(p) as u32;
                let mut c = idi;
                c[ax] = moved;
                out.nbr[k - 1][ax][d] = c[0] + pi[0] * (c[1] + pi[1] * c[2]);
            }
        }
    }
    out
}

fn msg_type(axis: usize, dir: i32) -> i32 {
    100 * (dir + 2 + 10 * (axis as i32 + 1))
}

fn mg(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS MG runs on a power-of-two number of ranks, not {n}"));
    }
    let grid: u64 = match class {
        NasClass::S => 32,
        NasClass::W => 128,
        NasClass::A | NasClass::B => 256,
        NasClass::C => 512,
    };
    let lt = grid.trailing_zeros();
    let pi = mg_grid(n);
    if pi.iter().any(|&p| p as u64 > grid) {
        return Err(format!(
            "NAS MG class {class} has a {grid}³ grid: too small for {n} ranks"
        ));
    }
    let estimate = check_calls(n, 4 * 18 * lt as u64 + 40, iterations, 200)?;
    let programs = (0..n)
        .map(|me| {
            let lv = mg_setup(me, n, lt, grid);
            let levels = lt as usize;
            let mut prog = Program::default();
            let comm3 = |prog: &mut Program, k: usize| {
                let m = lv.m[k - 1];
                prog.compute(m.iter().product::<u64>());
                if n == 1 || lv.dead[k - 1] {
                    return;
                }
                let face = [(m[1] - 2) * (m[2] - 2), m[0] * (m[2] - 2), m[0] * m[1]];
                for (ax, &f) in face.iter().enumerate() {
                    let nbr = lv.nbr[k - 1][ax];
                    let from_plus = prog.irecv(nbr[1], msg_type(ax, -1), WORLD, 8 * f);
                    let from_minus = prog.irecv(nbr[0], msg_type(ax, 1), WORLD, 8 * f);
                    prog.send(nbr[1], msg_type(ax, 1), WORLD, 8 * f);
                    prog.send(nbr[0], msg_type(ax, -1), WORLD, 8 * f);
                    prog.wait(Some(from_plus));
                    prog.wait(Some(from_minus));
                }
            };
            let comm3_ex = |prog: &mut Program, k: usize| {
                let m = lv.m[k - 1];
                prog.compute(m.iter().product::<u64>());
                if n == 1 {
                    return;
                }
                let face = [m[1] * m[2], m[0] * m[2], m[0] * m[1]];
                for (ax, &f) in face.iter().enumerate() {
                    let nbr = lv.nbr[k - 1][ax];
                    if lv.take_ex[k - 1][ax] {
                        let from_plus = prog.irecv(nbr[1], msg_type(ax, -1), WORLD, 8 * 2 * f);
                        let from_minus = prog.irecv(nbr[0], msg_type(ax, 1), WORLD, 8 * 2 * f);
                        prog.wait(Some(from_plus));
                        prog.wait(Some(from_minus));
                    }
                    if lv.give_ex[k - 1][ax] {
                        prog.send(nbr[1], msg_type(ax, 1), WORLD, 8 * 2 * f);
                        prog.send(nbr[0], msg_type(ax, -1), WORLD, 8 * f);
                    }
                }
            };
            let norm2u3 = |prog: &mut Program| {
                prog.collective(CollectiveOp::Allreduce, WORLD, 8);
                prog.collective(CollectiveOp::Allreduce, WORLD, 8);
            };
            let zran3 = |prog: &mut Program| {
                prog.compute(lv.m[levels - 1].iter().product::<u64>());
                prog.collective(CollectiveOp::Barrier, WORLD, 0);
                for _ in 0..10 {
                    for bytes in [8, 16, 8, 16] {
                        prog.collective(CollectiveOp::Allreduce, WORLD, bytes);
                    }
                }
                prog.collective(CollectiveOp::Barrier, WORLD, 0);
                comm3(prog, levels);
            };
            let mg3p = |prog: &mut Program| {
                for k in (2..=levels).rev() {
                    comm3(prog, k - 1);
                }
                comm3(prog, 1);
                for k in 2..levels {
                    comm3_ex(prog, k);
                    comm3(prog, k);
                    comm3(prog, k);
                }
                comm3_ex(prog, levels);
                comm3(prog, levels);
                comm3(prog, levels);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            for bytes in [4, 4, 4, 4, 4, 32, 4] {
                prog.collective(CollectiveOp::Bcast, WORLD, bytes);
            }
            zran3(&mut prog);
            norm2u3(&mut prog);
            comm3(&mut prog, levels);
            norm2u3(&mut prog);
            mg3p(&mut prog);
            comm3(&mut prog, levels);
            zran3(&mut prog);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            comm3(&mut prog, levels);
            norm2u3(&mut prog);
            for _ in 0..iterations {
                mg3p(&mut prog);
                comm3(&mut prog, levels);
            }
            norm2u3(&mut prog);
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    let dims: Vec<String> = pi.iter().filter(|&&d| d > 1).map(u32::to_string).collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (!dims.is_empty()).then(|| {
            let family = if dims.len() == 1 { "ring" } else { "torus" };
            TopologySpec::parse(&format!("{family}:{}", dims.join("x"))).expect("a valid torus")
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// CG: row reductions and transpose exchange.

/// CG's process grid `nprows × npcols` (npbparams: `npcols = nprows` or `2·nprows`).
pub fn cg_grid(n: u32) -> (u32, u32) {
    let k = n.trailing_zeros();
    let rows = 1u32 << (k / 2);
    (rows, n / rows)
}

/// What `setup_submatrix_info` computes for process `me`.
struct CgProc {
    exch_proc: u32,
    send_len: u64,
    reduce_exch_proc: Vec<u32>,
    reduce_send_lengths: Vec<u64>,
    reduce_recv_lengths: Vec<u64>,
    rows: u64,
    cols: u64,
}

fn cg_setup(me: u32, na: u64, nprows: u32, npcols: u32) -> CgProc {
    let proc_row = me / npcols;
    let proc_col = me - proc_row * npcols;
    let (pr, pc) = (proc_row as u64, proc_col as u64);
    let (nr, nc) = (nprows as u64, npcols as u64);
    let (firstrow, lastrow, firstcol, lastcol);
    if na / nc * nc == na {
        let col_size = na / nc;
        firstcol = pc * col_size + 1;
        lastcol = firstcol - 1 + col_size;
        let row_size = na / nr;
        firstrow = pr * row_size + 1;
        lastrow = firstrow - 1 + row_size;
    } else {
        let extra = na - na / nr * nr;
        if pr < extra {
            let row_size = na / nr + 1;
            firstrow = pr * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        } else {
            let row_size = na / nr;
            firstrow = extra * (row_size + 1) + (pr - extra) * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        }
        if nc == nr {
            let extra = na - na / nc * nc;
            if pc < extra {
                let col_size = na / nc + 1;
                firstcol = pc * col_size + 1;
                lastcol = firstcol - 1 + col_size;
            } else {
                let col_size = na / nc;
                firstcol = extra * (col_size + 1) + (pc - extra) * col_size + 1;
                lastcol = firstcol - 1 + col_size;
            }
        } else {
            let half = nc / 2;
            let extra = na - na / half * half;
            let (col_size, first) = if pc / 2 < extra {
                let s = na / half + 1;
                (s, (pc / 2) * s + 1)
            } else {
                let s = na / half;
                (s, extra * (s + 1) + (pc / 2 - extra) * s + 1)
            };
            if me.is_multiple_of(2) {
                firstcol = first;
                lastcol = first - 1 + (col_size - 1) / 2 + 1;
            } else {
                firstcol = first + (col_size - 1) / 2 + 1;
                lastcol = firstcol - 1 + col_size / 2;
            }
        }
    }
    let nrows_local = lastrow - firstrow + 1;
    let send_len = if nc == nr {
        nrows_local
    } else if me.is_multiple_of(2) {
        nrows_local.div_ceil(2)
    } else {
        nrows_local / 2
    };
    let exch_proc = if npcols == nprows {
        (me % nprows) * nprows + me / nprows
    } else {
        2 * ((me / 2) % nprows * nprows + me / 2 / nprows) + me % 2
    };
    let l2npcols = npcols.trailing_zeros() as usize;
    let mut reduce_exch_proc = Vec::with_capacity(l2npcols);
    let mut div = npcols;
    for _ in 0..l2npcols {
        let j = (proc_col + div / 2) % div + proc_col / div * div;
        reduce_exch_proc.push(proc_row * npcols + j);
        div /= 2;
    }
    let mut reduce_send_lengths = vec![0; l2npcols];
    let mut reduce_recv_lengths = vec![0; l2npcols];
    for i in (0..l2npcols).rev() {
        if nr == nc {
            reduce_send_lengths[i] = send_len;
            reduce_recv_lengths[i] = nrows_local;
        } else {
            reduce_recv_lengths[i] = send_len;
            reduce_send_lengths[i] = if i + 1 == l2npcols {
                nrows_local - send_len
            } else {
                send_len
            };
        }
    }
    CgProc {
        exch_proc,
        send_len,
        reduce_exch_proc,
        reduce_send_lengths,
        reduce_recv_lengths,
        rows: nrows_local,
        cols: lastcol - firstcol + 1,
    }
}

fn cg(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS CG runs on a power-of-two number of ranks, not {n}"));
    }
    let (na, nonzer): (u64, u64) = match class {
        NasClass::S => (1400, 7),
        NasClass::W => (7000, 8),
        NasClass::A => (14000, 11),
        NasClass::B => (75000, 13),
        NasClass::C => (150000, 15),
    };
    let (nprows, npcols) = cg_grid(n);
    if (nprows as u64) > na / 2 {
        return Err(format!("NAS CG class {class} has {na} rows: too few for {n} ranks"));
    }
    let l2 = npcols.trailing_zeros() as u64;
    let estimate = check_calls(n, 27 * (9 * l2 + 3) + 10, iterations, 16)?;
    let programs = (0..n)
        .map(|me| {
            let cp = cg_setup(me, na, nprows, npcols);
            let mut prog = Program::default();
            let exchange = |prog: &mut Program, partner: u32, tag: i32, recv: u64, send: u64| {
                let r = prog.irecv(partner, tag, WORLD, 8 * recv);
                prog.send(partner, tag, WORLD, 8 * send);
                prog.wait(Some(r));
            };
            let scalar_reduce = |prog: &mut Program, doubles: u64| {
                for (i, &partner) in cp.reduce_exch_proc.iter().enumerate() {
                    exchange(prog, partner, i as i32 + 1, doubles, doubles);
                }
            };
            let matvec = |prog: &mut Program| {
                prog.compute(cp.rows * nonzer * nonzer / 4 + cp.rows);
                for i in (0..cp.reduce_exch_proc.len()).rev() {
                    exchange(
                        prog,
                        cp.reduce_exch_proc[i],
                        i as i32 + 1,
                        cp.reduce_recv_lengths[i],
                        cp.reduce_send_lengths[i],
                    );
                }
                if npcols > 1 {
                    exchange(prog, cp.exch_proc, 1, cp.cols, cp.send_len);
                }
            };
            let conj_grad = |prog: &mut Program| {
                prog.compute(cp.cols);
                scalar_reduce(prog, 1);
                for _ in 0..25 {
                    matvec(prog);
                    prog.compute(cp.cols);
                    scalar_reduce(prog, 1);
                    prog.compute(2 * cp.cols);
                    scalar_reduce(prog, 1);
                    prog.compute(cp.cols);
                }
                matvec(prog);
                prog.compute(cp.cols);
                scalar_reduce(prog, 1);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.compute(cp.rows * nonzer * 10);
            conj_grad(&mut prog);
            scalar_reduce(&mut prog, 2);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            for _ in 0..iterations {
                conj_grad(&mut prog);
                scalar_reduce(&mut prog, 2);
                prog.compute(cp.cols);
            }
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("nas-cg:{nprows}x{npcols}")).expect("a valid CG grid")),
    })
}

// ---------------------------------------------------------------------------------------------
// FT, IS, EP: collectives.

fn ft(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS FT runs on a power-of-two number of ranks, not {n}"));
    }
    let (nx, ny, nz): (u64, u64, u64) = match class {
        NasClass::S => (64, 64, 64),
        NasClass::W => (128, 128, 32),
        NasClass::A => (256, 256, 128),
        NasClass::B => (512, 256, 256),
        NasClass::C => (512, 512, 512),
    };
    if n as u64 > ny * nz {
        return Err(format!(
            "NAS FT class {class} has a {nx}x{ny}x{nz} grid: too small for {n} ranks"
        ));
    }
    let estimate = check_calls(n, 8, iterations, 32)?;
    // The whole complex grid crosses the network once per transpose: each rank sends its share.
    let share = 16 * nx * ny * nz / n as u64;
    let slice1 = 1u32;
    let programs = (0..n)
        .map(|_| {
            let mut prog = Program::default();
            let transpose = |prog: &mut Program| {
                prog.compute(share / 8);
                prog.collective(CollectiveOp::Alltoall, slice1, share);
                prog.compute(share / 8);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.plain("MPI_Comm_split");
            prog.compute(share / 4);
            transpose(&mut prog);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            prog.compute(share / 4);
            transpose(&mut prog);
            for _ in 0..iterations {
                prog.compute(share / 8);
                transpose(&mut prog);
                prog.collective(CollectiveOp::Reduce, WORLD, 16);
            }
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into(), "commslice1 (split of MPI_COMM_WORLD)".into()],
        topology: None,
    })
}

fn is(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS IS runs on a power-of-two number of ranks, not {n}"));
    }
    let total_keys: u64 = match class {
        NasClass::S => 1 << 16,
        NasClass::W => 1 << 20,
        NasClass::A => 1 << 23,
        NasClass::B => 1 << 25,
        NasClass::C => 1 << 27,
    };
    if n > 1024 {
        return Err(format!("NAS IS runs on at most 1024 ranks (its buckets), not {n}"));
    }
    let estimate = check_calls(n, 4, iterations, 16)?;
    let keys = 4 * total_keys / n as u64;
    let work = WORLD;
    let programs = (0..n)
        .map(|me| {
            let mut prog = Program::default();
            let rank = |prog: &mut Program| {
                prog.compute(keys / 4);
                prog.collective(CollectiveOp::Allreduce, work, 4 * (1024 + 5));
                prog.collective(CollectiveOp::Alltoall, work, 4 * n as u64);
                prog.collective(CollectiveOp::Alltoallv, work, keys);
                prog.compute(keys / 4);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, work, 4);
            prog.compute(keys);
            rank(&mut prog);
            for _ in 0..iterations {
                rank(&mut prog);
            }
            prog.collective(CollectiveOp::Reduce, work, 8);
            // full_verify: the largest key goes to the next rank.
            let r = (me > 0).then(|| prog.irecv(me - 1, 1000, work, 4));
            if me + 1 < n {
                prog.send(me + 1, 1000, work, 4);
            }
            if r.is_some() {
                prog.wait(r);
            }
            prog.collective(CollectiveOp::Reduce, work, 4);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("line:{n}")).expect("a valid line")),
    })
}

fn ep(n: u32) -> Result<Job, String> {
    let estimate = check_calls(n, 0, 0, 10)?;
    let programs = (0..n)
        .map(|_| {
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            prog.compute(1_000_000);
            for bytes in [8, 8, 80, 8] {
                prog.collective(CollectiveOp::Allreduce, WORLD, bytes);
            }
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Running the programs under the clock model.

/// Counts the simulation gathers while writing the trace.
struct Stats {
    messages: u64,
    bytes: u64,
}

/// A request of one process.
#[derive(Debug, Clone, Copy)]
enum Request {
    /// Not posted yet, or already completed.
    Idle,
    /// A send: its operation index on the rank.
    Send(usize),
    /// A receive: message key, its sequence number on the key, its operation index.
    Recv(MsgKey, u32, usize),
}

/// Sender, receiver (NAS processes), tag, communicator index.
type MsgKey = (u32, u32, i32, u32);

/// Where a blocked process stands in its current step.
#[derive(Debug, Clone, Copy)]
enum Blocked {
    /// A blocking receive waiting for message `seq` on its key.
    Recv(u32),
    /// A collective (or `MPI_Finalize`): its instance on the communicator and the entry time.
    Collective(u32, Time),
}

struct ProcState {
    pc: usize,
    now: Time,
    requests: Vec<Request>,
    blocked: Option<Blocked>,
    collectives_done: HashMap<u32, u32>,
}

/// A collective instance's arrivals.
#[derive(Default)]
struct Meeting {
    arrived: u32,
    last_entry: Time,
}

fn simulate(
    trace: &mut Trace,
    programs: &[Program],
    rank_of_process: &[Rank],
    comm_ids: &[u32],
    clock: Clock,
) -> Result<Stats, String> {
    let n = programs.len();
    let transfer = |bytes: u64| (bytes as f64 / clock.bandwidth).ceil() as Time;
    let o = clock.overhead_ns;
    let mut state: Vec<ProcState> = programs
        .iter()
        .map(|p| ProcState {
            pc: 0,
            now: 0,
            requests: vec![Request::Idle; p.requests as usize],
            blocked: None,
            collectives_done: HashMap::new(),
        })
        .collect();
    // Per message key: (send entry time, bytes) of every send so far, and receives posted.
    let mut sent: HashMap<MsgKey, Vec<(Time, u64)>> = HashMap::new();
    let mut posted: HashMap<MsgKey, u32> = HashMap::new();
    let mut meetings: HashMap<(u32, u32), Meeting> = HashMap::new();
    let mut stats = Stats { messages: 0, bytes: 0 };
    let rounds = (n as u64).next_power_of_two().trailing_zeros() as u64;
    let mut finished = 0usize;
    let mut forward = true;
    while finished < n {
        let mut progressed = false;
        let order: Vec<usize> = if forward {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        forward = !forward;
        for p in order {
            let prog = &programs[p];
            let r = rank_of_process[p];
            loop {
                let st = &mut state[p];
                let Some(step) = prog.steps.get(st.pc) else { break };
                match step {
                    Step::Compute(ns) => st.now += ns,
                    Step::Plain(f) => {
                        let t = st.now;
                        trace.push_call(r, f, t, t + o, NO_CALLPATH, 0);
                        st.now = t + o;
                    }
                    &Step::Post {
                        func,
                        dir,
                        peer,
                        tag,
                        comm,
                        bytes,
                        req,
                    } => {
                        let t = st.now;
                        let peer_rank = rank_of_process[peer as usize];
                        match dir {
                            P2pDir::Send => {
                                let key = (p as u32, peer, tag, comm);
                                sent.entry(key).or_default().push((t, bytes));
                                let exit = t + o + transfer(bytes);
                                let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                                let op = trace.ranks[r as usize].p2p.len();
                                let complete = if req.is_some() { NOT_COMPLETED } else { c };
                                trace.push_p2p(r, c, complete, dir, peer_rank, tag, comm_ids[comm as usize], bytes);
                                if let Some(q) = req {
                                    st.requests[q as usize] = Request::Send(op);
                                }
                                stats.messages += 1;
                                stats.bytes += bytes;
                                st.now = exit;
                            }
                            P2pDir::Recv => {
                                let key = (peer, p as u32, tag, comm);
                                if let Some(q) = req {
                                    let seq = posted.entry(key).or_insert(0);
                                    let c = trace.push_call(r, func, t, t + o, NO_CALLPATH, 0);
                                    let op = trace.ranks[r as usize].p2p.len();
                                    trace.push_p2p(
                                        r,
                                        c,
                                        NOT_COMPLETED,
                                        dir,
                                        peer_rank,
                                        tag,
                                        comm_ids[comm as usize],
                                        bytes,
                                    );
                                    st.requests[q as usize] = Request::Recv(key, *seq, op);
                                    *seq += 1;
                                    st.now = t + o;
                                } else {
                                    let seq = match st.blocked {
                                        Some(Blocked::Recv(s)) => s,
                                        _ => {
                                            let s = posted.entry(key).or_insert(0);
                                            *s += 1;
                                            *s - 1
                                        }
                                    };
                                    let Some(&(sent_at, actual)) = sent.get(&key).and_then(|v| v.get(seq as usize))
                                    else {
                                        st.blocked = Some(Blocked::Recv(seq));
                                        break;
                                    };
                                    st.blocked = None;
                                    let exit = (sent_at + clock.latency_ns + transfer(actual)).max(t) + o;
                                    let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                                    trace.push_p2p(r, c, c, dir, peer_rank, tag, comm_ids[comm as usize], actual);
                                    st.now = exit;
                                }
                            }
                        }
                    }
                    Step::Wait { func, reqs } => {
                        let t = st.now;
                        let mut ready = t;
                        let mut all_there = true;
                        for &q in reqs {
                            if let Request::Recv(key, seq, _) = st.requests[q as usize] {
                                match sent.get(&key).and_then(|v| v.get(seq as usize)) {
                                    Some(&(sent_at, actual)) => {
                                        ready = ready.max(sent_at + clock.latency_ns + transfer(actual));
                                    }
                                    None => all_there = false,
                                }
                            }
                        }
                        if !all_there {
                            break;
                        }
                        let exit = ready + o;
                        let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                        let rt = &mut trace.ranks[r as usize];
                        for &q in reqs {
                            match st.requests[q as usize] {
                                Request::Send(op) => rt.p2p.complete[op] = c,
                                Request::Recv(key, seq, op) => {
                                    rt.p2p.complete[op] = c;
                                    rt.p2p.bytes[op] = sent[&key][seq as usize].1;
                                }
                                Request::Idle => {}
                            }
                            st.requests[q as usize] = Request::Idle;
                        }
                        st.now = exit;
                    }
                    step @ (Step::Collective { .. } | Step::Finalize) => {
                        let (comm, bytes) = match step {
                            Step::Collective { comm, bytes, .. } => (*comm, *bytes),
                            _ => (WORLD, 0),
                        };
                        let (instance, entry) = match st.blocked {
                            Some(Blocked::Collective(i, e)) => (i, e),
                            _ => {
                                let done = st.collectives_done.entry(comm).or_insert(0);
                                let i = *done;
                                *done += 1;
                                let m = meetings.entry((comm, i)).or_default();
                                m.arrived += 1;
                                m.last_entry = m.last_entry.max(st.now);
                                (i, st.now)
                            }
                        };
                        let m = &meetings[&(comm, instance)];
                        if (m.arrived as usize) < n {
                            st.blocked = Some(Blocked::Collective(instance, entry));
                            break;
                        }
                        st.blocked = None;
                        let exit = match step {
                            Step::Finalize => m.last_entry + o,
                            _ => m.last_entry + o + rounds * (clock.latency_ns + transfer(bytes)),
                        };
                        match *step {
                            Step::Collective { op, root, .. } => {
                                let c = trace.push_call(r, op.mpi_name(), entry, exit, NO_CALLPATH, 0);
                                let root_rank = root.map_or(NO_ROOT, |x| rank_of_process[x as usize]);
                                let (s, v) = match op {
                                    CollectiveOp::Barrier => (0, 0),
                                    CollectiveOp::Bcast if root_rank == r => (bytes, 0),
                                    CollectiveOp::Bcast => (0, bytes),
                                    CollectiveOp::Reduce if root_rank == r => (bytes, bytes),
                                    CollectiveOp::Reduce => (bytes, 0),
                                    _ => (bytes, bytes),
                                };
                                trace.push_collective(r, c, op, comm_ids[comm as usize], root_rank, s, v);
                            }
                            _ => {
                                trace.push_call(r, "MPI_Finalize", entry, exit, NO_CALLPATH, 0);
                            }
                        }
                        st.now = exit;
                    }
                }
                let st = &mut state[p];
                st.pc += 1;
                progressed = true;
                if st.pc == prog.steps.len() {
                    finished += 1;
                }
            }
        }
        if !progressed && finished < n {
            let stuck: Vec<String> = (0..n)
                .filter(|&p| state[p].pc < programs[p].steps.len())
                .take(4)
                .map(|p| {
                    format!(
                        "process {p} at step {} ({:?})",
                        state[p].pc, programs[p].steps[state[p].pc]
                    )
                })
                .collect();
            return Err(format!("internal error: the skeleton deadlocks: {}", stuck.join("; ")));
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::match_messages;

    fn run(b: NasBenchmark, class: NasClass, n: u32, iterations: u32) -> (Trace, NasTruth) {
        let spec = NasSpec {
            iterations: Some(iterations),
            ..NasSpec::new(b, class, n)
        };
        generate_nas(&spec).unwrap_or_else(|e| panic!("{b} {class} {n}: {e}"))
    }

    #[test]
    fn every_message_is_received_at_every_size() {
        for (b, class, sizes) in [
            (NasBenchmark::Bt, NasClass::S, &[1u32, 4, 9][..]),
            (NasBenchmark::Sp, NasClass::A, &[4, 16, 64][..]),
            (NasBenchmark::Lu, NasClass::A, &[2, 8, 32][..]),
            (NasBenchmark::Mg, NasClass::S, &[2, 4, 8, 32, 128][..]),
            (NasBenchmark::Cg, NasClass::S, &[1, 2, 8, 16, 128][..]),
            (NasBenchmark::Ft, NasClass::S, &[1, 4, 32][..]),
            (NasBenchmark::Is, NasClass::S, &[1, 4, 32][..]),
            (NasBenchmark::Ep, NasClass::S, &[1, 4, 32, 100][..]),
        ] {
            for &n in sizes {
                let (trace, truth) = run(b, class, n, 2);
                let m = match_messages(&trace);
                assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0), "{b} {n}");
                assert_eq!(m.messages.len() as u64, truth.messages, "{b} {n}");
                for msg in &m.messages {
                    let (s, r) = (&trace.ranks[msg.sender as usize], &trace.ranks[msg.receiver as usize]);
                    let sent = s.calls.enter[s.p2p.post[msg.send_op as usize] as usize];
                    let done = r.p2p.complete[msg.recv_op as usize];
                    assert_ne!(done, NOT_COMPLETED, "{b} {n}: a receive never completes");
                    assert!(r.calls.exit[done as usize] > sent, "{b} {n}: received before sent");
                    assert_eq!(s.p2p.bytes[msg.send_op as usize], r.p2p.bytes[msg.recv_op as usize]);
                }
            }
        }
    }

    #[test]
    fn grids_follow_the_sources() {
        assert_eq!(lu_grid(8), (4, 2));
        assert_eq!(lu_grid(32), (8, 4));
        assert_eq!(lu_grid(128), (16, 8));
        assert_eq!(mg_grid(8), [2, 2, 2]);
        assert_eq!(mg_grid(32), [2, 4, 4]);
        assert_eq!(mg_grid(128), [4, 4, 8]);
        assert_eq!(cg_grid(8), (2, 4));
        assert_eq!(cg_grid(16), (4, 4));
    }

    #[test]
    fn mg_coarse_levels_reach_farther_processes() {
        // 32 ranks class S: level 1 has 2 points along axes of 4 processes, so half the
        // processes hold none there and the others exchange with processes 2 apart.
        assert_eq!(mg_grid(32), [2, 4, 4]);
        // Process 11 = (1, 1, 1) holds a point of level 1 on every axis; along axis 2 its
        // level-1 neighbours are (1, 3, 1) = 15 on both sides, its finest-level ones 9 and 13.
        let lv = mg_setup(11, 32, 5, 32);
        assert!(!lv.dead[0]);
        assert_eq!(lv.nbr[0][1], [15, 15]);
        assert_eq!(lv.nbr[4][1], [9, 13]);
        // Process 1 = (1, 0, 0) holds none there: it skips level 1 and takes the coarse values
        // back when level 2 is interpolated.
        let dead = mg_setup(1, 32, 5, 32);
        assert!(dead.dead[0] && !dead.dead[1]);
        assert!(dead.take_ex[1][1] && lv.give_ex[1][1]);
    }

    #[test]
    fn bad_sizes_say_why() {
        let e = generate_nas(&NasSpec::new(NasBenchmark::Bt, NasClass::S, 8)).unwrap_err();
        assert!(e.contains("square"), "{e}");
        let e = generate_nas(&NasSpec::new(NasBenchmark::Lu, NasClass::S, 64)).unwrap_err();
        assert!(e.contains("too small"), "{e}");
        let e = generate_nas(&NasSpec::new(NasBenchmark::Mg, NasClass::S, 12)).unwrap_err();
        assert!(e.contains("power-of-two"), "{e}");
        let e = generate_nas(&NasSpec {
            iterations: Some(1_000_000),
            ..NasSpec::new(NasBenchmark::Lu, NasClass::C, 128)
        })
        .unwrap_err();
        assert!(e.contains("--iterations"), "{e}");
        assert!("dt"
            .parse::<NasBenchmark>()
            .unwrap_err()
            .contains("unknown NAS benchmark"));
        let mut slow = NasSpec::new(NasBenchmark::Mg, NasClass::S, 8);
        slow.clock.latency_ns = u64::MAX;
        assert!(generate_nas(&slow).unwrap_err().contains("2^62"));
        slow.clock = Clock {
            bandwidth: f64::MIN_POSITIVE,
            ..Clock::default()
        };
        assert!(generate_nas(&slow).unwrap_err().contains("2^62"));
        for ranks in [0, u32::MAX] {
            let e = generate_nas(&NasSpec::new(NasBenchmark::Ep, NasClass::S, ranks)).unwrap_err();
            assert!(e.contains("ranks must be"), "{e}");
        }
    }

    #[test]
    fn numbering_permutes_processes_onto_ranks() {
        let spec = NasSpec {
            iterations: Some(1),
            numbering: Numbering::Random,
            seed: 5,
            ..NasSpec::new(NasBenchmark::Lu, NasClass::S, 8)
        };
        let (trace, truth) = generate_nas(&spec).unwrap();
        let (plain, _) = run(NasBenchmark::Lu, NasClass::S, 8, 1);
        assert!(truth.node_of_rank.iter().enumerate().any(|(r, &u)| r as u32 != u));
        for (r, &u) in truth.node_of_rank.iter().enumerate() {
            let a = &trace.ranks[r].p2p;
            let b = &plain.ranks[u as usize].p2p;
            assert_eq!(a.len(), b.len());
            for i in 0..a.len() {
                assert_eq!(truth.node_of_rank[a.peer[i] as usize], b.peer[i]);
                assert_eq!(a.bytes[i], b.bytes[i]);
            }
        }
    }
}
