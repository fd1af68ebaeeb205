//! Communicator translation for events: the definitions' communicators, `MPI_COMM_SELF` per
//! rank, communicators met only in events, inter-communicators' remote groups, and
//! communicator-local ranks to world ranks (through the shared builder's
//! [`CommTable`](tracelogic_model::build::CommTable)).

use super::*;

impl Builder<'_, '_> {
    /// Model communicator of OTF2 communicator `comm` as seen by `rank`, and for an
    /// inter-communicator the remote group (index into `inter_groups`) its peers belong to.
    #[inline(always)]
    pub(super) fn comm(
        &mut self,
        comm: u32,
        rank: Rank,
        file: &str,
        offset: u64,
    ) -> Result<(CommId, Option<usize>), FormatError> {
        if let Some((c, r, found)) = self.last_comm {
            if c == comm && r == rank {
                return Ok(found);
            }
        }
        let found = self.resolve_comm(comm, rank, file, offset)?;
        self.last_comm = Some((comm, rank, found));
        Ok(found)
    }

    /// [`Builder::comm`] without the cache.
    pub(super) fn resolve_comm(
        &mut self,
        comm: u32,
        rank: Rank,
        file: &str,
        offset: u64,
    ) -> Result<(CommId, Option<usize>), FormatError> {
        if let Some(&CommMapping::Inter { id, a, b }) = self.shared.comms.get(&comm) {
            let remote = if self.shared.inter_groups[a].contains(&rank) {
                b
            } else {
                a
            };
            return Ok((id, Some(remote)));
        }
        self.intra_comm(comm, rank, file, offset).map(|id| (id, None))
    }

    pub(super) fn intra_comm(&mut self, comm: u32, rank: Rank, file: &str, offset: u64) -> Result<CommId, FormatError> {
        match self.shared.comms.get(&comm) {
            Some(CommMapping::Fixed(id)) => Ok(*id),
            Some(CommMapping::Inter { id, .. }) => Ok(*id),
            Some(CommMapping::PerRank) => match self.self_comms.get(&rank) {
                Some(&id) => Ok(id),
                None => {
                    let id = self.add_comm("MPI_COMM_SELF", vec![rank]);
                    self.self_comms.insert(rank, id);
                    Ok(id)
                }
            },
            None => {
                if let Some(&id) = self.lazy_comms.get(&comm) {
                    return Ok(id);
                }
                // Defined but not an MPI communicator group (or not defined at all).
                let defs = self.shared.defs;
                let Some(cm) = defs.comms.get(comm) else {
                    return Err(FormatError::at_offset(
                        file,
                        offset,
                        format!("event refers to undefined communicator {comm}"),
                    ));
                };
                let g = defs.groups.get(cm.group).expect("validated by GlobalDefs::parse");
                let n = self.shared.nranks as u64;
                let members: Vec<Rank> = g.members.iter().filter(|&&m| m < n).map(|&m| m as Rank).collect();
                let id = self.add_comm(&self.shared.comm_name(comm), members);
                self.lazy_comms.insert(comm, id);
                Ok(id)
            }
        }
    }

    /// World rank of communicator rank `local` in `comm` (in the remote group for an
    /// inter-communicator).
    #[inline]
    pub(super) fn world(
        &self,
        (comm, remote): (CommId, Option<usize>),
        local: u32,
        what: &str,
        file: &str,
        offset: u64,
    ) -> Result<Rank, FormatError> {
        if local == UNDEFINED_U32 {
            return Ok(ANY_SOURCE);
        }
        // MPI_COMM_WORLD's members are the world ranks in order.
        if comm == COMM_WORLD && remote.is_none() && local < self.shared.nranks {
            return Ok(local);
        }
        let c = self.communicator(comm);
        let found = match remote {
            Some(g) => self.shared.inter_groups[g].get(local as usize).copied(),
            None => c.world_rank(local),
        };
        found.ok_or_else(|| not_a_member(c, local, what, file, offset))
    }

    /// The communicator behind a model id (the definitions' or one this part created).
    pub(super) fn communicator(&self, id: CommId) -> &Communicator {
        let base = &self.shared.base_comms.comms;
        match base.get(id as usize) {
            Some(c) => c,
            None => &self.part.comms.comms[id as usize - base.len()],
        }
    }

    /// Add a communicator met in events (or find it among the definitions' and the part's).
    pub(super) fn add_comm(&mut self, name: &str, members: Vec<Rank>) -> CommId {
        let key = (name.to_owned(), members);
        if let Some(id) = self.shared.base_comms.find(&key) {
            return id;
        }
        let known = self.part.comms.comms.len();
        let id = self.part.comms.add(key);
        if self.part.comms.comms.len() > known {
            self.part.first_use.comms.push(self.at_location);
        }
        id
    }
}

/// The error of a peer or root that is not a rank of its communicator.
#[cold]
pub(super) fn not_a_member(c: &Communicator, local: u32, what: &str, file: &str, offset: u64) -> FormatError {
    FormatError::at_offset(
        file,
        offset,
        format!(
            "{what} {local} is not a rank of communicator '{}' ({} members)",
            c.name,
            c.members.len()
        ),
    )
}
