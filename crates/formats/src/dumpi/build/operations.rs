//! Point-to-point, collective and user-function records of one rank: operations posted,
//! requests opened and completed (through the shared builder's
//! [`RequestTable`](tracelogic_model::build::RequestTable)), statuses, collective sizes, PAPI
//! counters.

use super::*;

/// Bytes of a collective, resolved once the communicator size and this rank's place are known.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum CollBytes {
    Plain {
        sent: u64,
        recv: u64,
        sent_per_member: bool,
        recv_per_member: bool,
    },
    ByRoot {
        root: (u64, u64),
        other: (u64, u64),
    },
    ReduceScatter {
        counts: Vec<i32>,
        size: u64,
    },
}

impl RankReader {
    /// Complete the operations of `requests` (`MPI_Waitall`, a successful `MPI_Testall`),
    /// using the statuses when there is one per request.
    pub(super) fn complete_all(&mut self, call: CallIdx, requests: &[i32], statuses: &[Status]) {
        let with_status = statuses.len() == requests.len();
        for (i, &req) in requests.iter().enumerate() {
            self.complete(req, call, if with_status { statuses.get(i) } else { None });
        }
    }

    /// The point-to-point calls of the fixed layout, whichever decoder read them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn p2p_call(
        &mut self,
        call: CallIdx,
        op: Op,
        recv_init: bool,
        a: P2pArgs,
        sizes: &[u64],
        status: Option<&Status>,
    ) {
        let bytes = (a.count.max(0) as u64).saturating_mul(sizes.get(a.datatype as usize).copied().unwrap_or(0));
        match op {
            Op::Send => {
                let c = self.comm(a.comm);
                self.post(call, call, P2pDir::Send, a.peer, a.tag, c, bytes);
            }
            Op::Isend => {
                let c = self.comm(a.comm);
                let o = self.post(call, NOT_COMPLETED, P2pDir::Send, a.peer, a.tag, c, bytes);
                self.track(a.request, o);
            }
            Op::Recv => {
                let c = self.comm(a.comm);
                let o = self.post(call, call, P2pDir::Recv, a.peer, a.tag, c, bytes);
                if let (Some(o), Some(s)) = (o, status) {
                    self.resolve_recv(o, s);
                }
            }
            Op::Irecv => {
                let c = self.comm(a.comm);
                let o = self.post(call, NOT_COMPLETED, P2pDir::Recv, a.peer, a.tag, c, bytes);
                self.track(a.request, o);
            }
            Op::PersistentInit => {
                let t = Template {
                    dir: if recv_init { P2pDir::Recv } else { P2pDir::Send },
                    peer: a.peer,
                    tag: a.tag,
                    comm: self.comm(a.comm),
                    bytes,
                };
                self.st.persistent.insert(a.request, t);
            }
            _ => unreachable!("only the fixed point-to-point layouts come here"),
        }
    }

    pub(super) fn collective(&mut self, call: CallIdx, op: CollectiveOp, rec: &Record, size: &dyn Fn(i64) -> u64) {
        let int = |n: &str| rec.int(n).unwrap_or(0);
        let b = |count: &str, dt: &str| (int(count).max(0) as u64).saturating_mul(size(int(dt)));
        let sum = |counts: &str, dt: &str| -> u64 {
            rec.ints(counts)
                .unwrap_or(&[])
                .iter()
                .map(|&c| c.max(0) as u64)
                .sum::<u64>()
                .saturating_mul(size(int(dt)))
        };
        let plain = |sent, recv| CollBytes::Plain {
            sent,
            recv,
            sent_per_member: false,
            recv_per_member: false,
        };
        let mut root = -1;
        let bytes = match op {
            CollectiveOp::Barrier => plain(0, 0),
            CollectiveOp::Bcast => {
                root = int("root") as i32;
                let n = b("count", "datatype");
                CollBytes::ByRoot {
                    root: (n, 0),
                    other: (0, n),
                }
            }
            CollectiveOp::Reduce => {
                root = int("root") as i32;
                let n = b("count", "datatype");
                CollBytes::ByRoot {
                    root: (n, n),
                    other: (n, 0),
                }
            }
            CollectiveOp::Allreduce | CollectiveOp::Scan | CollectiveOp::Exscan => {
                let n = b("count", "datatype");
                plain(n, n)
            }
            CollectiveOp::Gather => {
                root = int("root") as i32;
                CollBytes::Plain {
                    sent: b("sendcount", "sendtype"),
                    recv: b("recvcount", "recvtype"),
                    sent_per_member: false,
                    recv_per_member: true,
                }
            }
            CollectiveOp::Gatherv => {
                root = int("root") as i32;
                plain(b("sendcount", "sendtype"), sum("recvcounts", "recvtype"))
            }
            CollectiveOp::Scatter => {
                root = int("root") as i32;
                CollBytes::Plain {
                    sent: b("sendcount", "sendtype"),
                    recv: b("recvcount", "recvtype"),
                    sent_per_member: true,
                    recv_per_member: false,
                }
            }
            CollectiveOp::Scatterv => {
                root = int("root") as i32;
                plain(sum("sendcounts", "sendtype"), b("recvcount", "recvtype"))
            }
            CollectiveOp::Allgather => CollBytes::Plain {
                sent: b("sendcount", "sendtype"),
                recv: b("recvcount", "recvtype"),
                sent_per_member: false,
                recv_per_member: true,
            },
            CollectiveOp::Allgatherv => plain(b("sendcount", "sendtype"), sum("recvcounts", "recvtype")),
            CollectiveOp::Alltoall => CollBytes::Plain {
                sent: b("sendcount", "sendtype"),
                recv: b("recvcount", "recvtype"),
                sent_per_member: true,
                recv_per_member: true,
            },
            CollectiveOp::Alltoallv => plain(sum("sendcounts", "sendtype"), sum("recvcounts", "recvtype")),
            CollectiveOp::Alltoallw => {
                let w = |counts: &str, types: &str| -> u64 {
                    let c = rec.ints(counts).unwrap_or(&[]);
                    let t = rec.ints(types).unwrap_or(&[]);
                    c.iter().zip(t).fold(0u64, |acc, (&c, &t)| {
                        acc.saturating_add((c.max(0) as u64).saturating_mul(size(t as i64)))
                    })
                };
                plain(w("sendcounts", "sendtypes"), w("recvcounts", "recvtypes"))
            }
            CollectiveOp::ReduceScatter | CollectiveOp::ReduceScatterBlock => CollBytes::ReduceScatter {
                counts: rec.ints("recvcounts").unwrap_or(&[]).to_vec(),
                size: size(int("datatype")),
            },
            CollectiveOp::Other => plain(0, 0),
        };
        let comm = self.comm(rec.int("comm").unwrap_or(COMM_WORLD as i64) as u16);
        self.rt.push_collective(call, op, comm, NO_ROOT, 0, 0);
        self.st.unresolved.coll_fix.push((root, bytes));
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn post(
        &mut self,
        call: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: i32,
        tag: i32,
        comm: u32,
        bytes: u64,
    ) -> Option<usize> {
        if peer < 0 && !(dir == P2pDir::Recv && peer == DUMPI_ANY) {
            // MPI_PROC_NULL (stored as the MPI library's raw value): no message.
            return None;
        }
        let tag = if tag == DUMPI_ANY && dir == P2pDir::Recv {
            ANY_TAG
        } else {
            tag
        };
        let op = self.rt.p2p.len();
        let world = comm == 0 && ((peer as u32) < self.world || peer == DUMPI_ANY);
        self.st.unresolved.all_world &= world;
        self.rt.push_p2p(call, complete, dir, peer as u32, tag, comm, bytes);
        if peer == DUMPI_ANY {
            self.st.unresolved.wildcards.push(op);
        }
        Some(op)
    }

    #[inline(always)]
    pub(super) fn track(&mut self, request: i32, op: Option<usize>) {
        if let Some(op) = op {
            if let Some(open) = self.st.pending.insert(request, op) {
                self.st.shadowed.entry(request).or_default().push(open);
            }
        }
    }

    /// Close the newest operation open on `request`; the next newest (if the handle was shared)
    /// becomes the one its next completion closes.
    #[inline(always)]
    pub(super) fn close(&mut self, request: i32) -> Option<usize> {
        let op = self.st.pending.remove(request)?;
        if !self.st.shadowed.is_empty() {
            if let Some(stack) = self.st.shadowed.get_mut(&request) {
                if let Some(below) = stack.pop() {
                    self.st.pending.insert(request, below);
                }
                if stack.is_empty() {
                    self.st.shadowed.remove(&request);
                }
            }
        }
        Some(op)
    }

    pub(super) fn start(&mut self, call: CallIdx, request: i32) {
        let Some(t) = self.st.persistent.get(&request).copied() else {
            return;
        };
        let op = self.post(call, NOT_COMPLETED, t.dir, t.peer, t.tag, t.comm, t.bytes);
        self.track(request, op);
    }

    #[inline(always)]
    pub(super) fn complete(&mut self, request: i32, call: CallIdx, status: Option<&Status>) {
        let Some(op) = self.close(request) else {
            return;
        };
        self.rt.p2p.set_complete(op, call);
        if let Some(s) = status {
            if self.rt.p2p.dir[op] == P2pDir::Recv {
                self.resolve_recv(op, s);
            }
        }
    }

    /// Use a receive's status where it is plausible: the source for a wildcard receive, the tag
    /// for a wildcard tag, and the bytes actually received (at most the posted buffer).
    pub(super) fn resolve_recv(&mut self, op: usize, s: &Status) {
        if s.cancelled != 0 || s.source < 0 {
            return;
        }
        let p = &mut self.rt.p2p;
        if p.peer[op] as i32 == DUMPI_ANY {
            p.peer.set(op, s.source as u32);
            self.st.unresolved.all_world &= (s.source as u32) < self.world;
        } else if p.peer[op] as i32 != s.source {
            return;
        }
        if p.tag[op] == ANY_TAG && s.tag >= 0 {
            p.tag.set(op, s.tag);
        }
        if s.bytes >= 0 && (s.bytes as u64) <= p.bytes.at(op) {
            p.bytes.set(op, s.bytes as u64);
        }
    }

    pub(super) fn user_function(&mut self, rec: &Record, time: u64) {
        self.rt.extend_span(time, time);
        let addr = rec.int("fn").unwrap_or(0) as u64;
        let st = &mut self.st;
        if rec.call == FUNCTION_ENTER {
            if st.regions.len() >= MAX_CALLPATH_DEPTH {
                st.regions_overflow += 1;
                return;
            }
            let name = match self.function_names.get(&addr) {
                Some(n) => n.clone(),
                None => format!("0x{addr:x}"),
            };
            let region = self.regions.intern(&name);
            st.regions.push(region);
        } else if st.regions_overflow > 0 {
            st.regions_overflow -= 1;
            return;
        } else {
            st.regions.pop();
        }
        st.callpath = if st.regions.is_empty() {
            NO_CALLPATH
        } else if let Some(&id) = self.callpath_ids.get(&st.regions) {
            id
        } else if self.callpaths.len() < MAX_CALLPATHS {
            self.callpaths.push(st.regions.clone());
            let id = (self.callpaths.len() - 1) as CallpathId;
            self.callpath_ids.insert(st.regions.clone(), id);
            id
        } else {
            NO_CALLPATH
        };
    }

    pub(super) fn perf(&mut self, file: &BinFile, rec: &Record, enter: u64, exit: u64) {
        for (i, &(at_entry, at_exit)) in rec.perf.iter().enumerate() {
            let label = file
                .perf_labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("PAPI counter {i}"));
            let m = self.metrics.intern(&label);
            let rt = &mut self.rt;
            let series = *self.st.metric_index.entry(m).or_insert_with(|| {
                rt.metrics.push(MetricSamples {
                    metric: m,
                    ..Default::default()
                });
                rt.metrics.len() - 1
            });
            let s = &mut rt.metrics[series];
            let base = self.st.unresolved.time_base;
            s.time.extend([enter.wrapping_sub(base), exit.wrapping_sub(base)]);
            s.value.extend([at_entry as f64, at_exit as f64]);
        }
    }
}
