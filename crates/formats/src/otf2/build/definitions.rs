//! What the global definitions give every part: the clock, the regions, world ranks from the MPI
//! location groups, the communicators of the definitions (intra- and inter-communicators),
//! Cartesian topologies and the archive's facts.

use super::*;

/// OTF2 `CollectiveOp` enum → model collective (handles and windows become `Other`).
pub(super) fn collective_from_enum(op: u8) -> CollectiveOp {
    use CollectiveOp::*;
    match op {
        0 => Barrier,
        1 => Bcast,
        2 => Gather,
        3 => Gatherv,
        4 => Scatter,
        5 => Scatterv,
        6 => Allgather,
        7 => Allgatherv,
        8 => Alltoall,
        9 => Alltoallv,
        10 => Alltoallw,
        11 => Allreduce,
        12 => Reduce,
        13 => ReduceScatter,
        14 => Scan,
        15 => Exscan,
        16 => ReduceScatterBlock,
        _ => Other,
    }
}

/// Model collective → OTF2 `CollectiveOp` enum (used by the writer).
pub(crate) fn collective_to_enum(op: CollectiveOp) -> u8 {
    (0..=16).find(|&e| collective_from_enum(e) == op).unwrap_or(0)
}

/// How an OTF2 communicator maps to model communicators.
#[derive(Debug, Clone, Copy)]
pub(super) enum CommMapping {
    /// One model communicator for every rank.
    Fixed(CommId),
    /// `MPI_COMM_SELF`-like: a one-member communicator per rank.
    PerRank,
    /// An inter-communicator: one model communicator over both groups; a peer is a rank of
    /// the group the caller is not in.
    Inter { id: CommId, a: usize, b: usize },
}

/// Ticks → nanoseconds since the trace start.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) offset: u64,
    pub(super) resolution: u64,
}

impl Clock {
    #[inline(always)]
    pub(super) fn ns(self, t: u64) -> Time {
        let d = t.saturating_sub(self.offset);
        if self.resolution == 1_000_000_000 {
            return d;
        }
        ((d as u128 * 1_000_000_000 + self.resolution as u128 / 2) / self.resolution as u128) as Time
    }
}

/// World rank of each location group: its position in the MPI COMM_LOCATIONS group, or else
/// the order of process location groups.
pub(super) fn world_ranks(defs: &GlobalDefs, file: &str) -> Result<(HashMap<u32, Rank>, u32), FormatError> {
    let mut ranks = HashMap::new();
    let mpi_locations = defs
        .groups
        .items
        .iter()
        .find(|g| g.kind == GROUP_COMM_LOCATIONS && g.paradigm == PARADIGM_MPI);
    if let Some(g) = mpi_locations {
        for (rank, &loc_id) in g.members.iter().enumerate() {
            let loc = defs.locations.get(loc_id).ok_or_else(|| {
                FormatError::at_offset(
                    file,
                    g.offset,
                    format!("MPI location group lists undefined location {loc_id}"),
                )
            })?;
            ranks.entry(loc.group).or_insert(rank as Rank);
        }
        return Ok((ranks, g.members.len() as u32));
    }
    let processes: Vec<u32> = defs
        .location_groups
        .items
        .iter()
        .filter(|g| g.kind == LOCATION_GROUP_PROCESS)
        .map(|g| g.id)
        .collect();
    let groups = if processes.is_empty() {
        defs.location_groups.items.iter().map(|g| g.id).collect()
    } else {
        processes
    };
    for (rank, g) in groups.iter().enumerate() {
        ranks.insert(*g, rank as Rank);
    }
    Ok((ranks, groups.len() as u32))
}

