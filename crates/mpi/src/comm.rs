//! The MPI communication the analyses by parts use: gathers, all-to-alls, broadcasts and sums
//! of byte buffers over the world communicator, and the readers' exchange on it.

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::ops::Range;
use tracelogic_formats::distributed::Exchange;

/// The processes of `MPI_COMM_WORLD` as the distributed reader's [`Exchange`].
pub(crate) struct World<'a>(pub(crate) &'a SimpleCommunicator);

impl Exchange for World<'_> {
    fn process(&self) -> (usize, usize) {
        (self.0.rank() as usize, self.0.size() as usize)
    }

    fn all_gather(&mut self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.0.size() as usize;
        let mut counts = vec![0 as Count; n];
        self.0.all_gather_into(&count(mine.len()), &mut counts[..]);
        let displs = displacements(&counts);
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.0.all_gather_varcount_into(mine, &mut into);
        }
        split(&all, &counts, &displs)
    }
}

/// A message length as MPI counts it (messages above 2 GiB are not supported).
pub(crate) fn count(len: usize) -> Count {
    Count::try_from(len).expect("a part of at most 2 GiB")
}

pub(crate) fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let here = *at;
            *at += c;
            Some(here)
        })
        .collect()
}

pub(crate) fn split(all: &[u8], counts: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
        .collect()
}

/// Every process's `mine` on rank 0 (`Some` there, `None` elsewhere).
pub(crate) fn gather_to_root(world: &SimpleCommunicator, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        let n = world.size() as usize;
        let mut counts = vec![0 as Count; n];
        root.gather_into_root(&count(mine.len()), &mut counts[..]);
        let displs = displacements(&counts);
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut into);
        }
        Some(split(&all, &counts, &displs))
    } else {
        root.gather_into(&count(mine.len()));
        root.gather_varcount_into(mine);
        None
    }
}

/// What the processes sent this one in an all-to-all, in process order, in one buffer.
pub(crate) struct Received {
    pub(crate) all: Vec<u8>,
    pub(crate) ranges: Vec<Range<usize>>,
}

impl Received {
    pub(crate) fn parts(&self) -> Vec<&[u8]> {
        self.ranges.iter().map(|r| &self.all[r.clone()]).collect()
    }
}

/// Every process's `mine[q]` sent to process `q`: what each process sent this one, in process
/// order (`MPI_Alltoall` of the counts, then `MPI_Alltoallv`; alone, nothing is sent).
pub(crate) fn all_to_all(world: &SimpleCommunicator, mine: Vec<Vec<u8>>) -> Received {
    let n = world.size() as usize;
    assert_eq!(mine.len(), n, "one buffer per process");
    if n == 1 {
        let all = mine.into_iter().next().expect("one buffer");
        let whole = 0..all.len();
        return Received {
            ranges: vec![whole],
            all,
        };
    }
    let send_counts: Vec<Count> = mine.iter().map(|b| count(b.len())).collect();
    let mut recv_counts = vec![0 as Count; n];
    world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
    let send_displs = displacements(&send_counts);
    let recv_displs = displacements(&recv_counts);
    // Never an empty buffer: MPI refuses the dangling pointer of an empty slice.
    let mut send: Vec<u8> = mine.concat();
    drop(mine);
    let received: usize = recv_counts.iter().map(|&c| c as usize).sum();
    let mut all = vec![0u8; received.max(1)];
    if send.is_empty() {
        send.push(0);
    }
    {
        let out = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
        let mut into = PartitionMut::new(&mut all[..], &recv_counts[..], &recv_displs[..]);
        world.all_to_all_varcount_into(&out, &mut into);
    }
    all.truncate(received);
    let ranges = recv_counts
        .iter()
        .zip(&recv_displs)
        .map(|(&c, &d)| d as usize..(d + c) as usize)
        .collect();
    Received { all, ranges }
}

/// The sum over every process of `mine`.
pub(crate) fn sum(world: &SimpleCommunicator, mine: u64) -> u64 {
    let mut total = 0u64;
    world.all_reduce_into(&mine, &mut total, mpi::collective::SystemOperation::sum());
    total
}

/// The bytes process `root` holds (`mine` there; ignored elsewhere), on every process: the
/// length first, then the bytes.
pub(crate) fn broadcast_bytes(world: &SimpleCommunicator, root: usize, mine: Vec<u8>) -> Vec<u8> {
    let process = world.process_at_rank(root as i32);
    let mut bytes = if world.rank() as usize == root {
        mine
    } else {
        Vec::new()
    };
    let mut len = bytes.len() as u64;
    process.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    process.broadcast_into(&mut bytes[..]);
    bytes
}
