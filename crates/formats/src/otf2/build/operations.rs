//! Point-to-point, collective and metric events: blocking operations, requests posted and
//! completed (through the shared builder's
//! [`LocationRequests`](tracelogic_model::build::LocationRequests)), non-blocking collectives,
//! and what is left open when a rank's locations are read.

use super::*;

impl Builder<'_, '_> {
    /// A blocking send (`send`) or receive: one operation, completed by its own call.
    #[inline]
    pub(super) fn blocking(
        &mut self,
        st: &mut LocationState,
        here: Here,
        send: bool,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here { rank, slot, file, .. } = here;
        let (name, dir, role) = if send {
            ("MPI_Send", P2pDir::Send, "receiver")
        } else {
            ("MPI_Recv", P2pDir::Recv, "sender")
        };
        let call = self.current_call(st, here, name, t);
        let comm = self.comm(p.comm, rank, file, off)?;
        let peer = self.world(comm, p.peer, role, file, off)?;
        let row = P2pRow {
            post: call,
            complete: call,
            dir,
            peer,
            tag: p.tag as i32,
            comm: comm.0,
            bytes: p.length,
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
        Ok(())
    }

    /// A non-blocking send, completed now if its completion came first.
    #[inline]
    pub(super) fn isend(
        &mut self,
        st: &mut LocationState,
        here: Here,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let P2pPayload {
            peer: receiver,
            comm,
            tag,
            length,
            request,
        } = p;
        let call = self.current_call(st, here, "MPI_Isend", t);
        let comm = self.comm(comm, rank, file, off)?;
        let peer = self.world(comm, receiver, "receiver", file, off)?;
        let op = self.stage.p2p_len();
        let reqs = &mut self.requests[slot];
        let complete = match reqs.early_send_completions.take(request, loc) {
            Some(c) => c,
            None => {
                reqs.isends.insert(request, loc, op);
                NOT_COMPLETED
            }
        };
        let row = P2pRow {
            post: call,
            complete,
            dir: P2pDir::Send,
            peer,
            tag: tag as i32,
            comm: comm.0,
            bytes: length,
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
        Ok(())
    }

    /// A non-blocking send's completion.
    #[inline]
    pub(super) fn isend_complete(&mut self, st: &mut LocationState, here: Here, request: u64, t: Time) {
        let Here { slot, loc, .. } = here;
        let call = self.current_call(st, here, "MPI_Wait", t);
        let reqs = &mut self.requests[slot];
        match reqs.isends.take(request, loc) {
            Some(op) => self.stage.complete(&mut self.part.ranks[slot], op, call),
            None => reqs.early_send_completions.insert(request, loc, call),
        }
    }

    /// A non-blocking receive posted: its operation is appended now, in posting order, and
    /// completed by [`Builder::irecv`] (or removed if it never completes).
    #[inline]
    pub(super) fn irecv_request(&mut self, st: &mut LocationState, here: Here, request: u64, t: Time) {
        let Here { slot, loc, .. } = here;
        let call = self.current_call(st, here, "MPI_Irecv", t);
        let reqs = &mut self.requests[slot];
        let row = match reqs.early_recvs.take(request, loc) {
            Some(o) => P2pRow {
                post: call,
                complete: o.call,
                dir: P2pDir::Recv,
                peer: o.peer,
                tag: o.tag,
                comm: o.comm,
                bytes: o.length,
            },
            None => {
                reqs.irecvs.insert(request, loc, self.stage.p2p_len());
                P2pRow {
                    post: call,
                    complete: NOT_COMPLETED,
                    dir: P2pDir::Recv,
                    peer: ANY_SOURCE,
                    tag: ANY_TAG,
                    comm: COMM_WORLD,
                    bytes: 0,
                }
            }
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
    }

    /// A non-blocking receive completed: its operation, posted by the request's call.
    #[inline]
    pub(super) fn irecv(
        &mut self,
        st: &mut LocationState,
        here: Here,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let P2pPayload {
            peer: sender,
            comm,
            tag,
            length,
            request,
        } = p;
        let post = self.requests[slot].irecvs.take(request, loc);
        let name = if post.is_some() { "MPI_Wait" } else { "MPI_Irecv" };
        let call = self.current_call(st, here, name, t);
        let comm = self.comm(comm, rank, file, off)?;
        let peer = self.world(comm, sender, "sender", file, off)?;
        match post {
            Some(row) => {
                let received = (call, peer, tag as i32, comm.0, length);
                self.stage.receive(&mut self.part.ranks[slot], row, received);
            }
            None => self.requests[slot].early_recvs.insert(
                request,
                loc,
                OrphanRecv {
                    seq: off,
                    call,
                    peer,
                    tag: tag as i32,
                    comm: comm.0,
                    length,
                },
            ),
        }
        Ok(())
    }

    /// Calls left open at the end of a location end at its last event; the event count is
    /// checked against the definitions.
    pub(super) fn end_location(
        &mut self,
        st: &mut LocationState,
        index: usize,
        slot: usize,
        last_time: Time,
        events: &LocationEvents,
    ) {
        while let Some(frame) = st.stack.pop() {
            if let Some(c) = frame {
                self.part.counters.unclosed_calls += 1;
                self.stage.end_call(&mut self.part.ranks[slot], c, last_time);
            }
        }
        let announced = self.shared.defs.locations.items[index].number_of_events;
        if announced != 0 && announced != events.events_read() {
            let warning = format!(
                "{}: {} events read, the definitions announce {announced}",
                events.file_name(),
                events.events_read()
            );
            self.part.warnings.push((index as u32, warning));
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn collective(
        &mut self,
        here: Here,
        st: &mut LocationState,
        call: Option<CallIdx>,
        begin: Time,
        t: Time,
        (op, comm, root, sent, received): (u8, u32, u32, u64, u64),
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let comm = self.comm(comm, rank, file, off)?;
        let (part, stage) = (&self.part, &self.stage);
        let call_name = |c: CallIdx| part.functions.name(stage.func(&part.ranks[slot], c));
        let from_region = call.and_then(|c| tracelogic_model::CollectiveOp::from_name(call_name(c)));
        let op = from_region.unwrap_or_else(|| collective_from_enum(op));
        let call = match call {
            Some(c) => c,
            None => {
                let path = self.callpath(st);
                self.push_named_call(slot, op.mpi_name(), begin, t, path, loc)
            }
        };
        let root = match root {
            UNDEFINED_U32 => NO_ROOT,
            ROOT_SELF => rank,
            r if r > ROOT_SELF => NO_ROOT,
            r => self.world(comm, r, "root", file, off)?,
        };
        let (sent, received) = if !self.shared.score_p_bytes || comm.1.is_some() {
            (sent, received)
        } else {
            let c = self.communicator(comm.0);
            let me = || {
                if comm.0 == COMM_WORLD {
                    Some(rank as u64)
                } else {
                    c.members.iter().position(|&w| w == rank).map(|i| i as u64)
                }
            };
            let place = collective_bytes::Place {
                members: c.members.len() as u64,
                is_root: root == rank,
                me: matches!(op, CollectiveOp::Scan | CollectiveOp::Exscan)
                    .then(me)
                    .flatten(),
            };
            collective_bytes::buffer_bytes(op, place, sent, received)
        };
        self.part.ranks[slot].push_collective(call, op, comm.0, root, sent, received);
        Ok(())
    }

    pub(super) fn metric(
        &mut self,
        slot: usize,
        metric: u32,
        values: &[(u8, u64)],
        t: Time,
        file: &str,
        off: u64,
    ) -> Result<(), FormatError> {
        let defs = self.shared.defs;
        let class = defs
            .metric_classes
            .get(metric)
            .or_else(|| {
                defs.metric_instances
                    .get(metric)
                    .and_then(|i| defs.metric_classes.get(i.class))
            })
            .ok_or_else(|| {
                FormatError::at_offset(file, off, format!("Metric event refers to undefined metric {metric}"))
            })?;
        for (i, &(ty, raw)) in values.iter().enumerate() {
            let name = match class.members.get(i).and_then(|&m| defs.metric_members.get(m)) {
                Some(m) => defs.string(m.name).to_owned(),
                None => format!("metric {metric}[{i}]"),
            };
            let value = match ty {
                8 => raw as i64 as f64,
                10 => f64::from_bits(raw),
                _ => raw as f64,
            };
            let id = self.part.metrics.intern(&name);
            if id as usize == self.part.first_use.metrics.len() {
                self.part.first_use.metrics.push(self.at_location);
            }
            let rt = &mut self.part.ranks[slot];
            let series = *self.metric_series[slot].entry(id).or_insert_with(|| {
                rt.metrics.push(MetricSamples {
                    metric: id,
                    ..Default::default()
                });
                rt.metrics.len() - 1
            });
            rt.metrics[series].time.push(t);
            rt.metrics[series].value.push(value);
        }
        Ok(())
    }

    /// Requests still open when every location was read: receives completed without a seen
    /// request are posted by their completing call; the rest are counted for the warnings.
    pub(super) fn finish_requests(&mut self) {
        for (slot, reqs) in std::mem::take(&mut self.requests).into_iter().enumerate() {
            let mut early: Vec<(u16, OrphanRecv)> = reqs.early_recvs.into_all();
            early.sort_by_key(|(loc, o)| (*loc, o.seq));
            let rt = &mut self.part.ranks[slot];
            self.part.counters.uncompleted_receives += reqs.irecvs.len() as u64;
            let mut unreceived = reqs.cancelled_recvs;
            unreceived.extend(reqs.irecvs.into_all().into_iter().map(|(_, row)| row));
            rt.p2p.remove_rows(&unreceived);
            for (_, o) in early {
                rt.push_p2p(o.call, o.call, P2pDir::Recv, o.peer, o.tag, o.comm, o.length);
            }
            self.part.counters.unmatched_completions += reqs.early_send_completions.len() as u64;
        }
    }
}