pub(super) fn add_meta(archive: &Archive, trace: &mut Trace) {
    let a = &archive.anchor;
    let c = &archive.defs.clock;
    let meta = &mut trace.meta;
    meta.push((
        "otf2 version".into(),
        format!("{}.{}.{}", a.version.0, a.version.1, a.version.2),
    ));
    for (k, v) in [
        ("creator", &a.creator),
        ("machine", &a.machine_name),
        ("description", &a.description),
    ] {
        if !v.is_empty() {
            meta.push((k.into(), v.clone()));
        }
    }
    meta.push(("timer resolution (ticks/s)".into(), c.timer_resolution.to_string()));
    meta.push(("global offset (ticks)".into(), c.global_offset.to_string()));
    meta.push(("trace length (ticks)".into(), c.trace_length.to_string()));
    if let Some(rt) = c.realtime_timestamp {
        meta.push(("realtime timestamp (ns since epoch)".into(), rt.to_string()));
    }
    meta.push(("locations".into(), archive.defs.locations.len().to_string()));
    meta.push(("trace id".into(), format!("{:016x}", a.trace_id)));
    for (k, v) in &a.properties {
        meta.push((k.clone(), v.clone()));
    }
}

impl<'a> Shared<'a> {
    /// The definitions' facts every part reads: regions, communicators, the clock.
    pub(super) fn new(
        archive: &'a Archive<'a>,
        general_only: bool,
        nranks: u32,
        defs_name: &str,
    ) -> Result<Shared<'a>, FormatError> {
        let defs = &archive.defs;
        let regions = defs
            .regions
            .items
            .iter()
            .map(|r| {
                let name = defs.string(r.name);
                let mpi = is_mpi_region(name, r.paradigm);
                RegionInfo {
                    mpi,
                    name: if mpi { mpi_function_name(name) } else { name }.to_owned(),
                }
            })
            .collect();
        let mut region_by_id = Vec::new();
        let max_id = defs.regions.items.iter().map(|r| r.id as usize).max().unwrap_or(0);
        if max_id < 4 * defs.regions.items.len() + 1024 {
            region_by_id = vec![u32::MAX; max_id + 1];
            for (pos, r) in defs.regions.items.iter().enumerate() {
                region_by_id[r.id as usize] = pos as u32;
            }
        }
        let mut base_comms = CommTable::default();
        base_comms.add(("MPI_COMM_WORLD".into(), (0..nranks).collect()));
        let mut shared = Shared {
            archive,
            defs,
            clock: Clock {
                offset: defs.clock.global_offset,
                resolution: defs.clock.timer_resolution,
            },
            comms: FastMap::default(),
            inter_groups: Vec::new(),
            base_comms,
            regions,
            region_by_id,
            nranks,
            general_only,
            score_p_bytes: collective_bytes::counts_as_score_p(&archive.anchor.creator),
        };
        shared.define_comms(defs_name, nranks)?;
        Ok(shared)
    }

    /// Communicators with world-rank members; the one over all ranks in order becomes
    /// `MPI_COMM_WORLD` (id 0), other MPI communicators follow in definition order.
    pub(super) fn define_comms(&mut self, file: &str, nranks: u32) -> Result<(), FormatError> {
        let defs = self.defs;
        let mut world_found = false;
        for cm in &defs.comms.items {
            let g = defs.groups.get(cm.group).expect("validated by GlobalDefs::parse");
            if g.kind == GROUP_COMM_SELF {
                self.comms.insert(cm.id, CommMapping::PerRank);
                continue;
            }
            if g.kind != GROUP_COMM_GROUP {
                continue;
            }
            let mut members = Vec::with_capacity(g.members.len());
            for &m in &g.members {
                if m >= nranks as u64 {
                    return Err(FormatError::at_offset(
                        file,
                        g.offset,
                        format!(
                            "group {} of communicator {} lists rank {m}, but there are {nranks} ranks",
                            g.id, cm.id
                        ),
                    ));
                }
                members.push(m as Rank);
            }
            let is_world = members.len() == nranks as usize && members.iter().enumerate().all(|(i, &m)| i as Rank == m);
            if !world_found && is_world && cm.parent == UNDEFINED_U32 && g.paradigm == PARADIGM_MPI {
                world_found = true;
                self.comms.insert(cm.id, CommMapping::Fixed(COMM_WORLD));
                continue;
            }
            if g.paradigm != PARADIGM_MPI && g.paradigm != 0 {
                continue; // e.g. Score-P's "Process x Threads" measurement communicator
            }
            let id = self.base_comms.add((self.comm_name(cm.id), members));
            self.comms.insert(cm.id, CommMapping::Fixed(id));
        }
        for ic in &defs.inter_comms.items {
            let mut sides = Vec::with_capacity(2);
            for gid in [ic.group_a, ic.group_b] {
                let g = defs.groups.get(gid).expect("validated by GlobalDefs::parse");
                let members: Option<Vec<Rank>> = g
                    .members
                    .iter()
                    .map(|&m| (m < nranks as u64).then_some(m as Rank))
                    .collect();
                let Some(members) = members else {
                    return Err(FormatError::at_offset(
                        file,
                        g.offset,
                        format!(
                            "group {gid} of inter-communicator {} lists a rank outside 0..{nranks}",
                            ic.id
                        ),
                    ));
                };
                sides.push(members);
            }
            let mut all = sides[0].clone();
            all.extend(sides[1].iter().filter(|m| !sides[0].contains(m)));
            let name = match defs.string(ic.name) {
                "" => format!("intercomm {}", ic.id),
                n => n.to_owned(),
            };
            let id = self.base_comms.add((name, all));
            let a = self.inter_groups.len();
            self.inter_groups.extend(sides);
            self.comms.insert(ic.id, CommMapping::Inter { id, a, b: a + 1 });
        }
        Ok(())
    }

    pub(super) fn comm_name(&self, id: u32) -> String {
        let cm = self.defs.comms.get(id).expect("caller checked");
        match self.defs.string(cm.name) {
            "" => format!("comm {id}"),
            n => n.to_owned(),
        }
    }
}

