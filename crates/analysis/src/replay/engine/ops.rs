//! Operations completing in the replay: sends posted, point-to-point operations completed,
//! collective instances arrived at, completed and left.

use super::*;

impl Engine<'_> {
    pub(crate) fn post_send(&mut self, r: Rank, op: u32) {
        let plan = &self.plans[r as usize];
        let (to, _) = plan.send_to[op as usize];
        // A receiver of another process gets a copy of the injection start instead.
        let here = to != NONE && self.owned.contains(&to);
        let refs = u8::from(here) + u8::from(self.trace.ranks[r as usize].p2p.complete(op as usize) != NOT_COMPLETED);
        let eff = effective(
            self.table,
            self.trace.ranks[r as usize].p2p.bytes.at(op as usize) as f64,
        );
        let slot = self.slots.alloc(refs.max(1));
        self.out.emit(Instr::Post {
            r: self.at(r),
            slot,
            eff,
        });
        if to != NONE && !here {
            let bytes = self.trace.ranks[r as usize].p2p.bytes.at(op as usize);
            let at = self.out.now().slot(slot).to_vec();
            if let Some(d) = &mut self.dist {
                let p = d.process_of(to);
                d.outbox[p].push(Note::Sent {
                    sender: r,
                    send_op: op,
                    receiver: to,
                    bytes,
                    at,
                });
            }
        }
        if refs == 0 {
            self.slots.release(slot);
            return;
        }
        self.send_slot[r as usize][op as usize] = slot;
        if here && self.cursors[to as usize].block == Block::Recv(r, op) {
            self.cursors[to as usize].block = Block::Running;
            self.worklist.push_back(to);
        }
    }

    /// Complete op `op` of rank `r` at the current call; false if the rank must park.
    pub(crate) fn complete_op(&mut self, r: Rank, op: u32) -> bool {
        let trace = self.trace;
        let p2p = &trace.ranks[r as usize].p2p;
        match p2p.dir[op as usize] {
            P2pDir::Send => {
                let slot = self.send_slot[r as usize][op as usize];
                if slot == NONE {
                    return true;
                }
                let eff = effective(self.table, p2p.bytes.at(op as usize) as f64);
                self.out.emit(Instr::CompleteSend {
                    r: self.at(r),
                    slot,
                    eff,
                });
                self.slots.release(slot);
                true
            }
            P2pDir::Recv => {
                let (from, from_op) = self.plans[r as usize].recv_from[op as usize];
                if from == NONE {
                    self.warnings.unmatched_recvs += 1;
                    return true;
                }
                let cur = &mut self.cursors[r as usize];
                if cur.force_recv {
                    cur.force_recv = false;
                    return true;
                }
                let (slot, bytes) = if self.owned.contains(&from) {
                    let slot = self.send_slot[from as usize][from_op as usize];
                    let bytes = match slot {
                        NONE => 0,
                        _ => self.trace.ranks[from as usize].p2p.bytes.at(from_op as usize),
                    };
                    (slot, bytes)
                } else {
                    self.dist
                        .as_mut()
                        .and_then(|d| d.remote_sends.remove(&(from, from_op)))
                        .unwrap_or((NONE, 0))
                };
                if slot == NONE {
                    cur.block = Block::Recv(from, from_op);
                    return false;
                }
                let eff = effective(self.table, bytes as f64);
                self.out.emit(Instr::CompleteRecv {
                    r: self.at(r),
                    slot,
                    eff,
                });
                self.slots.release(slot);
                true
            }
        }
    }

    /// Rank `r` reaches collective instance `key`; true if it can leave at once.
    pub(crate) fn arrive(&mut self, r: Rank, key: (CommId, u32), op: CollectiveOp, bytes: u64) -> bool {
        let at = self.at(r);
        let (expected, local_expected, parts_expected) = match (self.comm_sizes.get(key.0 as usize), &mut self.dist) {
            (Some(&p), None) => (p, p, 0),
            (Some(&p), Some(d)) => {
                let c = key.0 as usize;
                if d.members[c].binary_search(&r).is_err() {
                    d.unreproducible(|| {
                        format!(
                            "rank {r} takes part in a collective of communicator {} it is not a member of",
                            key.0
                        )
                    });
                }
                (p, d.local_members[c], d.other_processes[c].len() as u32)
            }
            (None, _) => {
                self.warnings.unknown_communicators += 1;
                (1, 1, 0)
            }
        };
        let (inst, opened) = match self.instances.get_mut(&key) {
            Some(inst) => (inst, false),
            None => {
                let start = self.slots.alloc(1);
                self.out.emit(Instr::Open { r: at, slot: start });
                let inst = self.instances.entry(key).or_insert(Instance::new(
                    start,
                    expected,
                    local_expected,
                    parts_expected,
                    op,
                ));
                (inst, true)
            }
        };
        if inst.complete {
            return true;
        }
        if inst.op != op {
            self.warnings.mismatched_collectives += 1;
        }
        inst.arrived += 1;
        inst.bytes = inst.bytes.max(bytes);
        if !opened {
            // The first arrival's clock is the start already (its maximum with itself).
            self.out.emit(Instr::Join {
                r: at,
                slot: inst.start,
            });
        }
        if inst.parts_expected > 0 && !inst.sent && inst.arrived >= inst.local_expected {
            // This process's members are all in: the others get their latest clocks.
            inst.sent = true;
            let note = Note::Arrived {
                comm: key.0,
                seq: key.1,
                op: inst.op,
                bytes: inst.bytes,
                start: self.out.now().slot(inst.start).to_vec(),
            };
            if let Some(d) = &mut self.dist {
                for &p in &d.other_processes[key.0 as usize] {
                    d.outbox[p as usize].push(note.clone());
                }
            }
        }
        if inst.arrived >= inst.local_expected && inst.parts_in >= inst.parts_expected {
            self.complete_instance(key, false);
            true
        } else {
            inst.waiters.push(r);
            false
        }
    }

    pub(crate) fn complete_instance(&mut self, key: (CommId, u32), forced: bool) {
        let Some(inst) = self.instances.get_mut(&key) else {
            return;
        };
        let sched = schedule(inst.op, inst.expected, inst.bytes as f64);
        inst.steps = sched.steps;
        inst.effective_bytes = sched.steps * effective(self.table, sched.bytes_per_step);
        inst.complete = true;
        inst.forced = forced;
        for w in inst.waiters.drain(..) {
            self.cursors[w as usize].block = Block::Running;
            self.worklist.push_back(w);
        }
    }

    pub(crate) fn leave_collective(&mut self, r: Rank, key: (CommId, u32)) {
        let at = self.at(r);
        let Some(inst) = self.instances.get_mut(&key) else {
            return;
        };
        self.out.emit(Instr::Leave {
            r: at,
            slot: inst.start,
            steps: inst.steps,
            eff: inst.effective_bytes,
        });
        inst.consumed += 1;
        if !inst.forced && inst.consumed >= inst.local_expected {
            self.slots.release(inst.start);
            self.instances.remove(&key);
        }
    }
}
