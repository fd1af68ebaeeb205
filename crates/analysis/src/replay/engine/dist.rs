//! The exchange of a replay by parts: what this process's engine sends to and expects from the
//! engines of the other processes.

use super::*;

/// A replay by parts (`tracelogic-mpi replay`, [`super::parts`]): what this process's engine
/// needs to exchange with the engines of the other processes.
pub(crate) struct Dist {
    /// Every process's ranks, in process order.
    pub(crate) blocks: Vec<Range<Rank>>,
    /// Notes for each process, since the last [`Engine::take_outbox`].
    pub(crate) outbox: Vec<Vec<Note>>,
    /// Sends of other processes' ranks to this one's: (sender, send op) → pooled injection
    /// start and the send's bytes.
    pub(crate) remote_sends: HashMap<(Rank, u32), (u32, u64)>,
    /// Per communicator: its members (sorted), how many of them are this process's, and the
    /// other processes holding members.
    pub(crate) members: Vec<Vec<Rank>>,
    pub(crate) local_members: Vec<u32>,
    pub(crate) other_processes: Vec<Vec<u32>>,
    /// Why the parts cannot reproduce the serial replay, if they cannot (the serial replay
    /// decides it by the order it visits the ranks in).
    pub(crate) unreproducible: Option<String>,
}

impl Dist {
    pub(crate) fn new(trace: &Trace, owned: &Range<Rank>, blocks: &[Range<Rank>]) -> Dist {
        let n = trace.ranks.len() as Rank;
        let process = |r: Rank| {
            blocks
                .partition_point(|b| b.end <= r)
                .min(blocks.len().saturating_sub(1)) as u32
        };
        let me = process(owned.start);
        let mut members = Vec::with_capacity(trace.comms.len());
        let mut local_members = Vec::with_capacity(trace.comms.len());
        let mut other_processes = Vec::with_capacity(trace.comms.len());
        for c in &trace.comms {
            let mut m: Vec<Rank> = c.members.iter().copied().filter(|&m| m < n).collect();
            m.sort_unstable();
            m.dedup();
            local_members.push(m.iter().filter(|r| owned.contains(r)).count() as u32);
            let mut procs: Vec<u32> = m.iter().map(|&r| process(r)).filter(|&p| p != me).collect();
            procs.dedup();
            other_processes.push(procs);
            members.push(m);
        }
        Dist {
            blocks: blocks.to_vec(),
            outbox: vec![Vec::new(); blocks.len()],
            remote_sends: HashMap::new(),
            members,
            local_members,
            other_processes,
            unreproducible: None,
        }
    }

    pub(crate) fn process_of(&self, r: Rank) -> usize {
        self.blocks
            .partition_point(|b| b.end <= r)
            .min(self.blocks.len().saturating_sub(1))
    }

    pub(crate) fn unreproducible(&mut self, why: impl FnOnce() -> String) {
        if self.unreproducible.is_none() {
            self.unreproducible = Some(why());
        }
    }
}