/// The Cartesian topologies of the definitions (`CartTopology` with its `CartDimension`s, and
/// `CartCoordinate`s when every member has one; otherwise MPI's row-major rule) on the
/// communicators of the trace; a definition that does not fit becomes a warning.
pub(super) fn add_cartesian(defs: &GlobalDefs, shared: &Shared, trace: &mut Trace) {
    for (id, comm, dim_ids) in &defs.cart_topologies {
        let fail = |trace: &mut Trace, why: String| {
            trace.warnings.push(format!(
                "Cartesian topology {id}: {why}; the declared topology is left out"
            ))
        };
        let Some(&CommMapping::Fixed(c)) = shared.comms.get(comm) else {
            fail(
                trace,
                format!("communicator {comm} is not an MPI communicator of the trace"),
            );
            continue;
        };
        let mut dims = Vec::with_capacity(dim_ids.len());
        let mut periods = Vec::with_capacity(dim_ids.len());
        for d in dim_ids {
            match defs.cart_dimensions.iter().find(|x| x.0 == *d) {
                Some(&(_, size, periodic)) => {
                    dims.push(size as i64);
                    periods.push(periodic);
                }
                None => {
                    dims.clear();
                    break;
                }
            }
        }
        let members = trace.comms.get(c as usize).map_or(0, |m| m.members.len());
        let mut t = match CartTopology::row_major(c, &dims, &periods, members) {
            Ok(t) => t,
            Err(e) => {
                fail(trace, e);
                continue;
            }
        };
        let mut recorded: Vec<Option<&Vec<u32>>> = vec![None; members];
        for (topo, rank, coords) in &defs.cart_coordinates {
            if topo == id {
                if let Some(slot) = recorded.get_mut(*rank as usize) {
                    *slot = Some(coords);
                }
            }
        }
        if members > 0 && recorded.iter().all(Option::is_some) {
            t.coords = recorded.into_iter().map(|c| c.expect("checked").clone()).collect();
            t.coords_recorded = true;
        }
        if let Err(e) = trace.add_cartesian(t) {
            fail(trace, e);
        }
    }
}
